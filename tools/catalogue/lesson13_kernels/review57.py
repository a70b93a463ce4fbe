"""Lesson 13: what review 57 (round C) found passing, now named: silu_mul's gradient for b
formed as a float16 product, grad_output * silu(a), which the float16 check with grad_output 1
never showed (the gradient for b is then silu(a) itself); and the same for the gradient for a,
grad_output times a float16 b * silu'(a); in bfloat16 the interpreter names the step; and a
bfloat16 grad_output carried to the backward kernel as float16 (inf past 65504)."""

from .. import Mistake
from .common import _edit
from .silu_mul import SILU_MUL

_GRAD_B = ("    tl.store(grad_b_ptr + offsets, (grad * a * sigmoid).to(grad_b_ptr.dtype.element_ty),\n"
           "             mask=mask)\n")
_GRAD_A = "    grad_a = grad * b * sigmoid * (1 + a * (1 - sigmoid))\n"


def _half_grad_b(dtype: str) -> str:
    """The gradient for b formed in ``dtype`` from grad_output and silu(a) rounded to it."""
    return _edit(SILU_MUL, (_GRAD_B, (
        f"    if grad_b_ptr.dtype.element_ty == tl.{dtype}:\n"
        f"        grad_b = grad.to(tl.{dtype}) * (a * sigmoid).to(tl.{dtype})\n"
        "    else:\n"
        "        grad_b = (grad * a * sigmoid).to(grad_b_ptr.dtype.element_ty)\n"
        "    tl.store(grad_b_ptr + offsets, grad_b, mask=mask)\n")))


MISTAKES = [
    Mistake("silu_mul", "float16 backward: the gradient for b as grad_output * silu(a) in float16",
            "gradient for b in float16 is", _half_grad_b("float16")),
    Mistake("silu_mul", "bfloat16 backward: the gradient for b as grad_output * silu(a) in "
            "bfloat16", "computes a step in bfloat16 inside a kernel", _half_grad_b("bfloat16")),
    Mistake("silu_mul", "float16 backward: grad_output times b * silu'(a) rounded to float16",
            "gradient for a in float16 is", _edit(SILU_MUL, (_GRAD_A, _GRAD_A + (
                "    if grad_a_ptr.dtype.element_ty == tl.float16:\n"
                "        grad_a = grad.to(tl.float16) * (b * sigmoid * (1 + a * (1 - sigmoid)))"
                ".to(tl.float16)\n")))),
    Mistake("silu_mul", "a bfloat16 grad_output carried to the backward kernel as float16",
            "in bfloat16, where it is finite", _edit(SILU_MUL, (
                "    grad, a, b = grad.contiguous(), a.contiguous(), b.contiguous()\n",
                "    grad, a, b = grad.contiguous(), a.contiguous(), b.contiguous()\n"
                "    if grad.dtype == torch.bfloat16:\n"
                "        grad = grad.half()  # the kernel computes in float32 anyway\n"))),
]
