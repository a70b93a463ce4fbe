"""autograder.predictions: a prediction is judged on what it says, not how it is spelled."""

import math

import pytest
import torch

from autograder.predictions import compare, compare_all, same_answer, written


@pytest.mark.parametrize("predicted, observed", [
    ((0, 1, 2, 2, 4), [0, 1, 2, 2, 4]),                 # a tuple for PyTorch's list
    ([1, 11, 0, 0], [1.0, 11.0, 0.0, 0.0]),             # ints for floats
    (0.1353, 0.13530000001),                            # within the tolerance
    ("0", "0"),                                         # text (lesson 03's silent 0)
    (0.0, "0"),                                         # a number for text that reads as one
    ("0", 0.0),                                         # and the other way round
    (math.nan, "nan"),                                  # lesson 03: "nan", "0" or "positive"
    ("1", 1),                                           # text that reads as a number is one
    ("One Of Them", " one of  them"),                   # case and spacing
    (([3, 1], 8.0), ((3, 1), 8)),                       # nested
    ("a", {"a"}),                                       # a set of one: the member alone
    (["c", "a"], {"a", "c"}),                           # a set: any order
    ({"x": (1, 2)}, {"x": [1, 2]}),                     # a mapping
    ([2.0, 2.0], torch.tensor([2.0, 2.0])),             # a tensor read as its list
    (math.nan, float("nan")),                           # nan is the answer
    (False, False),
])
def test_the_same_answer_however_it_is_written(predicted, observed):
    assert same_answer(predicted, observed)


@pytest.mark.parametrize("predicted, observed", [
    ((0, 1, 2, 2), [0, 1, 2, 2, 4]),                    # one entry short
    (0.135, 0.185),
    ("zero", "not zero"),
    ("a", {"a", "c"}),                                  # half of the set
    (["a", "b"], {"a"}),                                # more than the set
    (1, True),                                          # a number is not a yes
    (0, False),
    ("one", 1),                                         # a word is not a number
    (0.0, "positive"),
    ("0", False),                                       # a number as text is not a no
    ("0.5", 0.0),
    (1e-20, 0.0),                                       # tiny is not zero (lesson 01's point)
    ([1, 2], {"x": 1}),
])
def test_a_different_answer_is_not_the_same(predicted, observed):
    assert not same_answer(predicted, observed)


def test_a_prediction_of_the_wrong_kind_never_raises():
    """A learner's typo must give ✗, not a traceback in the middle of a lesson."""
    assert not same_answer(object(), 1.0)
    assert not same_answer([object()], [1.0])


def test_the_tolerance_can_be_widened_for_a_rough_estimate():
    assert not same_answer(0.74, 0.743)
    assert same_answer(0.74, 0.743, abs_tol=0.05)


def test_a_cell_shows_its_answers_only_once_every_prediction_is_written():
    assert written(1, "a", {"x": 0, "y": False})
    assert not written(1, None)
    assert not written({"x": 0, "y": None})
    assert not written("  ") and not written((None, None)) and not written([1, None])
    assert written((0, 0)) and written([])


def test_compare_withholds_the_answer_until_a_prediction_is_written(capsys):
    compare("f''(1)", None, 42.0)
    compare("f''(1)", 42, 42.0)
    compare("runs", "yes", "no", who="torch.compile", if_wrong="read the explanation below")
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "f''(1): no prediction written: write yours, then run this again"
    assert "42.0" not in lines[0]
    assert lines[1] == "f''(1): you said 42, PyTorch: 42.0  ✓"
    assert lines[2] == "runs: you said 'yes', torch.compile: 'no'  ✗ read the explanation below"


def test_compare_all_prints_a_table_and_hides_what_was_not_predicted(capsys):
    compare_all({"x.grad": (2, 3), "y.grad": None}, {"x.grad": (2, 3), "y.grad": (4,)})
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("x.grad  (2, 3)") and lines[0].endswith("✓ as you predicted")
    assert lines[1].startswith("y.grad  ?") and "(4,)" not in lines[1]
