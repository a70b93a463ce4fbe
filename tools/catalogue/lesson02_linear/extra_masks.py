"""Lesson 02, review 58c: FusedLinearReLU saving the mask and its negation, two boolean tensors
of the output's size, two bytes per output element where the contract allows one."""

from .. import Mistake, edit
from .answers import FUSED_READ, FUSED_RETURN, _fused

_FUSED = _fused(FUSED_READ + FUSED_RETURN)

MISTAKES = [
    Mistake("FusedLinearReLU", "the mask and its negation both saved",
            "FusedLinearReLU saved 2 masks of the output's size",
            edit(_FUSED, ("ctx.save_for_backward(x, weight, mask)",
                          "ctx.save_for_backward(x, weight, mask, ~mask)"),
                 ("x, weight, mask = ctx.saved_tensors", "x, weight, mask, _ = ctx.saved_tensors"))),
]
UNUSUAL = []
