"""Lesson 02: forwards computed in float64 and cast back to the float32 inputs' dtype, in each
exercise. Once failed (float32's exact 0s and overflows, probed where float64 gives another
value, named the wider dtype); correct since rule 1 of the Function contract accepts computing
in a wider dtype, and those float extremes left the domain. And the other way: a forward that
narrows float64 inputs to float32 (issue 68), named by its output's dtype before any backward
runs, where backward's float32 grad_output met the float64 weight first."""

from .. import Mistake, Unusual, edit
from .answers import FLAT, FUSED_FORWARD, FUSED_READ, FUSED_RETURN, GUARDED, _fused, _linear
from .bilinear import GW, GX1, GX2, _bilinear_with

_LINEAR_FORWARD = ("        ctx.save_for_backward(x, weight)\n"
                   "        ctx.has_bias = bias is not None\n"
                   "        y = x @ weight.T\n"
                   "        return y + bias if bias is not None else y")
_LINEAR_BACKWARD = (FLAT + GUARDED + "        grad_bias = g2.sum(0) if ctx.has_bias and "
                    "ctx.needs_input_grad[2] else None\n"
                    "        return grad_x, grad_weight, grad_bias")

UNUSUAL = []
# issue 68: once named by backward's matmul raising on float32 times float64 (a learner's
# first line), or by a raw RuntimeError of the grader's own comparison
NARROWED = "forward returned float32 for float64 inputs, where the op returns float64"
MISTAKES = [
    Mistake("MyLinearFunction", "x = x.float() in forward, weight cast to match", NARROWED,
            _linear(_LINEAR_BACKWARD, "        x = x.float()\n" + edit(
                _LINEAR_FORWARD, ("y = x @ weight.T", "y = x @ weight.to(x.dtype).T"),
                ("return y + bias if", "return y + bias.to(x.dtype) if")))),
    Mistake("Bilinear", "inputs cast to float32 in forward, the float64 ones saved", NARROWED,
            edit(_bilinear_with(GX1, GX2, GW),
                 ("x1, weight, x2)", "x1.float(), weight.float(), x2.float())"),
                 ("return y + bias if", "return y + bias.float() if"))),
]

# correct since issue 67: rule 1 of the Function contract accepts computing in a wider dtype
UNUSUAL.append(Unusual("FusedLinearReLU", "the pre-activation in float64, the output cast back",
        _fused(FUSED_READ + FUSED_RETURN,
                   edit(FUSED_FORWARD, ("z = x @ weight.T", "z = x.double() @ weight.double().T"),
                        ("z = z + bias", "z = z + bias.double()"),
                        ("return z.clamp(min=0)", "return z.clamp(min=0).to(x.dtype)")))))

# correct since issue 67: rule 1 of the Function contract accepts computing in a wider dtype
UNUSUAL.append(Unusual("MyLinearFunction", "forward in float64, cast back",
        _linear(_LINEAR_BACKWARD, edit(
                _LINEAR_FORWARD, ("y = x @ weight.T", "y = x.double() @ weight.double().T"),
                ("return y + bias if bias is not None else y",
                 "return (y + bias.double() if bias is not None else y).to(x.dtype)")))))

# correct since issue 67: rule 1 of the Function contract accepts computing in a wider dtype
UNUSUAL.append(Unusual("Bilinear", "forward in float64, cast back",
        edit(_bilinear_with(GX1, GX2, GW),
                 ("x1, weight, x2)", "x1.double(), weight.double(), x2.double())"),
                 ("return y + bias if bias is not None else y",
                  "return (y + bias.double() if bias is not None else y).to(x1.dtype)"))))
