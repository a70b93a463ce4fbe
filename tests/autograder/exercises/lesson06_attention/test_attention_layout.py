"""lesson06_attention.attention_layout and attention_inputs.multihead_layout: the multi-head
layout case, and the probe that names a .view only where contiguous copies pass."""

import pytest
import torch

from autograder.errors import GradingError
from autograder.exercises.lesson06_attention import attention as lesson
from autograder.exercises.lesson06_attention.attention_inputs import multihead_layout
from autograder.exercises.lesson06_attention.attention_layout import check_multihead_layout
from tests.autograder.catalogued import graded_mistake, mistake
from tools.catalogue.lesson06_attention.multi_head_layout import INPUTS_VIEWED
from tools.solutions import solution

pytestmark = pytest.mark.lesson06

S = "ScaledDotProductAttention"


def _values():
    return lesson.attention_values((2, 3), 4, 5, 3, 2, "cpu", mask="causal", seed=9)


def test_the_layout_keeps_the_numbers_and_merges_no_dimensions():
    """Same Q, K, V, stored as (B, L, H, d) and transposed: does .view(-1, L, d) raise on it
    (as on x.view(B, L, H, d).transpose(1, 2)) and reshape give the same numbers?"""
    values = _values()
    strided = multihead_layout(values)
    for name in "QKV":
        B, H, L, d = values[name].shape
        made = torch.zeros(B, L, H * d).view(B, L, H, d).transpose(1, 2)
        assert torch.equal(strided[name], values[name]) and strided[name].stride() == made.stride()
        with pytest.raises(RuntimeError, match="view size is not compatible"):
            strided[name].view(-1, *strided[name].shape[-2:])
    # the mask keeps its numbers, read through a transpose's strides (a .contiguous() copies)
    assert torch.equal(strided["mask"], values["mask"]) and not strided["mask"].is_contiguous()


@pytest.mark.parametrize("entry", INPUTS_VIEWED, ids=lambda e: f"{e.exercise}-{e.name}")
def test_a_view_on_the_leading_dimensions_is_named(entry):
    """Does grading record the layout's id for each catalogued .view answer (which passes on
    every contiguous input)?"""
    assert graded_mistake(entry.exercise, entry.name) == \
        f"{entry.exercise}/view-on-multihead-layout"


def _check(function, values):
    lesson.check_attention(function, lesson.SDPA, values)


def test_a_view_error_on_contiguous_inputs_too_is_not_blamed_on_the_layout():
    """A .view that fails on contiguous copies as well (wrong sizes): the probe proves nothing
    about the layout, so is the first error kept, with no layout id?"""
    class WrongView(torch.autograd.Function):
        @staticmethod
        def forward(ctx, Q, K, V, scale, mask=None):
            return Q.transpose(-2, -1).view(-1)

        @staticmethod
        def backward(ctx, grad_output):
            return None, None, None, None, None

    with pytest.raises(GradingError) as caught:
        check_multihead_layout(_check, WrongView, S, _values(), "case")
    assert caught.value.mistake != f"{S}/view-on-multihead-layout"
    assert caught.value.case.endswith("Q, K, V laid out as x.view(B, L, H, d).transpose(1, 2)")
    assert str(caught.value).splitlines()[0].count("(with ") == 1


def test_the_solution_passes_the_layout():
    check_multihead_layout(_check, solution(S), S, _values(), "case")


def test_bmm_on_views_passes_on_contiguous_inputs():
    """The catalogued answer is right on contiguous inputs: the layout alone breaks it."""
    _check(mistake(S, "scores by torch.bmm on Q.view(-1, Lq, d)"), _values())
