"""Every battery is built from its contract: each input alone, and the edges it declares."""

import torch
import pytest

from autograder.contract import EACH_INPUT_ALONE, check_each_input_alone, recording
from autograder.checks import Spec
from autograder.errors import GradingError
from autograder.exercises import EXERCISES
from tools.solutions import solution


@pytest.mark.parametrize("name", list(EXERCISES))
def test_battery_runs_each_input_alone_its_contract_edges_and_its_domain(name, monkeypatch):
    """Does grading check each input alone, every edge case its contract declares, and every
    property its domain implies?"""
    monkeypatch.setenv("AUTOGRADER_DEVICE", "cpu")
    exercise = EXERCISES[name]
    with recording() as ran:
        exercise.run(solution(name))
    assert EACH_INPUT_ALONE in ran
    assert exercise.contract, f"{name} declares no edge cases of its contract"
    missing = [edge for edge in exercise.contract if edge not in ran]
    assert not missing, f"{name}'s battery never checks {missing}"
    assert exercise.domain is not None, f"{name} declares no domain"
    skipped = [p for p in exercise.domain.properties() if f"domain: {p}" not in ran]
    assert not skipped, f"{name}'s grading skips {skipped}, which its domain implies"


AFFINE = Spec("Affine", ("x", "weight", "bias"), lambda x, weight, bias: x * weight + bias)


def _affine(gate: str, none_for_frozen: bool = True):
    class Affine(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, weight, bias):
            ctx.save_for_backward(x, weight)
            return x * weight + bias

        @staticmethod
        def backward(ctx, grad_output):
            x, weight = ctx.saved_tensors
            needs = ctx.needs_input_grad
            grad_x = grad_output * weight if eval(gate) or not none_for_frozen else None
            grad_weight = grad_output * x if needs[1] or not none_for_frozen else None
            return grad_x, grad_weight, grad_output if needs[2] else None

    return Affine


def _values():
    return {name: torch.randn(4, dtype=torch.float64, generator=torch.Generator().manual_seed(i))
            for i, name in enumerate(AFFINE.input_names)}


def test_a_gate_on_the_wrong_entry_is_named(raises_hint):
    """Is grad_x gated on needs_input_grad[1] named, since the probe with every input proves it?"""
    with raises_hint("it decides whether to compute grad_x from another input's entry of "
                     "ctx.needs_input_grad (entry 0 belongs to x)"):
        check_each_input_alone(_affine("needs[1]"), AFFINE, _values())


def test_right_gates_pass_and_frozen_inputs_may_be_required_none():
    """Does a correct backward pass, and is a gradient for a frozen input caught when asked?"""
    check_each_input_alone(_affine("needs[0]"), AFFINE, _values(), frozen_get_none=True)
    check_each_input_alone(_affine("needs[0]", none_for_frozen=False), AFFINE, _values())
    with pytest.raises(GradingError, match="returned a gradient for weight although only x"):
        check_each_input_alone(_affine("needs[0]", none_for_frozen=False), AFFINE, _values(),
                               frozen_get_none=True)


def test_a_gate_on_the_other_input_s_entry_is_named_when_frozen_inputs_get_none(raises_hint):
    """With None required for a frozen input, is grad_weight gated on x's entry named, since
    weight alone then gets None (its own entry is never read)?"""
    class Affine(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, weight, bias):
            ctx.save_for_backward(x, weight)
            return x * weight + bias

        @staticmethod
        def backward(ctx, grad_output):
            x, weight = ctx.saved_tensors
            needs = ctx.needs_input_grad
            return (grad_output * weight if needs[0] else None,
                    grad_output * x if needs[0] else None, grad_output if needs[2] else None)

    with raises_hint("it decides whether to compute grad_weight from another input's entry of "
                     "ctx.needs_input_grad (entry 1 belongs to weight)"):
        check_each_input_alone(Affine, AFFINE, _values(), frozen_get_none=True)
