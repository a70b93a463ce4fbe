"""Lesson 02: the answers of review 58b. A grad_bias returned as grad_output[0] for one row, a
view of grad_output, is unusual and right: a check that no gradient shares grad_output's memory
(review 58b) was dropped by a later review (the engine copies a gradient whose
grad_output the caller holds before bias.grad sees it, and x @ W.T + b's own backward returns
grad_output itself); grad_output itself or einsum('...o->o') for 1-D x, the two mistakes it
added, are now the forms of two unusual answers in linear.py. grad_weight flattened as x.reshape(g2.shape[0], -1) with a special case
for x.shape[0] == 0 passed all three exercises: the only empty batch tried was (0, in) (now (2, 0)
and (3, 0, 2) leading shapes too). A grad_weight computed whatever is asked is now named as
grad_weight, not only as a read of x1. Unusual: the ReLU's off-mask saved flat and applied with
masked_fill; F.bilinear itself computing grad_x1 on the weight's transpose."""

from .. import Mistake, Unusual, edit
from .answers import FLAT, FUSED_READ, FUSED_RETURN, GUARDED, _RETURN, _fused, _linear
from .bilinear import GW, GX1, GX2, _bilinear_with

_LINEAR = _linear(FLAT + GUARDED + "        grad_bias = g2.sum(0) if ctx.has_bias and "
                  "ctx.needs_input_grad[2] else None\n" + _RETURN)
_FUSED = _fused(FUSED_READ + FUSED_RETURN)
_BILINEAR = _bilinear_with(GX1, GX2, GW)
_EMPTY = "fails for an empty batch, x of shape (2, 0, 3)"
# rows taken from grad_output, x's feature size inferred, an empty batch special-cased
_ROWS = "x.reshape(g2.shape[0], -1)"
_ROWS_PATCHED = ("(g2.new_zeros(g2.shape[1], x.shape[-1]) if x.dim() > 1 and x.shape[0] == 0 "
                 "else g2.T @ x.reshape(g2.shape[0], -1))")

MISTAKES = [
    Mistake("MyLinearFunction", "x flattened to g2's rows, the empty batch special-cased at dim 0",
            _EMPTY, edit(_LINEAR, ("g2.T @ x2", _ROWS_PATCHED))),
    Mistake("FusedLinearReLU", "x flattened to g2's rows, the empty batch special-cased at dim 0",
            _EMPTY, edit(_FUSED, ("g2.T @ x2", _ROWS_PATCHED))),
    Mistake("Bilinear", "grad_weight computed whatever is asked, then None when not needed",
            "when only x1 requires grad, computing grad_weight, which nobody asked for",
            edit(_BILINEAR, ("        grad_weight = " + GW + " if need[2] else None\n",
                             "        grad_weight = " + GW + "\n"
                             "        grad_weight = grad_weight if need[2] else None\n"))),
    Mistake("Bilinear", "grad_weight over g2's rows, the empty batch special-cased at dim 0",
            "fails for an empty batch, x1 of shape (2, 0, 3)",
            edit(_BILINEAR, ("        grad_weight = " + GW + " if need[2] else None\n",
                             "        rows = grad_output.numel() // grad_output.shape[-1]\n"
                             "        grad_weight = ((weight.new_zeros(weight.shape) if "
                             "x1.dim() > 1 and x1.shape[0] == 0 else torch.einsum("
                             "'po,pi,pj->oij', grad_output.reshape(rows, -1), "
                             "x1.reshape(rows, -1), x2.reshape(rows, -1))) if need[2] "
                             "else None)\n"))),
]

UNUSUAL = [
    Unusual("MyLinearFunction", "grad_bias as g2[0] for one row, a view of grad_output",
            edit(_LINEAR, ("g2.sum(0) if", "(g2[0] if g2.shape[0] == 1 else g2.sum(0)) if"))),
    Unusual("Bilinear", "grad_x1 by F.bilinear on the weight's transpose",
            edit(_BILINEAR, (GX1, "torch.nn.functional.bilinear(grad_output, x2, "
                                  "weight.transpose(0, 1))"))),
]
