"""Lesson 12's transfer exercise, PerSampleClippedLinear: what the catalogue harness does not
already cover."""

import pytest
import torch

from autograder.errors import GradingError
from autograder.exercises import EXERCISES
from autograder.exercises.per_sample_clipping import (clip_factors, clipping_grad_output,
                                                      clipping_values, expected_gradients)
from tools.catalogue import lesson12_clipping
from tools.solutions import solution

pytestmark = pytest.mark.lesson12


def test_the_reference_is_the_definition_and_the_identity_holds():
    """Does the reference build every per-sample outer product, and is ||g x^T|| = ||g|| ||x||
    (the shortcut the learner is asked to find) true of it?"""
    values = clipping_values(8, 5, 3, "cpu")
    grad_output = clipping_grad_output(8, 3, "cpu")
    x, weight = values["x"], values["weight"]
    outer = torch.einsum("no,ni->noi", grad_output, x)
    norms = torch.linalg.vector_norm(outer, dim=(1, 2))
    torch.testing.assert_close(norms, grad_output.norm(dim=1) * x.norm(dim=1))
    factors = clip_factors(norms, 1.0)
    assert factors[1] == 1 and factors[2] == 1  # a zero x row, a zero grad_output row
    assert (factors < 1).any() and (factors == 1).sum() > 2  # clipped and unclipped samples
    expected = expected_gradients(x, weight, 1.0, grad_output)
    torch.testing.assert_close(expected["weight"], (factors[:, None, None] * outer).sum(0))


def test_the_lesson_states_the_contract_and_its_solution_passes():
    """Is the exercise graded after the lesson's other three, and does the solution pass?"""
    names = [name for name, e in EXERCISES.items() if e.lesson == "12_surgery"]
    assert names == ["GradientReversal", "ClipGradientNorm", "SoftThreshold",
                     "PerSampleClippedLinear"]
    EXERCISES["PerSampleClippedLinear"].battery(solution("PerSampleClippedLinear"),
                                                torch.device("cpu"))


def test_the_public_style_epsilon_is_within_tolerance_but_an_unclipped_sum_is_not():
    """Opacus adds 1e-6 to the norm: is that still graded correct, while no clipping at all
    fails with its own hint?"""
    ghost = next(u for u in lesson12_clipping.UNUSUAL if "Opacus" in u.name).load()
    EXERCISES["PerSampleClippedLinear"].battery(ghost, torch.device("cpu"))
    plain = next(m for m in lesson12_clipping.MISTAKES if m.name == "no clipping").load()
    with pytest.raises(GradingError, match="unclipped"):
        EXERCISES["PerSampleClippedLinear"].battery(plain, torch.device("cpu"))
