"""Lesson 02 answers whose proven hints carry a stable id that no other entry produces: a
FusedLinearReLU that keeps no mask and recomputes the pre-activation in backward."""

from tools.catalogue import Mistake
from tools.catalogue.lesson02 import FUSED_RETURN, _fused

UNUSUAL = []

MISTAKES = [
    Mistake("FusedLinearReLU", "no mask saved: the pre-activation recomputed in backward",
            "FusedLinearReLU saved no boolean mask of the output's shape",
            _fused("        x, weight, bias = ctx.saved_tensors\n"
                   "        z = x @ weight.T\n"
                   "        if bias is not None:\n            z = z + bias\n"
                   "        g = grad_output * (z > 0)\n"
                   "        g2 = g.reshape(-1, weight.shape[0])\n"
                   "        x2 = x.reshape(-1, weight.shape[1])\n" + FUSED_RETURN,
                   "        ctx.save_for_backward(x, weight, bias)\n"
                   "        ctx.has_bias = bias is not None\n"
                   "        return torch.relu(F.linear(x, weight, bias))")),
]
