"""Lesson 02: the answers of review 55b. A backward that returns None for every gradient on
an empty batch (a shortcut for zero rows) was caught but told to look for a division, a
picked row or a reshape: it is named now by what it returned, None where zeros of the input's
shape are due, in all three exercises. And two unusual answers: a mask saved flattened to one
dimension, which the saved form allows (any shape, one entry per output element), and a
grad_bias summed over the leading dimensions by name, guarded for a 1-D grad_output."""

from .. import Mistake, Unusual, edit
from .answers import FLAT, FUSED_READ, FUSED_RETURN, FUSED_FORWARD, GUARDED, _RETURN, _fused, _linear
from .bilinear import GW, GX1, GX2, _bilinear_with

_EMPTY_NONE = "        if grad_output.numel() == 0:\n            return None, None, None\n"
_LINEAR_BIAS = ("        grad_bias = g2.sum(0) if ctx.has_bias and ctx.needs_input_grad[2] "
                "else None\n")

MISTAKES = [
    Mistake("MyLinearFunction", "returns None for every gradient on an empty batch",
            "returned None for grad_x, grad_weight and grad_bias with an empty batch, where "
            "zeros of the input's shape are due",
            _linear(_EMPTY_NONE + FLAT + GUARDED + _LINEAR_BIAS + _RETURN), named=True),
    Mistake("FusedLinearReLU", "returns None for every gradient on an empty batch",
            "returned None for grad_x, grad_weight and grad_bias with an empty batch",
            _fused(_EMPTY_NONE + FUSED_READ + FUSED_RETURN), named=True),
    Mistake("Bilinear", "returns None for every gradient on an empty batch",
            "returned None for grad_x1, grad_x2, grad_weight and grad_bias with an empty batch",
            edit(_bilinear_with(GX1, GX2, GW),
                 ("        need = ctx.needs_input_grad\n",
                  "        need = ctx.needs_input_grad\n        if grad_output.numel() == 0:\n"
                  "            return (None,) * len(need)\n")), named=True),
]

UNUSUAL = [
    Unusual("FusedLinearReLU", "the mask saved flattened to one dimension",
            _fused(edit(FUSED_READ, ("torch.where(mask, grad_output, 0.0)",
                                     "torch.where(mask.reshape(grad_output.shape), grad_output, "
                                     "0.0)")) + FUSED_RETURN,
                   edit(FUSED_FORWARD, ("ctx.save_for_backward(x, weight, mask)",
                                        "ctx.save_for_backward(x, weight, mask.reshape(-1))")))),
    Unusual("MyLinearFunction", "grad_bias summed over the leading dims by name, 1-D guarded",
            _linear(FLAT + GUARDED + "        grad_bias = None\n"
                    "        if ctx.has_bias and ctx.needs_input_grad[2]:\n"
                    "            grad_bias = grad_output.clone() if grad_output.dim() == 1 else "
                    "grad_output.sum(dim=tuple(range(grad_output.dim() - 1)))\n" + _RETURN)),
]
