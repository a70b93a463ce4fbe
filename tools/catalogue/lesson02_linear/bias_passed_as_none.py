"""Lesson 02: a backward that counts its inputs by whether a bias was given: apply(x, weight)
has two inputs, but apply(x, weight, None) has three, and backward must return a value (None)
for each (a fresh review's answers, which passed while grading tried only the first call; the
first was catalogued as an unusual correct answer until then)."""

from .. import Mistake, edit
from .answers import FLAT, FUSED_READ, FUSED_RETURN, GUARDED, _RETURN, _fused, _linear
from .bilinear import GW, GX1, GX2, _bilinear_with

LINEAR = _linear(FLAT + GUARDED + "        grad_bias = g2.sum(0) if ctx.has_bias and "
                 "ctx.needs_input_grad[2] else None\n" + _RETURN)
FUSED = _fused(FUSED_READ + FUSED_RETURN)
BILINEAR = _bilinear_with(GX1, GX2, GW)

# "no bias, no last gradient": one value too few when apply gets bias=None in its place
MISTAKES = [
    Mistake(exercise, f"{count} gradients returned when there is no bias",
            f"backward returned {count} gradients for {count + 1} inputs: bias gets no gradient",
            edit(code, (full, f"        if not ctx.has_bias:\n            return {short}\n"
                              + full)))
    for exercise, code, count, short, full in (
        ("MyLinearFunction", LINEAR, 2, "grad_x, grad_weight", _RETURN),
        ("FusedLinearReLU", FUSED, 2, "grad_x, grad_weight", _RETURN),
        ("Bilinear", BILINEAR, 3, "grad_x1, grad_x2, grad_weight",
         "        return grad_x1, grad_x2, grad_weight, grad_bias"))]
