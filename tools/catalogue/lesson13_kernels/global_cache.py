"""Lesson 13: review 76's S6 and S8. A cache of sizes in a module global: the launch grid kept
per number of elements in a dict that every call fills in place and never rebinds (rule 4);
and exp's argument clamped at -80, which float64's tail shows."""

from .. import Mistake
from .common import _edit
from .silu_mul import SILU_MUL

MISTAKES = [
    Mistake("silu_mul", "the launch grid cached per numel in a module-level dict",
            "the module global GRIDS (a dict) grew from", _edit(
                SILU_MUL, ("BLOCK = 1024\n", "BLOCK = 1024\nGRIDS = {}\n"),
                ("silu_mul_kernel[(triton.cdiv(a.numel(), BLOCK),)]",
                 "silu_mul_kernel[GRIDS.setdefault(a.numel(), (triton.cdiv(a.numel(), BLOCK),))]"))),
]

# review 76's S8: exp's argument clamped at -80 in both kernels (finite in float32, but float64's
# sigmoid taken as sigmoid(-80) below a = -80: silu's tail off by orders of magnitude)
MISTAKES += [
    Mistake("silu_mul", "exp's argument clamped at -80 in both kernels",
            "or its value at a clamp", _edit(
                SILU_MUL, ("    y = a / (1 + tl.exp(-a)) * b",
                           "    y = a / (1 + tl.exp(-tl.maximum(a, -80.0))) * b"),
                ("    sigmoid = 1 / (1 + tl.exp(-a))",
                 "    sigmoid = 1 / (1 + tl.exp(-tl.maximum(a, -80.0)))"))),
]
