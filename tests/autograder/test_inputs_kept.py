"""Rule 5 however forward is called (autograder.inputs_kept): a forward that works in its input's
memory only where nothing differentiates it fails, named; an in-place op marked dirty passes."""

import pytest
import torch

from autograder.domain import Domain
from autograder.errors import GradingError
from autograder.inputs_kept import WAYS, check_inputs_kept
from autograder.checks import Spec

SPEC = Spec("Exp", ("x",), torch.exp)
DOMAIN = Domain(SPEC, lambda device, dtype=torch.float64, seed=0: {
    "x": torch.linspace(-1, 1, 12, dtype=dtype, device=device).reshape(3, 4)})


def _exp(writes_when) -> type:
    class Exp(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp_() if writes_when(x) else x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, grad_output):
            y, = ctx.saved_tensors
            return grad_output * y
    return Exp


class ExpInPlace(torch.autograd.Function):
    """Right: in place on purpose, and says so (lesson 07's mark_dirty)."""

    @staticmethod
    def forward(ctx, x):
        x.exp_()
        ctx.mark_dirty(x)
        ctx.save_for_backward(x)
        return x

    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        return grad_output * y


@pytest.mark.parametrize("writes_when, said", [
    (lambda x: not x.requires_grad, WAYS[0][0]),
    (lambda x: not x.is_leaf, WAYS[1][0]),
    (lambda x: x.numel() > 100 and not x.requires_grad, "tiled"),
])
def test_a_write_only_where_nothing_differentiates_fails_and_is_named(writes_when, said):
    with pytest.raises(GradingError, match="Exp.forward modified its input x in place") as info:
        check_inputs_kept(DOMAIN, _exp(writes_when), torch.device("cpu"))
    assert said in str(info.value) and info.value.mistake == "Exp/writes-input"


def test_out_of_place_and_marked_dirty_forwards_pass():
    check_inputs_kept(DOMAIN, _exp(lambda x: False), torch.device("cpu"))
    check_inputs_kept(DOMAIN, ExpInPlace, torch.device("cpu"))
    with torch.no_grad():
        check_inputs_kept(DOMAIN, ExpInPlace, torch.device("cpu"))
