"""lesson06_attention.attention_saves: a saved copy of an input or of the output is named, in
its dtype or another, transposed or not; the inputs and output themselves, and what forward
computed, are not."""

import pytest
import torch

from autograder.checks import make_inputs, run_forward
from autograder.exercises.lesson06_attention import attention as lesson
from autograder.exercises.lesson06_attention.attention_inputs import multihead_layout
from autograder.exercises.lesson06_attention.attention_saves import check_saves_no_copy
from tests.autograder.catalogued import mistake
from tools.solutions import solution

pytestmark = pytest.mark.lesson06

S = "ScaledDotProductAttention"


def _forward(function, values):
    return run_forward(function, lesson.SDPA, make_inputs(values))


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_the_solution_saves_no_copy(dtype):
    """Do Q, K, V and P, saved as they are, pass on both layouts?"""
    values = lesson.attention_values((2, 3), 4, 5, 3, 2, "cpu", mask="causal", dtype=dtype)
    for laid in (values, multihead_layout(values)):
        check_saves_no_copy(S, _forward(solution(S), laid), laid)


def test_a_transposed_copy_of_an_input_is_named(raises_hint):
    """Is K.transpose(-2, -1).contiguous(), saved for backward's products, named as a copy of
    the input K?"""
    values = lesson.attention_values((2,), 4, 5, 3, 2, "cpu", mask="causal")
    with raises_hint("saved a copy of its transposed input K"):
        check_saves_no_copy(S, _forward(mistake(S, "saves K transposed and made contiguous"),
                                        values), values)


def test_a_wider_copy_of_the_output_is_named(raises_hint):
    """Is a float64 copy of a float32 output named, with both dtypes?"""
    name = "MemoryEfficientAttention"
    values = lesson.attention_values((2,), 4, 5, 3, 2, "cpu", mask="causal", dtype=torch.float32)
    forward = run_forward(mistake(name, "saves a float64 copy of the output for accuracy"),
                          lesson.MEMORY_EFFICIENT, make_inputs(values))
    with raises_hint("saved a float64 copy of its float32 output"):
        check_saves_no_copy(name, forward, values)
