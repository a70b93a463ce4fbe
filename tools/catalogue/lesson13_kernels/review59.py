"""Lesson 13: what review 59 wrote (rev58z_13): x_hat recovered from y / w with the weight's
masked-off lanes loaded as 0 (every row NaN, named as the division by the weight), a mask off
by one in the backward kernel, sigmoid clipped to 0 below a = -20 in float64."""

from .. import Mistake
from .common import _edit
from .rms_norm_rows import RMS
from .silu_mul import SILU_MUL

_BACKWARD_MASK = ("    mask = offsets < n\n    grad = tl.load(",
                  "    mask = offsets <= n\n    grad = tl.load(")

MISTAKES = [
    Mistake("rms_norm_rows", "y saved, x_hat = y / w, the weight's masked-off lanes loaded as 0",
            "x_hat recovered from y / w?", _edit(
                RMS, ("    x_hat = x * rstd\n", "    x_hat = x / w  # x here is y\n"),
                ("    ctx.save_for_backward(x, weight, output[1])",
                 "    ctx.save_for_backward(output[0], weight, output[1])"))),
    Mistake("silu_mul", "the backward kernel's mask offsets <= n, one lane too many",
            "reads outside its tensors on lanes past the end", _edit(SILU_MUL, _BACKWARD_MASK)),
    Mistake("silu_mul", "sigmoid clipped to 0 below a = -20, forward and backward",
            "taken as 1 (or 0) past some |a|", _edit(
                SILU_MUL, ("    y = a / (1 + tl.exp(-a)) * b",
                           "    y = tl.where(a < -20.0, 0.0, a / (1 + tl.exp(-a))) * b"),
                ("    sigmoid = 1 / (1 + tl.exp(-a))\n",
                 "    sigmoid = tl.where(a < -20.0, 0.0, 1 / (1 + tl.exp(-a)))\n"))),
]

UNUSUAL = []  # the reviewer's row loop with tl.atomic_add is refused since review 60 (the
# contract asks for per-program partial sums): rms_norm_rows_lock's ATOMIC is that mistake
