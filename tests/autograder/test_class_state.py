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
