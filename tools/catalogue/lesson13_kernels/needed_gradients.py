"""Lesson 13: which gradients a backward returns (review 76, rule 2): both exercises'
registered backwards reading the saved inputs' requires_grad instead of ctx.needs_input_grad,
which a caller who changes requires_grad between forward and backward sees; and silu_mul's
backward kernel storing both gradients whatever ctx.needs_input_grad says, None returned for
the one not needed (review 79: the work is done for nothing)."""

from .. import Mistake
from .common import _edit
from .rms_norm_rows import RMS
from .silu_mul import SILU_MUL
from .variants import _ALLOCATE, _CALL, _FAKES

# the backward operator without need flags: its kernel computes and stores both gradients
BOTH_STORED = _edit(
    SILU_MUL,
    ("    BLOCK: tl.constexpr, NEED_A: tl.constexpr, NEED_B: tl.constexpr):",
     "    BLOCK: tl.constexpr):"),
    ("""    if NEED_A:
        grad_a = grad * b * sigmoid * (1 + a * (1 - sigmoid))
        tl.store(grad_a_ptr + offsets, grad_a.to(grad_a_ptr.dtype.element_ty), mask=mask)
    if NEED_B:
        tl.store(grad_b_ptr + offsets, (grad * a * sigmoid).to(grad_b_ptr.dtype.element_ty),
                 mask=mask)
""", """    grad_a = grad * b * sigmoid * (1 + a * (1 - sigmoid))
    tl.store(grad_a_ptr + offsets, grad_a.to(grad_a_ptr.dtype.element_ty), mask=mask)
    tl.store(grad_b_ptr + offsets, (grad * a * sigmoid).to(grad_b_ptr.dtype.element_ty),
             mask=mask)
"""),
    ("b: torch.Tensor, need_a: bool,\n                      need_b: bool) ->",
     "b: torch.Tensor) ->"),
    (_ALLOCATE, "    grad_a, grad_b = torch.empty_like(a), torch.empty_like(b)\n"),
    ("""a.numel(), BLOCK=BLOCK,
                                                               NEED_A=need_a, NEED_B=need_b)""",
     "a.numel(), BLOCK=BLOCK)"),
    ("def _(grad, a, b, need_a, need_b):\n" + _FAKES,
     "def _(grad, a, b):\n    return (torch.empty_like(a, memory_format=torch.contiguous_format),"
     "\n            torch.empty_like(b, memory_format=torch.contiguous_format))"),
    (_CALL, "    return silu_mul_backward(grad_output, a, b)\n"))

UNUSUAL: list = []

MISTAKES = [
    # review 76's S2 and R2: requires_grad read from the saved inputs
    Mistake("silu_mul", "the saved inputs' requires_grad read instead of ctx.needs_input_grad",
            "Does your backward read b.requires_grad?", _edit(
                SILU_MUL, ("for grad, needed in zip(grads, ctx.needs_input_grad))",
                           "for grad, needed in zip(\n"
                           "                         grads, (t.requires_grad for t in "
                           "ctx.saved_tensors)))"))),
    Mistake("silu_mul", "both gradients stored when only one input requires grad",
            "silu_mul's backward kernel stored a gradient for b, which needs none", BOTH_STORED),
    Mistake("rms_norm_rows", "the saved inputs' requires_grad read instead of "
            "ctx.needs_input_grad", "Does your backward read weight.requires_grad?", _edit(
                RMS, ("    return (grad_x if ctx.needs_input_grad[0] else None,\n"
                      "            grad_weight if ctx.needs_input_grad[1] else None, None)",
                      "    return (grad_x if x.requires_grad else None,\n"
                      "            grad_weight if weight.requires_grad else None, None)"))),
]
