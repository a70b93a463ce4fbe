"""Lesson 03's StraightThroughSoftmax: near ties that dividing by tau rounds together, and the
one-hot answers they tell apart (argmax of logits / tau or logits * (1 / tau), topk(1)), with
the stable ids grading records."""

import pytest
import torch

from autograder.exercises.lesson03_straight_through.straight_through_softmax_values import (
    _SCALED_TIES, near_ties)
from tests.autograder.catalogued import graded_mistake, mistake
from tests.autograder.exercises.battery import run

pytestmark = pytest.mark.lesson03


@pytest.mark.parametrize("dtype, tau", list(_SCALED_TIES), ids=str)
def test_each_scaled_tie_collides_as_listed(dtype, tau):
    """Is each listed pair one ulp apart, argmax of the logits picking the upper, while
    logits / tau (first pair) and logits * (1 / tau) (second, or the same) tie them?"""
    made = near_ties("cpu", dtype, tau)
    rows = made["logits"][-len(_SCALED_TIES[dtype, tau]):]
    assert torch.equal(rows[:, 1], torch.nextafter(rows[:, 0], 2 * rows[:, 0]))
    assert rows.argmax(-1).tolist() == [1] * len(rows)
    divided, multiplied = (rows / tau).argmax(-1), (rows * (1 / tau)).argmax(-1)
    assert divided[0] == 0 and multiplied[-1] == 0


def test_the_original_near_ties_keep_their_rows():
    """Do the rows before the scaled ties stay where the other checks' messages name them, and
    does tau = 0.5, a power of two, get no scaled tie?"""
    assert near_ties("cpu", torch.float64)["logits"].shape == (5, 4)
    assert near_ties("cpu", torch.float64, tau=10.0)["logits"][5, 2] == 1 + 1e-9


@pytest.mark.parametrize("entry, hint, expected", [
    ("argmax of z = logits / tau, computed once for both",
     "StraightThroughSoftmax's output picks another maximum in row [5] (logits 0.704, "
     "0.7040000000000001, 0.2, -1.0, tau=0.7): it is the one-hot of argmax over logits / tau or "
     "logits * (1 / tau); dividing rounds logits this close to equal values, of which argmax "
     "picks the first; take argmax of the logits themselves",
     "StraightThroughSoftmax/argmax-of-scaled-logits"),
    ("argmax of logits * (1 / tau)", "it is the one-hot of argmax over logits / tau or "
     "logits * (1 / tau)", "StraightThroughSoftmax/argmax-of-scaled-logits"),
    ("one-hot of topk(1)", "StraightThroughSoftmax's output puts its 1 at another of the tied "
     "maxima in row [1]: it is the one-hot of topk(1)'s first index, and topk and sort do not "
     "promise which of tied values comes first", "StraightThroughSoftmax/topk-or-sort-on-ties"),
])
def test_a_one_hot_of_another_argmax_is_named(entry, hint, expected, raises_hint):
    """Is each named where the logits it took tell it from argmax(logits), and graded with its
    id, not as a softmax's argmax?"""
    with raises_hint(hint):
        run("StraightThroughSoftmax", mistake("StraightThroughSoftmax", entry))
    assert graded_mistake("StraightThroughSoftmax", entry) == expected


def test_logits_divided_in_place_fail_on_a_battery_call():
    """Does grading catch a backward that divides the saved logits in place on the battery's
    own first call (the per-call watch, autograder.untouched), not only in the expanded-layout
    domain case?"""
    from autograder.grading import classified_verdict

    verdict = classified_verdict("StraightThroughSoftmax", mistake(
        "StraightThroughSoftmax", "backward divides the saved logits in place"))
    assert not verdict.passed
    assert verdict.mistake == "StraightThroughSoftmax/writes-input"
    assert ("modified its input logits in place on one of the grader's calls (logits of shape "
            "(5, 5)") in verdict.message.splitlines()[0]
