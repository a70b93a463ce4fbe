"""autograder.twice: backward run twice on one graph."""

import pytest
import torch

from autograder.errors import GradingError
from autograder.spec import Spec
from autograder.twice import check_backward_twice

SQUARE = Spec("Square", ("x",), lambda x: x * x)


def _square(backward_body: str):
    namespace = {"torch": torch}
    exec("class Square(torch.autograd.Function):\n"
         "    @staticmethod\n    def forward(ctx, x):\n"
         "        ctx.save_for_backward(2 * x)\n        ctx.calls = [0]\n        return x * x\n"
         f"    @staticmethod\n    def backward(ctx, g):\n        {backward_body}\n", namespace)
    return namespace["Square"]


def _values():
    return {"x": torch.randn(4, dtype=torch.float64, generator=torch.Generator().manual_seed(0))}


def test_a_backward_that_leaves_what_forward_saved_passes():
    """Does a backward building new tensors from the saved ones pass, run twice?"""
    check_backward_twice(_square("two_x, = ctx.saved_tensors\n        return two_x * g"),
                         SQUARE, _values())


def test_a_saved_tensor_changed_in_place_is_named():
    """Is a second backward refused by the version counter told what the first one did?"""
    answer = _square("two_x, = ctx.saved_tensors\n        return two_x.mul_(g)")
    with pytest.raises(GradingError, match="Square.backward changes a tensor that forward "
                                           "saved, in place") as error:
        check_backward_twice(answer, SQUARE, _values())
    assert error.value.mistake == "Square/backward-modifies-saved-tensor"


def test_a_gradient_that_changes_on_the_second_backward_is_named():
    """Is a backward whose state moves between runs (a counter on ctx) told its gradient
    changes, where torch raises nothing?"""
    answer = _square("two_x, = ctx.saved_tensors\n        ctx.calls[0] += 1\n"
                     "        return two_x * g * ctx.calls[0]")
    with pytest.raises(GradingError, match="Square's gradient for x changes when backward "
                                           "runs a second time on one graph, while what forward "
                                           "saved is unchanged") as error:
        check_backward_twice(answer, SQUARE, _values())
    assert error.value.mistake == "Square/backward-changes-state-it-reads"


def test_a_saved_tensor_changed_in_place_without_the_version_counter_is_named():
    """Is a backward that writes into a saved tensor through .data (which the version counter
    does not see) told it changed what forward saved, not that it keeps state elsewhere?"""
    answer = _square("two_x, = ctx.saved_tensors\n        two_x.data.mul_(2)\n"
                     "        return two_x * g")
    with pytest.raises(GradingError, match="Square.backward changes a tensor that forward "
                                           "saved, in place") as error:
        check_backward_twice(answer, SQUARE, _values())
    assert error.value.mistake == "Square/backward-modifies-saved-tensor"


def test_state_kept_outside_ctx_is_named_as_such():
    """Is a backward that pops what it needs from a module-level list (forward pushes) told it
    reads state that changes between runs, not that it changed a saved tensor?"""
    namespace = {"torch": torch, "STACK": []}
    exec("class Square(torch.autograd.Function):\n"
         "    @staticmethod\n    def forward(ctx, x):\n"
         "        STACK.append(2 * x)\n        return x * x\n"
         "    @staticmethod\n    def backward(ctx, g):\n"
         "        return (STACK.pop() if STACK else 0) * g\n", namespace)
    with pytest.raises(GradingError, match="changes state it reads between runs") as error:
        check_backward_twice(namespace["Square"], SQUARE, _values())
    assert error.value.mistake == "Square/backward-changes-state-it-reads"


def test_a_first_backward_that_raises_is_left_to_the_other_checks():
    """Does a backward that fails the first time raise nothing here (its own checks name it)?"""
    check_backward_twice(_square("raise NotImplementedError"), SQUARE, _values())


def test_gradcheck_meeting_a_saved_tensor_changed_by_backward_names_it():
    """Is gradcheck's raw version-counter error, raised before the domain's check runs, named
    for what the second backward proves?"""
    from autograder.checks import check_gradcheck

    answer = _square("two_x, = ctx.saved_tensors\n        return two_x.mul_(g)")
    with pytest.raises(GradingError) as error:
        check_gradcheck(answer, SQUARE, _values())
    assert error.value.mistake == "Square/backward-modifies-saved-tensor"


def test_a_gradient_backward_keeps_and_adds_into_is_caught():
    """A backward returning a tensor it keeps on ctx and adds into: the first run's gradient is
    that very tensor, so it must be copied before the second run changes it."""
    answer = _square("two_x, = ctx.saved_tensors\n"
                     "        if not hasattr(ctx, 'kept'):\n"
                     "            ctx.kept = torch.zeros_like(two_x)\n"
                     "        return ctx.kept.add_(two_x * g)")
    with pytest.raises(GradingError, match="gradient for x changes when backward runs a "
                                           "second time") as error:
        check_backward_twice(answer, SQUARE, _values())
    assert error.value.mistake == "Square/backward-changes-state-it-reads"
