"""A backward that starts itself without end: an error within the guard, never a hung process.

Every test that runs an endless backward does so under the guard; without it the process would
grow threads until the machine ran out of memory.
"""

import threading

import pytest
import torch
from torch.autograd.function import BackwardCFunction

from autograder import GradingError, self_check
from autograder import nesting
from autograder.nesting import NESTING_LIMIT, EndlessBackward, stopping_endless_backward


class Exp(torch.autograd.Function):
    """exp, keeping its input and output; the classes below differ in backward only."""

    @staticmethod
    def forward(x):
        return x.exp()

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0], output)


class ExpBackpropagatesItsOutput(Exp):
    """Wrong: backward backpropagates the saved output, whose grad_fn is this very node."""

    @staticmethod
    def backward(ctx, grad_output):
        _, y = ctx.saved_tensors
        with torch.enable_grad():
            torch.autograd.backward(y, grad_output, retain_graph=True)
        return grad_output * y


class ExpCallsItself(Exp):
    """Wrong: backward differentiates a new ExpCallsItself.apply, which does the same."""

    @staticmethod
    def backward(ctx, grad_output):
        x, _ = ctx.saved_tensors
        with torch.enable_grad():
            x = x.detach().requires_grad_()
            grad_x, = torch.autograd.grad(ExpCallsItself.apply(x), x, grad_output)
        return grad_x


class ExpRecomputed(Exp):
    """Right: backward recomputes exp and backpropagates that new graph once (a checkpoint)."""

    @staticmethod
    def backward(ctx, grad_output):
        x, _ = ctx.saved_tensors
        with torch.enable_grad():
            x = x.detach().requires_grad_()
            grad_x, = torch.autograd.grad(x.exp(), x, grad_output)
        return grad_x


class ExpCheckpointedTwice(torch.autograd.Function):
    """Right: a checkpoint of a checkpoint of the same class, nested ``depth`` deep."""

    @staticmethod
    def forward(x, depth):
        return x.exp()

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])
        ctx.depth = inputs[1]

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        with torch.enable_grad():
            x = x.detach().requires_grad_()
            inner = ExpCheckpointedTwice.apply(x, ctx.depth - 1) if ctx.depth else x.exp()
            grad_x, = torch.autograd.grad(inner, x, grad_output)
        return grad_x, None


@pytest.mark.parametrize("endless", [ExpBackpropagatesItsOutput, ExpCallsItself])
def test_does_an_endless_backward_stop_with_a_hint_naming_its_class(endless):
    threads = threading.active_count()
    x = torch.randn(3, requires_grad=True)
    with stopping_endless_backward(), pytest.raises(EndlessBackward) as stopped:
        endless.apply(x).sum().backward()
    assert str(stopped.value).startswith(f"{endless.__name__}.backward ran inside itself")
    assert threading.active_count() == threads  # stopped before the engine went to new threads


def test_do_correct_nested_backwards_run_under_the_guard():
    x = torch.randn(3, dtype=torch.float64, requires_grad=True)
    with stopping_endless_backward():
        assert torch.autograd.gradcheck(ExpRecomputed.apply, (x,))
        grad, = torch.autograd.grad(ExpCheckpointedTwice.apply(x, 3).sum(), x)
    torch.testing.assert_close(grad, x.exp())


def test_is_the_limit_on_one_class_not_on_all_backwards_together():
    x = torch.randn(3, requires_grad=True)
    with stopping_endless_backward():
        grad, = torch.autograd.grad(ExpCheckpointedTwice.apply(x, NESTING_LIMIT - 1).sum(), x)
        with pytest.raises(EndlessBackward):
            torch.autograd.grad(ExpCheckpointedTwice.apply(x, NESTING_LIMIT).sum(), x)
    torch.testing.assert_close(grad, x.exp())


def test_does_a_correct_run_after_a_stopped_one_start_from_depth_zero():
    x = torch.randn(3, requires_grad=True)
    with stopping_endless_backward():
        with pytest.raises(EndlessBackward):
            ExpCallsItself.apply(x).sum().backward()
        grad, = torch.autograd.grad(ExpCheckpointedTwice.apply(x, NESTING_LIMIT - 1).sum(), x)
    torch.testing.assert_close(grad, x.exp())


def test_does_the_last_block_to_leave_give_the_engine_its_apply_back():
    before = BackwardCFunction.apply  # the engine's own, or the guard a view installed for good
    with stopping_endless_backward():
        with stopping_endless_backward():
            assert BackwardCFunction.apply is nesting._guarded_apply
        assert BackwardCFunction.apply is nesting._guarded_apply
    assert BackwardCFunction.apply is before


def test_does_a_self_check_fail_on_an_endless_backward_instead_of_hanging():
    class MySigmoid(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return torch.sigmoid(x)

        @staticmethod
        def backward(ctx, grad_output):
            x, = ctx.saved_tensors
            with torch.enable_grad():
                x = x.detach().requires_grad_()
                grad_x, = torch.autograd.grad(MySigmoid.apply(x), x, grad_output)
            return grad_x

    with pytest.raises(GradingError, match=r"^MySigmoid.backward ran inside itself"):
        self_check("MySigmoid", MySigmoid)
