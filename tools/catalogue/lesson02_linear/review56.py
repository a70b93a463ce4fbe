"""Lesson 02: the answers of review 56. A FusedLinearReLU that computes the pre-activation in
float64 and casts the output back to float32 passed every check: float32's exact 0s (1.5e-8 in
float64) and overflows (2e38 in float64) were not probed. Now each exercise is probed in
float32 where float64 gives another value, and the wider dtype is named; the same forward of
MyLinearFunction and Bilinear with it."""

from .. import Mistake, edit
from .answers import FLAT, FUSED_FORWARD, FUSED_READ, FUSED_RETURN, GUARDED, _fused, _linear
from .bilinear import GW, GX1, GX2, _bilinear_with

WIDER = "computes in a wider dtype than its float32 inputs"

_LINEAR_FORWARD = ("        ctx.save_for_backward(x, weight)\n"
                   "        ctx.has_bias = bias is not None\n"
                   "        y = x @ weight.T\n"
                   "        return y + bias if bias is not None else y")
_LINEAR_BACKWARD = (FLAT + GUARDED + "        grad_bias = g2.sum(0) if ctx.has_bias and "
                    "ctx.needs_input_grad[2] else None\n"
                    "        return grad_x, grad_weight, grad_bias")

MISTAKES = [
    Mistake("FusedLinearReLU", "the pre-activation in float64, the output cast back",
            f"FusedLinearReLU {WIDER}",
            _fused(FUSED_READ + FUSED_RETURN,
                   edit(FUSED_FORWARD, ("z = x @ weight.T", "z = x.double() @ weight.double().T"),
                        ("z = z + bias", "z = z + bias.double()"),
                        ("return z.clamp(min=0)", "return z.clamp(min=0).to(x.dtype)")))),
    Mistake("MyLinearFunction", "forward in float64, cast back", f"MyLinearFunction {WIDER}",
            _linear(_LINEAR_BACKWARD, edit(
                _LINEAR_FORWARD, ("y = x @ weight.T", "y = x.double() @ weight.double().T"),
                ("return y + bias if bias is not None else y",
                 "return (y + bias.double() if bias is not None else y).to(x.dtype)")))),
    Mistake("Bilinear", "forward in float64, cast back", f"Bilinear {WIDER}",
            edit(_bilinear_with(GX1, GX2, GW),
                 ("x1, weight, x2)", "x1.double(), weight.double(), x2.double())"),
                 ("return y + bias if bias is not None else y",
                  "return (y + bias.double() if bias is not None else y).to(x1.dtype)"))),
]
