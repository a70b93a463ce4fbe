"""Lesson 13: which gradients a backward returns (review 76, rule 2): both exercises'
registered backwards reading the saved inputs' requires_grad instead of ctx.needs_input_grad,
which a caller who changes requires_grad between forward and backward sees."""

from .. import Mistake
from .common import _edit
from .rms_norm_rows import RMS
from .silu_mul import SILU_MUL

UNUSUAL: list = []

MISTAKES = [
    # review 76's S2 and R2: requires_grad read from the saved inputs
    Mistake("silu_mul", "the saved inputs' requires_grad read instead of ctx.needs_input_grad",
            "Does your backward read b.requires_grad?", _edit(
                SILU_MUL, ("for grad, needed in zip(grads, ctx.needs_input_grad))",
                           "for grad, needed in zip(\n"
                           "                         grads, (t.requires_grad for t in "
                           "ctx.saved_tensors)))"))),
    Mistake("rms_norm_rows", "the saved inputs' requires_grad read instead of "
            "ctx.needs_input_grad", "Does your backward read weight.requires_grad?", _edit(
                RMS, ("    return (grad_x if ctx.needs_input_grad[0] else None,\n"
                      "            grad_weight if ctx.needs_input_grad[1] else None, None)",
                      "    return (grad_x if x.requires_grad else None,\n"
                      "            grad_weight if weight.requires_grad else None, None)"))),
]
