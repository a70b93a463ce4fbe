"""Lesson 13: silu_mul's answers whose kernels, launches or registrations go wrong in ways the
targeted probes name (half-precision steps, buffers and sizes kept between calls, outputs
sharing memory, a saved output divided back, a triton_op, a backward fake that ignores the need
flags, an output made like a transposed input), and correct ones written otherwise."""

from .. import Mistake, Unusual
from .common import _edit
from .silu_mul import SILU_MUL
from .variants import (SILU_FROM_SAVED_OUTPUT, STACKED, _ALLOCATE, _BACKWARD_LAUNCH,
                       _BACKWARD_MASK, _CALL, _FAKES, _FORWARD, _FORWARD_FLOAT32, _FORWARD_LAUNCH, _GRAD_A, _KEPT,
                       _LIST_FAKES, _OP, _TUPLE, _TWO_SIZES, _chunked, _half_grad_b)


UNUSUAL = [
    Unusual("silu_mul", "a backward operator declared to return list[Tensor], two fresh tensors",
            _edit(SILU_MUL,
                  (_TUPLE, "                      need_b: bool) -> list[torch.Tensor]:"),
                  ("    return grad_a, grad_b\n", "    return [grad_a, grad_b]\n"),
                  (_FAKES, _LIST_FAKES),
                  (_CALL, "    grad_a, grad_b = silu_mul_backward(grad_output, a, b,\n"
                          "                                       *ctx.needs_input_grad)\n"
                          "    return grad_a, grad_b\n"))),
]


