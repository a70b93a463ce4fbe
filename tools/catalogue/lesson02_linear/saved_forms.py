"""Lesson 02, review 60: grad_x computed twice when only x needs a gradient (the FLOP message
names the repeated product, not a grad_weight one); a uint8 mask read with masked_fill, unusual
(1 byte per element, as a bool mask; once refused by a torch.bool clause); the float pre-activation saved in the mask's place only
when the weight is frozen (the mask clause holds whichever inputs require grad)."""

from .. import Mistake, Unusual, edit
from .answers import FLAT, FUSED_READ, FUSED_RETURN, GUARDED, _RETURN, _fused, _linear

_LINEAR = _linear(FLAT + GUARDED + "        grad_bias = g2.sum(0) if ctx.has_bias and "
                  "ctx.needs_input_grad[2] else None\n" + _RETURN)
_FUSED = _fused(FUSED_READ + FUSED_RETURN)
_GRAD_X = "        grad_x = grad_output @ weight if ctx.needs_input_grad[0] else None\n"

MISTAKES = [
    Mistake("MyLinearFunction", "grad_x computed twice, the first discarded (review 60)",
            "grad_x computed 2 times (2 matrix products of x's shape",
            edit(_LINEAR, (_GRAD_X, _GRAD_X + "        if grad_x is not None:\n"
                                    "            grad_x = (grad_output @ weight).clone()\n"))),
    Mistake("FusedLinearReLU", "the float pre-activation saved when the weight is frozen "
            "(review 60)", "saved a float64 intermediate of shape",
            edit(_FUSED, ("ctx.save_for_backward(x, weight, mask)",
                          "ctx.save_for_backward(x, weight, mask if ctx.needs_input_grad[1] "
                          "else z)"),
                 ("torch.where(mask, grad_output", "torch.where(mask > 0, grad_output"))),
]

UNUSUAL = [
    # a mistake until the mask clause took any dtype of 1 byte per element (uint8 as bool)
    Unusual("FusedLinearReLU", "a uint8 mask read with masked_fill (review 60)",
            edit(_FUSED, ("mask = z > 0", "mask = (z > 0).to(torch.uint8)"),
                 ("torch.where(mask, grad_output, 0.0)", "grad_output.masked_fill(mask == 0, 0)"))),
]
