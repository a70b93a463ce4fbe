"""Rule 3 in what backward calls: ``torch.autograd.grad`` on a forward recomputed inside
backward, or a built-in ATen ``*_backward`` op, is caught; a derivation of tensor operations
passes, and so does an operator of the learner's own whose name ends in ``_backward``."""

import torch

from autograder.by_hand import check_by_hand
from autograder.function_contract import rule_reference
from tests.autograder.rule_answers import CPU, SQUARE_DOMAIN, function

FORWARD = "ctx.save_for_backward(x)\nreturn x * x"
RIGHT = function("Square", FORWARD, "x, = ctx.saved_tensors\nreturn 2 * x * g")
ASKS_AUTOGRAD = function("Square", FORWARD,
                         "x, = ctx.saved_tensors\n"
                         "with torch.enable_grad():\n"
                         "    leaf = x.detach().requires_grad_()\n"
                         "    grad, = torch.autograd.grad(leaf * leaf, leaf, g)\n"
                         "return grad")
BUILTIN = function("Square", FORWARD,
                   "x, = ctx.saved_tensors\n"
                   "return torch.ops.aten.hardtanh_backward(2 * x * g, x, -1e300, 1e300)")


def test_asking_autograd_is_caught(raises_hint):
    with raises_hint("Square.backward calls torch.autograd.grad") as info:
        check_by_hand(SQUARE_DOMAIN, ASKS_AUTOGRAD, CPU)
    assert str(info.value).splitlines()[0].endswith(rule_reference("by-hand"))
    assert info.value.mistake == "Square/asks-autograd"


def test_a_built_in_backward_op_is_caught(raises_hint):
    with raises_hint("the built-in op hardtanh_backward") as info:
        check_by_hand(SQUARE_DOMAIN, BUILTIN, CPU)
    assert info.value.mistake == "Square/builtin-backward-op"


def test_a_derivation_passes():
    check_by_hand(SQUARE_DOMAIN, RIGHT, CPU)
