"""Lesson 02: backwards that return zeros, not None, for inputs that need no gradient, on a
path only a special case takes (issue 69): an empty batch in MyLinearFunction, a layer whose
ReLU is off everywhere in FusedLinearReLU, a grad_output of zeros in Bilinear. The checks of
each input alone never drive those paths; rule 2 of the Function contract asks for None on
every one."""

from .. import Mistake, edit
from .answers import FLAT, FUSED_READ, FUSED_RETURN, GUARDED, _RETURN, _fused, _linear
from .bilinear import GW, GX1, GX2, _bilinear_with

_HINT = "which needs no gradient"
_LINEAR_BIAS = ("        grad_bias = g2.sum(0) if ctx.has_bias and ctx.needs_input_grad[2] "
                "else None\n")

MISTAKES = [
    Mistake("MyLinearFunction", "zeros for every input on an empty batch, needed or not",
            f"MyLinearFunction.backward returned a tensor of zeros for weight, {_HINT}, with an "
            "empty batch",
            _linear("        x, weight = ctx.saved_tensors\n"
                    "        if grad_output.numel() == 0:  # nothing to sum: zeros all round\n"
                    "            return (torch.zeros_like(x), torch.zeros_like(weight),\n"
                    "                    weight.new_zeros(weight.shape[0]) if ctx.has_bias "
                    "else None)\n"
                    + FLAT + GUARDED + _LINEAR_BIAS + _RETURN)),
    Mistake("FusedLinearReLU", "zeros for every input where the ReLU is off everywhere",
            f"FusedLinearReLU.backward returned a tensor of zeros for weight, {_HINT}, with "
            "every floating input all zeros",
            _fused(FUSED_READ.replace(
                "        g = torch.where(mask, grad_output, 0.0)\n",
                "        if mask.numel() and not mask.any():  # a dead layer\n"
                "            return (torch.zeros_like(x), torch.zeros_like(weight),\n"
                "                    weight.new_zeros(weight.shape[0]) if ctx.has_bias "
                "else None)\n"
                "        g = torch.where(mask, grad_output, 0.0)\n") + FUSED_RETURN)),
    Mistake("Bilinear", "zeros for every input when grad_output is all zeros",
            f"Bilinear.backward returned a tensor of zeros for x2, {_HINT}, with a grad_output "
            "of zeros",
            edit(_bilinear_with(GX1, GX2, GW),
                 ("        need = ctx.needs_input_grad\n",
                  "        need = ctx.needs_input_grad\n"
                  "        if grad_output.numel() and not grad_output.any():  # nothing back\n"
                  "            return (torch.zeros_like(x1), torch.zeros_like(x2),\n"
                  "                    torch.zeros_like(weight),\n"
                  "                    weight.new_zeros(weight.shape[0]) if ctx.has_bias "
                  "else None)\n"))),
]
