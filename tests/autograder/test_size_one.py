"""Rule 1, dimensions of size 1: a backward that squeezes its gradient is caught on the shapes
derived from the domain's typical inputs (every dimension of one size cut to 1) and on those a
domain declares; a correct one passes."""

import torch

from autograder.domain import Domain
from autograder.function_contract import rule_reference
from autograder.narrowed import narrowed
from autograder.size_one import check_size_one, size_one_cases
from autograder.spec import Spec
from tests.autograder.rule_answers import CPU, SQUARE, SQUARE_DOMAIN, function

SQUEEZED = function("Square", "ctx.save_for_backward(x)\nreturn x * x",
                    "x, = ctx.saved_tensors\nreturn (2 * x * g).squeeze()")
RIGHT = function("Square", "ctx.save_for_backward(x)\nreturn x * x",
                 "x, = ctx.saved_tensors\nreturn 2 * x * g")


def test_the_derived_shapes_cut_one_size_at_a_time():
    """Linear's x (3, 4), weight (5, 4), bias (5,): each size cut to 1 everywhere it occurs,
    so the shapes still agree; a size the reference refuses is left out."""
    spec_values = {"x": torch.randn(3, 4), "weight": torch.randn(5, 4), "bias": torch.randn(5)}
    linear = Domain(Spec("Linear", ("x", "weight", "bias"),
                         lambda x, weight, bias: x @ weight.T + bias),
                    lambda device, dtype=torch.float64, seed=0: spec_values)
    shapes = [tuple(tuple(v.shape) for v in case.values())
              for case in narrowed(linear, spec_values, 1)]
    assert shapes == [((1, 4), (5, 4), (5,)), ((3, 1), (5, 1), (5,)), ((3, 4), (1, 4), (1,))]
    assert [tuple(c["x"].shape) for c in size_one_cases(SQUARE_DOMAIN, CPU)] == [(1, 4), (3, 1)]


def test_a_squeezed_gradient_is_caught(raises_hint):
    with raises_hint("tried dimensions of size 1: x of shape (1, 4)") as info:
        check_size_one(SQUARE_DOMAIN, SQUEEZED, CPU)
    assert str(info.value).splitlines()[0].endswith(rule_reference("values"))


def test_a_correct_answer_passes():
    check_size_one(SQUARE_DOMAIN, RIGHT, CPU)


def test_a_declared_case_is_tried_where_none_is_derived(raises_hint):
    declared = Domain(SQUARE, SQUARE_DOMAIN.values, size_one_derived=False,
                      size_one=lambda device, dtype: {"x": torch.randn(2, 1, 3, dtype=dtype)})
    assert "size one" in declared.properties()
    with raises_hint("x of shape (2, 1, 3)"):
        check_size_one(declared, SQUEEZED, CPU)
    check_size_one(declared, RIGHT, CPU)
    off = Domain(SQUARE, SQUARE_DOMAIN.values, size_one_derived=False)
    assert "size one" not in off.properties()


RAISES_AT_ONE = function("Square", "ctx.save_for_backward(x)\nreturn x * x",
                         "x, = ctx.saved_tensors\nx.squeeze().shape[1]  # a dimension of 1 gone\n"
                         "return 2 * x * g")


def test_an_error_raised_only_at_size_one_is_named_so(raises_hint):
    """Issue 68's instructor trial: an answer that raises only where a dimension has size 1
    (a .squeeze()) was grouped as raised:IndexError. Is it the size-1 case's mistake, its first
    line saying what was seen: the error at size 1, and the same call running at size 2?"""
    with raises_hint("Square.backward raised IndexError where a dimension has size 1 (x of "
                     "shape (1, 4)), and the same call runs with that dimension of size 2 (x "
                     "of shape (2, 4))") as info:
        check_size_one(SQUARE_DOMAIN, RAISES_AT_ONE, CPU)
    assert info.value.mistake == "Square/fails-on-size-one"
    assert "What it raised: tuple index out of range" in str(info.value).splitlines()[0]


def test_an_error_raised_at_every_size_is_left_as_it_is():
    """The same error at size 2 too proves nothing about size 1: the learner's own words stay."""
    import pytest

    from autograder.errors import GradingError

    everywhere = function("Square", "ctx.save_for_backward(x)\nreturn x * x",
                          "x, = ctx.saved_tensors\nx.shape[5]\nreturn 2 * x * g")
    with pytest.raises(GradingError) as info:
        check_size_one(SQUARE_DOMAIN, everywhere, CPU)
    assert not (info.value.mistake or "").endswith("fails-on-size-one")
