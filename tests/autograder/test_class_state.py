"""A Function's class state, compared before and after a call by what each attribute holds."""

from types import SimpleNamespace

import pytest
import torch

from autograder.checks import Spec
from autograder.class_state import changed_attributes, check_class_state, class_state
from autograder.errors import GradingError

SCALED = Spec("Scaled", ("x", "c"), lambda x, c: c * x)


def _scaled(**attributes):
    """A Function c * x with ``attributes`` on its class."""
    return type("Scaled", (torch.autograd.Function,), {
        "forward": staticmethod(lambda ctx, x, c: c * x),
        "backward": staticmethod(lambda ctx, grad_output: (grad_output, None)), **attributes})


@pytest.mark.parametrize("change", [
    lambda cls: cls.kept.__setitem__("c", 2.0),  # a key added to a dict
    lambda cls: cls.rows.append(torch.ones(2)),  # an entry appended to a list
    lambda cls: cls.rows[0].append(1),  # a list in a list
    lambda cls: cls.buffer.mul_(2),  # a tensor changed in place
], ids=["dict", "list", "nested", "tensor"])
def test_a_class_attribute_changed_in_place_is_a_change(change):
    cls = _scaled(kept={}, rows=[[]], buffer=torch.ones(3))
    before = class_state(cls)
    assert changed_attributes(before, class_state(cls)) == []
    change(cls)
    with pytest.raises(GradingError) as error:
        check_class_state(SimpleNamespace(spec=SCALED), cls, before, "forward")
    assert error.value.mistake == "Scaled/state-on-class"
    assert "changes what is in Scaled." in error.value.hint


@pytest.mark.parametrize("before, after, said", [
    ({}, {"c": 2.0}, "which object does each call get of its own"),
    ({"calls": 0}, {"calls": 1}, "a count of calls belongs to the code that calls Scaled.apply"),
], ids=["a value", "a count"])
def test_a_class_attribute_is_met_with_a_question_unless_it_counts_calls(before, after, said):
    """Issue 48: "keep it on ctx (ctx.scale = ...)" handed the fix over, and every such hint
    ended on counts of calls: is a value met with a question, and only a count that grew told
    where counts belong?"""
    cls = _scaled(**before)
    state = class_state(cls)
    for name, value in after.items():
        setattr(cls, name, value)
    with pytest.raises(GradingError) as error:
        check_class_state(SimpleNamespace(spec=SCALED), cls, state, "forward")
    assert said in error.value.hint and "ctx." not in error.value.hint
    assert ("count of calls" in error.value.hint) == ("calls" in before)


_ON_THE_CLASS = '''
class MyLinearFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias=None):
        MyLinearFunction.saved = (x, weight)
        ctx.has_bias = bias is not None
        y = x @ weight.T
        return y + bias if bias is not None else y

    @staticmethod
    def backward(ctx, grad_output):
        x, weight = MyLinearFunction.saved
        g2 = grad_output.reshape(-1, weight.shape[0])
        grad_x = grad_output @ weight if ctx.needs_input_grad[0] else None
        grad_weight = g2.T @ x.reshape(-1, weight.shape[1]) if ctx.needs_input_grad[1] else None
        grad_bias = g2.sum(0) if ctx.has_bias and ctx.needs_input_grad[2] else None
        return grad_x, grad_weight, grad_bias
'''


def test_state_kept_on_the_class_is_not_called_a_global():
    """Issue 48 (learner 57): MyLinearFunction.saved = (x, weight) was reported as 'keeps state
    in a global', where the contract tells the two apart ('nothing on the class, nothing in a
    global'). Does the first line name the class attribute instead, and a true global still
    read as a global?"""
    from autograder.grading import verdict
    from tools.catalogue import load, mistake

    passed, message = verdict("MyLinearFunction", load("MyLinearFunction", _ON_THE_CLASS))
    first = message.splitlines()[0]
    assert not passed and "on the class (MyLinearFunction.saved)" in first, first
    assert "in a global" not in first, first
    cached = mistake("MyLinearFunction", "weight.T cached in a global under id(weight)")
    passed, message = verdict("MyLinearFunction", cached.load())
    assert "keeps state in a global" in message.splitlines()[0]
