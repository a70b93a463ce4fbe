"""Lesson 12's transfer exercise, PerSampleClippedLinear: what the catalogue harness does not
already cover."""

import pytest
import torch

from autograder.errors import GradingError
from autograder.exercises import EXERCISES
from autograder.exercises.lesson12_surgery.per_sample_clipping import (clip_factors,
                                                                       clipping_grad_output,
                                                                       clipping_values,
                                                                       expected_gradients)
from tools.catalogue.lesson12_surgery import per_sample_clipped_linear
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


def test_the_public_style_epsilon_fails_at_a_small_max_norm_and_an_unclipped_sum_too():
    """Issue 37: Opacus adds 1e-6 to the norm, a relative error of 1e-6 / norm, within a
    tolerance of 1e-5 at max_norm 1; the clipped samples are graded at 1e-9 of the size of
    their terms, so it is named at max_norm 1, and an eps of 1e-10 (a relative 1e-7 at the
    battery's and the domain's smallest max_norm, 1e-4) there. And no clipping at all has its
    own hint?"""
    exercise = EXERCISES["PerSampleClippedLinear"]
    assert exercise.domain.constants["max_norm"].low == 1e-4
    ghost = next(m for m in per_sample_clipped_linear.MISTAKES if "Opacus" in m.name).load()
    with pytest.raises(GradingError, match="an eps of 1e-06"):
        exercise.battery(ghost, torch.device("cpu"))
    tiny = next(m for m in per_sample_clipped_linear.MISTAKES if "1e-10" in m.name).load()
    with pytest.raises(GradingError, match=r"an eps of 1e-10 .*max_norm=0\.0001"):
        exercise.battery(tiny, torch.device("cpu"))
    plain = next(m for m in per_sample_clipped_linear.MISTAKES if m.name == "no clipping").load()
    with pytest.raises(GradingError, match="unclipped"):
        EXERCISES["PerSampleClippedLinear"].battery(plain, torch.device("cpu"))
