"""Lesson 13: silu_mul's slips in the derivative itself, not in the kernel: the product rule in
d silu/da applied to one factor only."""

from .. import Mistake
from .common import _edit
from .silu_mul import SILU_MUL

MISTAKES = [
    Mistake("silu_mul", "product rule: sigmoid(a) held fixed in d silu/da",
            "with sigmoid(a) held fixed",
            _edit(SILU_MUL, ("    grad_a = grad * b * sigmoid * (1 + a * (1 - sigmoid))",
                             "    grad_a = grad * b * sigmoid"))),
    Mistake("silu_mul", "product rule: a held fixed in d silu/da", "with a held fixed",
            _edit(SILU_MUL, ("    grad_a = grad * b * sigmoid * (1 + a * (1 - sigmoid))",
                             "    grad_a = grad * b * a * sigmoid * (1 - sigmoid)"))),
]
