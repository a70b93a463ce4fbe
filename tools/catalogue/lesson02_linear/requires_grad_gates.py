"""Lesson 02, review 59: a backward that asks the saved tensors' requires_grad (``if
x.requires_grad:``) in place of ctx.needs_input_grad, passing while no input changed whether it
requires grad between forward and backward (one per exercise, x1 for Bilinear); F.linear
called in backward as torch.ops.aten.linear, a name other than F.linear's."""

from .. import Mistake, Unusual, edit
from .answers import (FLAT, FUSED_FORWARD, FUSED_READ, FUSED_RETURN, GUARDED, _RETURN, _fused,
                      _linear)
from .bilinear import GX1, _bilinear_with

_LINEAR = _linear(FLAT + GUARDED + "        grad_bias = g2.sum(0) if ctx.has_bias and "
                  "ctx.needs_input_grad[2] else None\n" + _RETURN)
_FUSED = _fused(FUSED_READ + FUSED_RETURN)
_BILINEAR = _bilinear_with(GX1, "torch.einsum('...o,oij,...i->...j', grad_output, weight, x1)",
                           "torch.einsum('...o,...i,...j->oij', grad_output, x1, x2)")

MISTAKES = [
    Mistake("MyLinearFunction", "grad_x gated on x.requires_grad (review 59)",
            "reads x.requires_grad at backward time, where ctx.needs_input_grad[0]",
            edit(_LINEAR, ("if ctx.needs_input_grad[0]", "if x.requires_grad"))),
    Mistake("MyLinearFunction", "grad_x as torch.ops.aten.linear(grad_output, weight.T)",
            "backward calls F.linear (as torch.ops.aten.linear)",
            edit(_LINEAR, ("grad_x = grad_output @ weight",
                           "grad_x = torch.ops.aten.linear(grad_output, weight.T)"))),
    Mistake("MyLinearFunction", "grad_weight as torch.ops.aten.linear.default",
            "backward calls F.linear (as torch.ops.aten.linear.default)",
            edit(_LINEAR, ("grad_weight = g2.T @ x2",
                           "grad_weight = torch.ops.aten.linear.default(g2.T, x2.T)"))),
    Mistake("FusedLinearReLU", "grad_x gated on x.requires_grad (review 59)",
            "reads x.requires_grad at backward time, where ctx.needs_input_grad[0]",
            edit(_FUSED, ("if ctx.needs_input_grad[0]", "if x.requires_grad"))),
    Mistake("FusedLinearReLU", "grad_weight gated on weight.requires_grad",
            "reads weight.requires_grad at backward time, where ctx.needs_input_grad[1]",
            edit(_FUSED, ("if ctx.needs_input_grad[1]", "if weight.requires_grad"))),
    Mistake("Bilinear", "grad_x1 gated on x1.requires_grad (review 59)",
            "reads x1.requires_grad at backward time, where ctx.needs_input_grad[0]",
            edit(_BILINEAR, ("if need[0]", "if x1.requires_grad"))),
    Mistake("Bilinear", "grad_weight gated on weight.requires_grad",
            "reads weight.requires_grad at backward time, where ctx.needs_input_grad[2]",
            edit(_BILINEAR, ("if need[2]", "if weight.requires_grad"))),
]
UNUSUAL = [
    Unusual("MyLinearFunction", "grad_weight by tensordot over every leading dim (review 59)",
            edit(_LINEAR, ("grad_weight = g2.T @ x2", "grad_weight = torch.tensordot(grad_output, "
                           "x, dims=(list(range(x.dim() - 1)), list(range(x.dim() - 1))))"))),
    Unusual("FusedLinearReLU", "output clamped in place, the mask saved flattened (review 59)",
            _fused(edit(FUSED_READ, ("g = torch.where(mask, grad_output, 0.0)",
                                     "g = grad_output.masked_fill(~mask.view(grad_output.shape), 0)"))
                   + FUSED_RETURN,
                   edit(FUSED_FORWARD, ("mask = z > 0", "mask = (z > 0).flatten()"),
                        ("z.clamp(min=0)", "z.clamp_(min=0)")))),
    Unusual("Bilinear", "grad_x1 as F.bilinear of grad_output and x2 (review 59)",
            edit(_BILINEAR, (GX1, "torch.nn.functional.bilinear(grad_output, x2, "
                                  "weight.permute(1, 0, 2))"))),
]
