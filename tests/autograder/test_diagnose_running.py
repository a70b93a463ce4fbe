"""autograder.diagnose inside a running battery: the value comparison's proven facts carry the
running exercise's id, though no caller of the battery named it."""

import pytest
import torch

from autograder.diagnose import diagnose_gradient
from autograder.errors import GradingError
from autograder.grading import classified_verdict
from autograder.precision import precision_findings_last, running_exercise
from tools.solutions import cells, namespace


def test_running_exercise_names_the_ids():
    """Does a comparison that names no exercise take the id of the battery it runs in, and
    none outside one?"""
    expected = torch.arange(1.0, 7.0, dtype=torch.float64)
    assert running_exercise() == ""
    with pytest.raises(GradingError) as outside:
        diagnose_gradient("x", -expected, expected)
    assert outside.value.mistake == ""
    with pytest.raises(GradingError) as inside, precision_findings_last("Square"):
        assert running_exercise() == "Square"
        diagnose_gradient("x", -expected, expected)
    assert inside.value.mistake == "Square/wrong-gradient-sign"
    with pytest.raises(GradingError) as own, precision_findings_last("Square"):
        diagnose_gradient("x", -expected, expected, exercise_name="Outer")
    assert own.value.mistake == "Outer/wrong-gradient-sign"  # the caller's name wins


def _edited(exercise: str, lesson: str, old: str, new: str):
    """``exercise`` as the lesson's solution with ``old`` replaced by ``new`` in its cells."""
    sources = cells(lesson)
    assert any(old in source for source in sources), f"{old!r} not in {lesson}'s answers"
    return namespace(lesson, [source.replace(old, new) for source in sources])[exercise]


# The instructor trial of issue 48: three proven mistakes that insight filed as unproven.
PLANTED = [
    pytest.param("SignSTE", "03_ste", "return grad_output  # identity surrogate",
                 "return -grad_output", "SignSTE/wrong-gradient-sign",
                 marks=pytest.mark.lesson03, id="SignSTE-sign"),
    pytest.param("RoundSTE", "03_ste",
                 "return grad_output  # the identity surrogate", "return 2 * grad_output",
                 "RoundSTE/gradient-off-by-a-factor", marks=pytest.mark.lesson03,
                 id="RoundSTE-factor"),
    pytest.param("ReversibleCoupling", "05_checkpointing", "return x1.grad, x2.grad, None, None",
                 "return x1.grad, x2.grad * 0, None, None", "ReversibleCoupling/zero-gradient",
                 marks=pytest.mark.lesson05, id="ReversibleCoupling-zero"),
]


@pytest.mark.parametrize("exercise, lesson, old, new, expected", PLANTED)
def test_real_battery_names_the_value_mistake(exercise, lesson, old, new, expected):
    """Does a real battery grade a wrong sign, a constant factor and a zero gradient with the
    ids the README promises, not as an unproven wrong value?"""
    verdict = classified_verdict(exercise, _edited(exercise, lesson, old, new))
    assert not verdict.passed
    assert verdict.mistake == expected, verdict.message
