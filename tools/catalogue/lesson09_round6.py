"""Lesson 09: answers with known verdicts from the sixth fresh review: a Normalize that saves
the divisor max(norm, eps) and the output, and in backward rebuilds the norm as |y| x divisor
(wrong on a row one ulp above eps whose computed |y| rounds below 1)."""

from . import Mistake
from .lesson09_round5 import _NORMALIZE_BY_DIVISOR

UNUSUAL = []

MISTAKES = [
    Mistake("Normalize", "above eps told from the norm rebuilt as |y| x divisor",
            "backward rebuilt the norm as |y| x divisor",
            _NORMALIZE_BY_DIVISOR.replace(
                "TEST", "torch.linalg.vector_norm(y, dim=-1, keepdim=True) * divisor >= ctx.eps")),
]
