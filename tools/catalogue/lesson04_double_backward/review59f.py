"""Lesson 04, review 59 (sixth round): SwishFunctions whose grad_beta squares x before the small
factor sigma'(beta x), the solution's own form until then: inf (nan where sigma' rounds to 0) at
x = 1e20 in float32 or 1e160 in float64 with beta x = -60, inside |beta x| <= 800. Summing in
float64 does not help: x * x overflowed before the sum (once an unusual answer of review 56b,
whose unusual entry now multiplies by x last)."""

from .. import Mistake, edit
from .review56 import SWISH

OVERFLOW = "x * x overflows before the small factor"
MISTAKES = [
    Mistake("SwishFunction", "grad_beta as (g * x * x * ds).sum(): x * x overflows at huge x",
            OVERFLOW, SWISH, named=True),
    Mistake("SwishFunction", "grad_beta as (g * x * x * ds) summed in float64: still inf",
            OVERFLOW, edit(SWISH, ("(grad_output * x * x * ds).sum()",
                                   "(grad_output * x * x * ds).sum(dtype=torch.float64)"
                                   ".to(beta.dtype)")), named=True),
]

UNUSUAL = []
