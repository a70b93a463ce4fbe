"""Every battery is built from its contract: each input alone, and the edges it declares.
(That every exercise's battery runs them on its solution is test_catalogue's
test_solution_passes_grading_and_self_check, which grades it once.)"""

import torch
import pytest

from autograder.contract import check_each_input_alone
from autograder.checks import Spec
from autograder.errors import GradingError
from autograder.function_contract import rule_reference


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
                     "ctx.needs_input_grad: which entry is x's?") as info:
        check_each_input_alone(_affine("needs[1]"), AFFINE, _values())
    assert str(info.value).splitlines()[0].endswith(rule_reference("gradients"))


def test_right_gates_pass_and_frozen_inputs_may_be_required_none():
    """Does a correct backward pass, and is a gradient for a frozen input caught when asked?"""
    check_each_input_alone(_affine("needs[0]"), AFFINE, _values(), frozen_get_none=True)
    check_each_input_alone(_affine("needs[0]", none_for_frozen=False), AFFINE, _values())
    with pytest.raises(GradingError,
                       match="returned a gradient for weight although only x") as info:
        check_each_input_alone(_affine("needs[0]", none_for_frozen=False), AFFINE, _values(),
                               frozen_get_none=True)
    assert str(info.value).splitlines()[0].endswith(rule_reference("gradients"))


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
                     "ctx.needs_input_grad: which entry is weight's?"):
        check_each_input_alone(Affine, AFFINE, _values(), frozen_get_none=True)


def test_a_gradient_for_an_input_needing_none_is_asked_about_not_handed_over():
    """Issue 48 (learner 57): 'check ctx.needs_input_grad and return None for b' handed over
    the fix. Does BroadcastMul's first line still name the mistake, end in a question, and
    leave 'return None' to the learner?"""
    from autograder.grading import verdict
    from tools.catalogue import mistake

    passed, message = verdict("BroadcastMul", mistake("BroadcastMul",
                                                      "ignores needs_input_grad").load())
    first = message.splitlines()[0]
    assert not passed and "returns a tensor for b when only a requires grad" in first
    assert "return None for" not in first and "?" in first, first
