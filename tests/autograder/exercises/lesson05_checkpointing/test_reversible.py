"""Lesson 05's transfer exercise, ReversibleCoupling: the inversion backward relies on, and a
backward that records it under grad."""

import pytest
import torch
from torch import nn

from autograder.exercises.lesson05_checkpointing.reversible import coupling
from tests.autograder.catalogued import graded_mistake

pytestmark = pytest.mark.lesson05


def test_reconstruction_recovers_the_inputs():
    """Does inverting the coupling give back x1 and x2 (to rounding), as backward relies on?"""
    f, g = nn.Linear(4, 4, dtype=torch.float64), nn.Tanh()
    x1, x2 = torch.randn(2, 3, 4, dtype=torch.float64)
    with torch.no_grad():
        y1, y2 = coupling(x1, x2, f, g)
        back2 = y2 - g(y1)
        back1 = y1 - f(back2)
    assert torch.allclose(back1, x1, rtol=0, atol=1e-14)
    assert torch.allclose(back2, x2, rtol=0, atol=1e-14)


def test_a_recorded_inversion_is_named():
    """ReversibleCoupling: a backward that rebuilds x1 and x2 under grad and differentiates with
    respect to them adds f's vector-Jacobian product to x2's gradient; the probe names it."""
    assert graded_mistake("ReversibleCoupling", "records the inversion under grad and "
                          "differentiates with respect to the rebuilt x1 and x2") \
        == "ReversibleCoupling/records-inversion"


@pytest.mark.parametrize("name, rebuilt", [
    ("rebuilds x1 as y1 + f(x2), the inverse's sign wrong", "x1"),
    ("rebuilds x2 as y2 + g(y1), the inverse's sign wrong", "x2")])
def test_an_inverse_with_the_wrong_sign_is_named_by_the_input_it_rebuilds(name, rebuilt):
    """Is an inverse that adds where it should subtract named by the input it rebuilt wrong
    (from what the recomputation fed f and g), not left a wrong gradient of unproven cause?"""
    from autograder.grading import classified_verdict
    from tests.autograder.catalogued import mistake

    verdict = classified_verdict("ReversibleCoupling", mistake("ReversibleCoupling", name))
    assert verdict.mistake == "ReversibleCoupling/wrong-inverse"
    assert verdict.message.startswith(f"ReversibleCoupling.backward rebuilt {rebuilt} wrong")
