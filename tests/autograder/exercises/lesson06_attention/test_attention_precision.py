"""lesson06_attention.attention_precision: the probe that names a tensor kept for backward in
a narrower dtype than the inputs, only where its rounding explains the failure."""

import pytest
import torch

from autograder.exercises.lesson06_attention import attention as lesson
from autograder.exercises.lesson06_attention.attention_precision import (float32_precision,
                                                                        narrow_saves)
from tools import catalogue
from tools.catalogue.lesson06_attention.answers import MEMORY, SDPA
from tools.solutions import solution

pytestmark = pytest.mark.lesson06

M = "MemoryEfficientAttention"
FLOAT32_L = ("ctx.save_for_backward(Q, K, V, output, lse.squeeze(-1), mask)",
             "ctx.save_for_backward(Q, K, V, output, lse.squeeze(-1).float(), mask)")


def _stable_values():
    """check_stable's inputs: float64 scores in the thousands, where a float32 L shows."""
    return lesson.attention_values((2,), 4, 6, 4, 3, "cpu", mask="causal", seed=21,
                                   magnitude=6.0, scale=60.0)


def _probe(function, spec=lesson.MEMORY_EFFICIENT):
    return narrow_saves(function, spec, _stable_values(), lesson.attention_reference)


def test_a_float32_log_sum_exp_for_float64_inputs_is_named():
    hint = _probe(catalogue.load(M, catalogue.edit(MEMORY, FLOAT32_L)))
    assert hint.startswith(f"{M} keeps its log-sum-exp in float32 for float64 inputs")


def test_nothing_narrower_saved_is_not_named():
    assert _probe(solution(M)) is None


def test_a_narrow_log_sum_exp_beside_a_wrong_backward_is_not_blamed():
    """With L in float32 and dS = P * dP, the gradients are wrong far beyond float32's
    rounding: is the probe silent, so that the row-sum hint stands?"""
    wrong = catalogue.edit(MEMORY, FLOAT32_L, (
        "grad_S = P * (grad_P - (grad_output * output).sum(dim=-1, keepdim=True))",
        "grad_S = P * grad_P"))
    assert _probe(catalogue.load(M, wrong)) is None


def test_another_narrow_tensor_is_named_by_its_shape():
    """Is P kept in float32 for float64 inputs (and cast back in backward) named by its shape,
    without a claim about a log-sum-exp?"""
    narrow_p = catalogue.edit(
        SDPA, ("ctx.save_for_backward(Q, K, V, P)",
               "ctx.save_for_backward(Q, K, V, P.float())"),
        ("Q, K, V, P = ctx.saved_tensors", "Q, K, V, P = ctx.saved_tensors\n        P = P.double()"))
    hint = _probe(catalogue.load("ScaledDotProductAttention", narrow_p), lesson.SDPA)
    assert hint.startswith("ScaledDotProductAttention keeps a tensor of shape (2, 4, 6) in "
                           "float32 for float64 inputs")


# float32_precision: a step in float32 that no saved tensor shows (softmax(dtype=float32) cast
# back), named only where float32's rounding explains the whole error
SOFTMAX_IN_FLOAT32 = ("P = torch.softmax(scores, dim=-1)",
                      "P = torch.softmax(scores, dim=-1, dtype=torch.float32).to(scores.dtype)")


def _float32_probe(function, dtype=None):
    values = lesson.attention_values((2,), 4, 6, 4, 3, "cpu", mask="causal", seed=3,
                                     **({"dtype": dtype} if dtype else {}))
    return float32_precision(function, lesson.SDPA, values, lesson.attention_reference)


def test_a_softmax_in_float32_for_float64_inputs_is_named():
    hint = _float32_probe(catalogue.load("ScaledDotProductAttention",
                                         catalogue.edit(SDPA, SOFTMAX_IN_FLOAT32)))
    assert "right only to float32's precision" in hint and "computed in float32?" in hint


def test_float32_precision_is_silent_on_the_solution_and_on_float32_inputs():
    wrong = catalogue.load("ScaledDotProductAttention", catalogue.edit(SDPA, SOFTMAX_IN_FLOAT32))
    assert _float32_probe(solution("ScaledDotProductAttention")) is None
    assert _float32_probe(wrong, torch.float32) is None


def test_float32_precision_does_not_blame_a_wrong_backward():
    no_row_sum = catalogue.load("ScaledDotProductAttention", catalogue.edit(
        SDPA, ("grad_S = P * (grad_P - (grad_P * P).sum(dim=-1, keepdim=True))",
               "grad_S = P * grad_P")))
    assert _float32_probe(no_row_sum) is None