MISTAKES = [
    # review 80's W31: opcheck of the backward operator with b frozen fails on this fake
    Mistake("silu_mul", "the backward operator's fake always returns two full-size gradients",
            "its fake implementation gives output 0 shape", _edit(
                SILU_MUL, ("    return (torch.empty_like(a, memory_format=torch.contiguous_format) if need_a\n"
                           "            else a.new_empty(0),\n"
                           "            torch.empty_like(b, memory_format=torch.contiguous_format) if need_b\n"
                           "            else b.new_empty(0))",
                           "    return (torch.empty_like(a, memory_format=torch.contiguous_format),\n"
                           "            torch.empty_like(b, memory_format=torch.contiguous_format))"))),
    # review 80's W8: y made like a transposed a, then the inputs made contiguous
    Mistake("silu_mul", "the output made with empty_like(a) before a.contiguous()",
            "the tensor it writes into took a's layout", _edit(
                SILU_MUL, ("    a, b = a.contiguous(), b.contiguous()\n    y = torch.empty_like(a)\n",
                           "    y = torch.empty_like(a)\n    a, b = a.contiguous(), b.contiguous()\n"))),
    Mistake("silu_mul", "silu and sigmoid recovered from the saved output, y / b and silu / a",
            "not finite where a or b is 0", SILU_FROM_SAVED_OUTPUT),
    Mistake("silu_mul", "two gradients returned as views of one buffer",
            "returns outputs that alias each other", _edit(
                SILU_MUL,
                (_ALLOCATE,
                 "    both = torch.empty((2, *a.shape), dtype=a.dtype, device=a.device)\n"
                 "    grad_a, grad_b = both[0], both[1]\n"))),
    Mistake("silu_mul", "the forward operator a torch.library.triton_op",
            "is a torch.library.triton_op", _edit(
                SILU_MUL,
                ('@torch.library.custom_op("autograd_course::silu_mul", mutates_args=())',
                 '@torch.library.triton_op("autograd_course::silu_mul", mutates_args=())'))),
    Mistake("silu_mul", "the backward kernel launched once per 2**16 elements",
            "silu_mul's backward launched", _chunked(1 << 16)),
    Mistake("silu_mul", "the backward kernel launched once per 2**20 elements",
            "silu_mul's backward launched", _chunked(1 << 20)),
    Mistake("silu_mul", "sigmoid's derivative as exp(-a) * sigmoid**2",
            "inf * 0", _edit(
                SILU_MUL,
                ("    sigmoid = 1 / (1 + tl.exp(-a))\n", "    e = tl.exp(-a)\n    sigmoid = 1 / (1 + e)\n"),
                ("        grad_a = grad * b * sigmoid * (1 + a * (1 - sigmoid))\n",
                 "        grad_a = grad * b * (sigmoid + a * e * sigmoid * sigmoid)\n"))),
    Mistake("silu_mul", "the backward operator returns one (2, ...) tensor, its rows the two "
            "gradients", "gradients for a and b are views of one buffer", STACKED),
    Mistake("silu_mul", "float16: sigmoid in float32, the two products in float16",
            "where sigmoid(a) and silu(a) lie below float16's smallest normal", _edit(
                SILU_MUL, (_FORWARD_FLOAT32, """    if a.dtype == tl.float16:  # products in float16
        s = 1 / (1 + tl.exp(-a.to(tl.float32)))
        y = (a * s.to(tl.float16)) * b
    else:
        if a.dtype != tl.float64:
            a, b = a.to(tl.float32), b.to(tl.float32)
        y = a / (1 + tl.exp(-a)) * b
"""))),
    Mistake("silu_mul", "float16: silu(a) in float32, the product with b in float16",
            "where sigmoid(a) and silu(a) lie below float16's smallest normal", _edit(
                SILU_MUL, (_FORWARD_FLOAT32, """    if a.dtype == tl.float16:  # silu rounded to float16
        a32 = a.to(tl.float32)
        y = (a32 / (1 + tl.exp(-a32))).to(tl.float16) * b
    else:
        if a.dtype != tl.float64:
            a, b = a.to(tl.float32), b.to(tl.float32)
        y = a / (1 + tl.exp(-a)) * b
"""))),
    Mistake("silu_mul", "the element count kept in a module global by forward, read by backward",
            _TWO_SIZES, _edit(
                SILU_MUL,
                (_FORWARD_LAUNCH, "    STATE['n'] = a.numel()\n" + _FORWARD_LAUNCH),
                ("BLOCK = 1024\n", "BLOCK = 1024\nSTATE = {}\n"),
                ("                                                               a.numel(), "
                 "BLOCK=BLOCK,",
                 "                                                               STATE['n'], "
                 "BLOCK=BLOCK,"))),
    Mistake("silu_mul", "the launch grid kept in a module global by forward, reused by backward",
            _TWO_SIZES, _edit(
                SILU_MUL,
                (_FORWARD_LAUNCH,
                 "    global GRID\n    GRID = (triton.cdiv(a.numel(), BLOCK),)\n"
                 "    silu_mul_kernel[GRID](a, b, y, a.numel(), BLOCK=BLOCK)\n"),
                (_BACKWARD_LAUNCH,
                 "    silu_mul_backward_kernel[GRID](grad, a, b, grad_a, grad_b,\n"))),
    Mistake("silu_mul", "float16 backward: grad_output * b in float16, the rest in float32",
            "grad_output * b computed in float16 overflows", _edit(
                SILU_MUL,
                ("        grad, a, b = grad.to(tl.float32), a.to(tl.float32), b.to(tl.float32)\n"
                 "    sigmoid = 1 / (1 + tl.exp(-a))\n",
                 "        gb = grad.to(tl.float32) * b.to(tl.float32)\n"
                 "        if a.dtype == tl.float16:\n"
                 "            gb = (grad * b).to(tl.float32)  # only exp needs float32\n"
                 "        grad, a, b = grad.to(tl.float32), a.to(tl.float32), b.to(tl.float32)\n"
                 "    else:\n"
                 "        gb = grad * b\n"
                 "    sigmoid = 1 / (1 + tl.exp(-a))\n"),
                ("        grad_a = grad * b * sigmoid * (1 + a * (1 - sigmoid))\n",
                 "        grad_a = gb * sigmoid * (1 + a * (1 - sigmoid))\n"))),
    Mistake("silu_mul", "sigmoid taken as 1 past a = 15 (a float32-tuned fast path)",
            "in float64 is", _edit(
                SILU_MUL,
                ("    y = a / (1 + tl.exp(-a)) * b\n",
                 "    y = tl.where(a > 15.0, a, a / (1 + tl.exp(-a))) * b\n"),
                ("    sigmoid = 1 / (1 + tl.exp(-a))\n",
                 "    sigmoid = tl.where(a > 15.0, 1.0, 1 / (1 + tl.exp(-a)))\n"))),
    Mistake("silu_mul", "float16 backward: the gradient for b as grad_output * silu(a) in float16",
            "gradient for b in float16 is", _half_grad_b("float16")),
    Mistake("silu_mul", "bfloat16 backward: the gradient for b as grad_output * silu(a) in "
            "bfloat16", "computes a step in bfloat16 inside a kernel", _half_grad_b("bfloat16")),
    Mistake("silu_mul", "float16 backward: grad_output times b * silu'(a) rounded to float16",
            "gradient for a in float16 is", _edit(SILU_MUL, (_GRAD_A, _GRAD_A + (
                "        if grad_a_ptr.dtype.element_ty == tl.float16:\n"
                "            grad_a = grad.to(tl.float16) * (b * sigmoid * (1 + a * (1 - sigmoid)))"
                ".to(tl.float16)\n")))),
    Mistake("silu_mul", "a bfloat16 grad_output carried to the backward kernel as float16",
            "in bfloat16, where it is finite", _edit(SILU_MUL, (
                "    grad, a, b = grad.contiguous(), a.contiguous(), b.contiguous()\n",
                "    grad, a, b = grad.contiguous(), a.contiguous(), b.contiguous()\n"
                "    if grad.dtype == torch.bfloat16:\n"
                "        grad = grad.half()  # the kernel computes in float32 anyway\n"))),
    Mistake("silu_mul", "float16/bfloat16: a float32 staging buffer kept per size in a global, "
            "cast to a fresh output", _KEPT, _edit(SILU_MUL, (_FORWARD, (
                "    if a.dtype in (torch.float16, torch.bfloat16):\n"
                "        key = (a.numel(), a.device)\n"
                "        if key not in _STAGING:\n"
                "            _STAGING[key] = torch.empty(a.numel(), device=a.device,\n"
                "                                        dtype=torch.float32)\n"
                "        y = _STAGING[key]\n"
                "    else:\n"
                "        y = torch.empty_like(a)\n"
                "    silu_mul_kernel[(triton.cdiv(a.numel(), BLOCK),)](a, b, y, a.numel(), "
                "BLOCK=BLOCK)\n    return y.view(a.shape).to(a.dtype)\n")),
                (_OP, "_STAGING = {}\n\n\n" + _OP))),
    Mistake("silu_mul", "every dtype: the output buffer kept per shape in a global, a clone "
            "returned", _KEPT, _edit(SILU_MUL, ("    y = torch.empty_like(a)\n", (
                "    y = _KEPT.setdefault((a.shape, a.dtype, a.device), torch.empty_like(a))\n")),
                ("    return y\n", "    return y.clone()\n"), (_OP, "_KEPT = {}\n\n\n" + _OP))),
    Mistake("silu_mul", "the backward kernel's mask offsets <= n, one lane too many",
            "reads outside its tensors on lanes past the end", _edit(SILU_MUL, _BACKWARD_MASK)),
    Mistake("silu_mul", "sigmoid clipped to 0 below a = -20, forward and backward",
            "a tail cut to 0 past some |a|", _edit(
                SILU_MUL, ("    y = a / (1 + tl.exp(-a)) * b",
                           "    y = tl.where(a < -20.0, 0.0, a / (1 + tl.exp(-a))) * b"),
                ("    sigmoid = 1 / (1 + tl.exp(-a))\n",
                 "    sigmoid = tl.where(a < -20.0, 0.0, 1 / (1 + tl.exp(-a)))\n"))),
    Mistake("silu_mul", "a contiguous copy of b cached by data_ptr between calls",
            "keeps a copy of b from an earlier call",
            _edit(SILU_MUL, ("\nBLOCK = 1024\n", "\nBLOCK = 1024\n_B_CACHE = {}\n"),
                  ("    a, b = a.contiguous(), b.contiguous()\n    y = torch.empty_like(a)\n",
                   "    key = (b.data_ptr(), b.shape, b.dtype)\n"
                   "    if key not in _B_CACHE:\n"
                   "        _B_CACHE.clear()\n"
                   "        _B_CACHE[key] = b.contiguous().clone()\n"
                   "    a, b = a.contiguous(), _B_CACHE[key]\n    y = torch.empty_like(a)\n"))),
]
