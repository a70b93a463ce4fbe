"""Lesson 13: setup_context keeping tensors as ctx attributes instead of saving them with
ctx.save_for_backward (the values come out right: only a look at the ctx shows it)."""

from .. import Mistake
from .common import _edit
from .rms_norm_rows import RMS
from .silu_mul import SILU_MUL

MISTAKES = [
    Mistake("silu_mul", "setup_context keeps a and b as ctx attributes",
            "setup_context keeps a tensor as ctx.a",
            _edit(SILU_MUL, ("    ctx.save_for_backward(*inputs)", "    ctx.a, ctx.b = inputs"),
                  ("    a, b = ctx.saved_tensors", "    a, b = ctx.a, ctx.b"))),
    Mistake("rms_norm_rows", "setup_context keeps x, weight and rstd as ctx attributes",
            "setup_context keeps a tensor as ctx.x",
            _edit(RMS, ("    ctx.save_for_backward(x, weight, output[1])",
                        "    ctx.x, ctx.weight, ctx.rstd = x, weight, output[1]"),
                  ("    x, weight, rstd = ctx.saved_tensors",
                   "    x, weight, rstd = ctx.x, ctx.weight, ctx.rstd"))),
]
