"""Lesson 13: silu_mul's mistakes of a backward operator copied from the worked example, whose
gradient was one number for one input (sum_of_squares), or from Liger-Kernel's SwiGLU, a
launch that fits small tensors only, a product left in the input's dtype (float16 passes;
Triton 3.9's interpreter computes bfloat16 on the raw bits), an output buffer kept from
call to call to save an allocation, a host fast path for small tensors, and a backward fake
shaped like grad_output."""

from .. import Mistake
from .common import _edit
from .silu_mul import SILU_MUL
from .variants import _ALLOCATE, _FAKES as TWO_FAKES

ONE_FAKE = "    return torch.empty_like(a, memory_format=torch.contiguous_format)"

OUTPUT = "    y = torch.empty_like(a)\n"
GLOBAL = ("BLOCK = 1024\n", "BLOCK = 1024\nOUTPUTS = {}  # an output buffer per (shape, dtype, device)\n")
KEPT = ("    key = (a.shape, a.dtype, a.device)\n"
        "    if key not in OUTPUTS:  # one allocation per shape\n"
        "        OUTPUTS[key] = torch.empty_like(a)\n"
        "    y = OUTPUTS[key]{view}\n")

MISTAKES = [
    Mistake("silu_mul", "grad_output loaded as one number, as for a 0-d gradient",
            "uses grad_output's first element for every element",
            _edit(SILU_MUL, ("    grad = tl.load(grad_ptr + offsets, mask=mask)\n",
                             "    grad = tl.load(grad_ptr)\n"))),
    Mistake("silu_mul", "the backward operator's fake returns one tensor for two",
            "a fake implementation returns one tensor where its operator returns a tuple",
            _edit(SILU_MUL, (TWO_FAKES, ONE_FAKE))),
    Mistake("silu_mul", "the backward operator's fake with the saved inputs' strides",
            "backward operator autograd_course.silu_mul_backward.default: its fake",
            _edit(SILU_MUL, (TWO_FAKES, "    return (torch.empty_like(a) if need_a else a.new_empty(0),\n"
                                        "            torch.empty_like(b) if need_b else b.new_empty(0))")),
            named=True),
    Mistake("silu_mul", "grad_output not made contiguous",
            "grad_output not made contiguous (an expanded gradient",
            _edit(SILU_MUL, ("    grad, a, b = grad.contiguous(), a.contiguous(), b.contiguous()\n",
                             "    a, b = a.contiguous(), b.contiguous()\n"))),
    Mistake("silu_mul", "the gradients written into a and b and returned (Liger-Kernel's way)",
            "returns one of its own inputs (or a view of one)",
            _edit(SILU_MUL, (_ALLOCATE, "    grad_a, grad_b = a, b\n"))),
    Mistake("silu_mul", "one program over the whole tensor, BLOCK = next_power_of_2(n) (issue 37)",
            "exceeds triton maximum tensor numel (1048576)", _edit(
                SILU_MUL,
                ("silu_mul_kernel[(triton.cdiv(a.numel(), BLOCK),)](a, b, y, a.numel(), BLOCK=BLOCK)",
                 "silu_mul_kernel[(1,)](a, b, y, a.numel(),\n"
                 "                          BLOCK=triton.next_power_of_2(max(a.numel(), 1)))"),
                ("silu_mul_backward_kernel[(triton.cdiv(a.numel(), BLOCK),)](grad, a, b, grad_a, grad_b,\n"
                 "                                                               a.numel(), BLOCK=BLOCK,",
                 "silu_mul_backward_kernel[(1,)](grad, a, b, grad_a, grad_b, a.numel(),\n"
                 "                                   BLOCK=triton.next_power_of_2(max(a.numel(), 1)),"))),
    Mistake("silu_mul", "silu(a) cast back to the input's dtype before the product with b",
            "computes a step in bfloat16 inside a kernel: while the bfloat16 call ran", _edit(
                SILU_MUL, ("""    if a.dtype != tl.float64:
        a, b = a.to(tl.float32), b.to(tl.float32)
    y = a / (1 + tl.exp(-a)) * b
""", """    if a.dtype != tl.float64:
        a = a.to(tl.float32)
    y = (a / (1 + tl.exp(-a))).to(b.dtype) * b  # the product in the input's dtype
"""))),
    Mistake("silu_mul", "the output buffer kept per shape and returned again by every call",
            "returns the same tensor object on two calls",
            _edit(SILU_MUL, GLOBAL, (OUTPUT, KEPT.format(view="")))),
    Mistake("silu_mul", "the output buffer kept per shape, a fresh view of it returned by every "
            "call (a later call overwrites an earlier call's output)",
            "a later call changed an earlier call's output",
            _edit(SILU_MUL, GLOBAL, (OUTPUT, KEPT.format(view="[...]"))), named=True),
]

# the review's W4 and W5 (issue of lesson 13's third review): a host fast path below 9 elements
# (checked at 37 elements only, it passed), and a backward fake shaped like grad (the saved
# inputs were transposed, grad_output contiguous: the fake matched)
MISTAKES += [
    Mistake("silu_mul", "a host fast path for small tensors: F.silu(a) * b below 9 elements",
            "computes with torch ops", _edit(
                SILU_MUL,
                ("    a, b = a.contiguous(), b.contiguous()\n    y = torch.empty_like(a)\n",
                 "    if a.numel() <= 8:  # a launch costs more than it saves on a handful\n"
                 "        return torch.nn.functional.silu(a) * b\n"
                 "    a, b = a.contiguous(), b.contiguous()\n    y = torch.empty_like(a)\n"),
                ("    grad, a, b = grad.contiguous(), a.contiguous(), b.contiguous()\n",
                 "    if a.numel() <= 8:  # same fast path\n"
                 "        s = torch.sigmoid(a)\n"
                 "        return grad * b * s * (1 + a * (1 - s)), grad * a * s\n"
                 "    grad, a, b = grad.contiguous(), a.contiguous(), b.contiguous()\n"))),
    Mistake("silu_mul", "the backward operator's fake returns empty_like(grad), grad's strides",
            "backward operator autograd_course.silu_mul_backward.default: its fake",
            _edit(SILU_MUL, (TWO_FAKES, "    return torch.empty_like(grad), torch.empty_like(grad)"))),
]
