"""Lesson 13: what review 59b wrote (rev59_13): rms_norm_rows's forward squaring float16 x in
float16 (bfloat16 converted first) and summing the squares in float32: a row with an entry
past 256 squares to inf, rstd = 0 and the output all zeros."""

from .. import Mistake
from .common import _edit
from .rms_norm_rows import RMS

_SQUARES_IN_HALF = (
    "    x = tl.load(x_ptr + row * D + columns, mask=mask, other=0.0)\n"
    "    w = tl.load(w_ptr + columns, mask=mask, other=0.0)\n"
    "    if x.dtype != tl.float64:\n"
    "        x, w = x.to(tl.float32), w.to(tl.float32)\n"
    "    rstd = 1 / tl.sqrt(tl.sum(x * x, axis=0) / D + eps)\n",
    "    x = tl.load(x_ptr + row * D + columns, mask=mask, other=0.0)\n"
    "    w = tl.load(w_ptr + columns, mask=mask, other=0.0)\n"
    "    xx = x * x  # in the loaded dtype\n"
    "    if x.dtype == tl.bfloat16:\n"
    "        xx = x.to(tl.float32) * x.to(tl.float32)\n"
    "    if x.dtype != tl.float64:\n"
    "        x, w = x.to(tl.float32), w.to(tl.float32)\n"
    "    rstd = 1 / tl.sqrt(tl.sum(xx.to(x.dtype), axis=0) / D + eps)\n")

MISTAKES = [
    Mistake("rms_norm_rows", "float16 forward: x * x squared in float16, then summed in "
            "float32 (bfloat16 converted first)",
            "squares x * x computed in float16", _edit(RMS, _SQUARES_IN_HALF)),
]

UNUSUAL = []
