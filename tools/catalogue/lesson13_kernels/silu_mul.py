"""Lesson 13: silu_mul's unusual-but-correct answers and named mistakes. Every entry defines
autograd_course::silu_mul(_backward) again: load and grade one entry before loading the next
(the dispatcher runs the newest definition)."""

from .. import Mistake, Unusual
from .common import HEADER, _edit

# the block of Triton's vector-add tutorial: the domain's large case (2**20 elements) then takes
# 1025 interpreted programs a pass, where the lesson's block of 256 takes 4100 (about 1 ms each)
SILU_MUL = HEADER + '''
BLOCK = 1024


@triton.jit
def silu_mul_kernel(a_ptr, b_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    a = tl.load(a_ptr + offsets, mask=mask)
    b = tl.load(b_ptr + offsets, mask=mask)
    if a.dtype != tl.float64:
        a, b = a.to(tl.float32), b.to(tl.float32)
    y = a / (1 + tl.exp(-a)) * b
    tl.store(y_ptr + offsets, y.to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def silu_mul_backward_kernel(grad_ptr, a_ptr, b_ptr, grad_a_ptr, grad_b_ptr, n,
                             BLOCK: tl.constexpr, NEED_A: tl.constexpr, NEED_B: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    grad = tl.load(grad_ptr + offsets, mask=mask)
    a = tl.load(a_ptr + offsets, mask=mask)
    b = tl.load(b_ptr + offsets, mask=mask)
    if a.dtype != tl.float64:
        grad, a, b = grad.to(tl.float32), a.to(tl.float32), b.to(tl.float32)
    sigmoid = 1 / (1 + tl.exp(-a))
    if NEED_A:
        grad_a = grad * b * sigmoid * (1 + a * (1 - sigmoid))
        tl.store(grad_a_ptr + offsets, grad_a.to(grad_a_ptr.dtype.element_ty), mask=mask)
    if NEED_B:
        tl.store(grad_b_ptr + offsets, (grad * a * sigmoid).to(grad_b_ptr.dtype.element_ty),
                 mask=mask)


@torch.library.custom_op("autograd_course::silu_mul", mutates_args=())
def silu_mul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    a, b = a.contiguous(), b.contiguous()
    y = torch.empty_like(a)
    silu_mul_kernel[(triton.cdiv(a.numel(), BLOCK),)](a, b, y, a.numel(), BLOCK=BLOCK)
    return y


@silu_mul.register_fake
def _(a, b):
    return torch.empty_like(a, memory_format=torch.contiguous_format)


@torch.library.custom_op("autograd_course::silu_mul_backward", mutates_args=())
def silu_mul_backward(grad: torch.Tensor, a: torch.Tensor, b: torch.Tensor, need_a: bool,
                      need_b: bool) -> tuple[torch.Tensor, torch.Tensor]:
    grad, a, b = grad.contiguous(), a.contiguous(), b.contiguous()
    grad_a = torch.empty_like(a) if need_a else a.new_empty(0)
    grad_b = torch.empty_like(b) if need_b else b.new_empty(0)
    silu_mul_backward_kernel[(triton.cdiv(a.numel(), BLOCK),)](grad, a, b, grad_a, grad_b,
                                                               a.numel(), BLOCK=BLOCK,
                                                               NEED_A=need_a, NEED_B=need_b)
    return grad_a, grad_b


@silu_mul_backward.register_fake
def _(grad, a, b, need_a, need_b):
    return (torch.empty_like(a, memory_format=torch.contiguous_format) if need_a
            else a.new_empty(0),
            torch.empty_like(b, memory_format=torch.contiguous_format) if need_b
            else b.new_empty(0))


def setup_context(ctx, inputs, output):
    ctx.save_for_backward(*inputs)


def backward(ctx, grad_output):
    a, b = ctx.saved_tensors
    return silu_mul_backward(grad_output, a, b, *ctx.needs_input_grad)


def none_where_not_needed(backward):
    """Rule 2: None for an input whose ctx.needs_input_grad entry is False."""
    def gated(ctx, grad_output):
        grads = backward(ctx, grad_output)
        return tuple(grad if needed else None
                     for grad, needed in zip(grads, ctx.needs_input_grad))
    return gated


backward = none_where_not_needed(backward)
silu_mul.register_autograd(backward, setup_context=setup_context)
'''


# Liger-Kernel's SwiGLU (src/liger_kernel/ops/swiglu.py): one program per row of the last
# dimension, BLOCK_SIZE the next power of two of the row; here writing fresh gradients where
# Liger overwrites its inputs' buffers, and keeping float64 in float64. Wrong for "any shape":
# a row past 2**20 elements needs a block larger than Triton accepts (review 79's W15).
LIGER_ROWS = _edit(
    SILU_MUL,
    ('''@triton.jit
def silu_mul_kernel(a_ptr, b_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
''', '''@triton.jit
def silu_mul_kernel(a_ptr, b_ptr, y_ptr, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    columns = tl.arange(0, BLOCK)
    mask = columns < n_cols
    offsets = row * stride + columns
'''),
    ('''    y = a / (1 + tl.exp(-a)) * b''', '''    y = a * tl.sigmoid(a) * b'''),
    ('''def silu_mul_backward_kernel(grad_ptr, a_ptr, b_ptr, grad_a_ptr, grad_b_ptr, n,
                             BLOCK: tl.constexpr, NEED_A: tl.constexpr, NEED_B: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
''', '''def silu_mul_backward_kernel(grad_ptr, a_ptr, b_ptr, grad_a_ptr, grad_b_ptr, stride, n_cols,
                             BLOCK: tl.constexpr, NEED_A: tl.constexpr, NEED_B: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    columns = tl.arange(0, BLOCK)
    mask = columns < n_cols
    offsets = row * stride + columns
'''),
    ('''    sigmoid = 1 / (1 + tl.exp(-a))
    if NEED_A:
        grad_a = grad * b * sigmoid * (1 + a * (1 - sigmoid))''',
     '''    sigmoid = tl.sigmoid(a)
    silu = a * sigmoid
    if NEED_A:
        grad_a = grad * (silu * (1 - sigmoid) + sigmoid) * b'''),
    ('''    a, b = a.contiguous(), b.contiguous()
    y = torch.empty_like(a)
    silu_mul_kernel[(triton.cdiv(a.numel(), BLOCK),)](a, b, y, a.numel(), BLOCK=BLOCK)
    return y''', '''    shape = a.shape
    width = shape[-1] if a.dim() else 1
    a, b = (t.reshape(-1, width).contiguous() for t in (a, b))
    y = torch.empty_like(a)
    if a.numel():
        silu_mul_kernel[(a.shape[0],)](a, b, y, a.stride(0), width,
                                       BLOCK=triton.next_power_of_2(width))
    return y.view(shape)'''),
    ('''    grad, a, b = grad.contiguous(), a.contiguous(), b.contiguous()
    grad_a = torch.empty_like(a) if need_a else a.new_empty(0)
    grad_b = torch.empty_like(b) if need_b else b.new_empty(0)
    silu_mul_backward_kernel[(triton.cdiv(a.numel(), BLOCK),)](grad, a, b, grad_a, grad_b,
                                                               a.numel(), BLOCK=BLOCK,
                                                               NEED_A=need_a, NEED_B=need_b)
    return grad_a, grad_b''', '''    shape = a.shape
    width = shape[-1] if a.dim() else 1
    grad, a, b = (t.reshape(-1, width).contiguous() for t in (grad, a, b))
    grad_a = torch.empty_like(a) if need_a else a.new_empty(0)
    grad_b = torch.empty_like(b) if need_b else b.new_empty(0)
    if a.numel():
        silu_mul_backward_kernel[(a.shape[0],)](grad, a, b, grad_a, grad_b, a.stride(0), width,
                                                BLOCK=triton.next_power_of_2(width),
                                                NEED_A=need_a, NEED_B=need_b)
    return (grad_a.view(shape) if need_a else grad_a,
            grad_b.view(shape) if need_b else grad_b)'''),
)

UNUSUAL = [
    Unusual("silu_mul", "a fixed grid of 4 programs, each looping over every 4th block",
            _edit(SILU_MUL,
                  ('''    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    a = tl.load(a_ptr + offsets, mask=mask)
    b = tl.load(b_ptr + offsets, mask=mask)
    if a.dtype != tl.float64:
        a, b = a.to(tl.float32), b.to(tl.float32)
    y = a / (1 + tl.exp(-a)) * b
    tl.store(y_ptr + offsets, y.to(y_ptr.dtype.element_ty), mask=mask)''',
                   '''    for start in range(tl.program_id(0) * BLOCK, n, 4 * BLOCK):
        offsets = start + tl.arange(0, BLOCK)
        mask = offsets < n
        a = tl.load(a_ptr + offsets, mask=mask)
        b = tl.load(b_ptr + offsets, mask=mask)
        if a.dtype != tl.float64:
            a, b = a.to(tl.float32), b.to(tl.float32)
        y = a * tl.sigmoid(a) * b
        tl.store(y_ptr + offsets, y.to(y_ptr.dtype.element_ty), mask=mask)'''),
                  ("silu_mul_kernel[(triton.cdiv(a.numel(), BLOCK),)]", "silu_mul_kernel[(4,)]"))),
    # (issue 37: the domain's large case, 2**20 elements, costs the interpreter about 1 ms a
    # program or loop step: blocks of 16 and 64, as these two had, took 92 s and 28 s)
    Unusual("silu_mul", "exp2 for the sigmoid, y = a * b / (1 + exp(-a))",
            _edit(SILU_MUL,
                  ("    sigmoid = 1 / (1 + tl.exp(-a))\n",
                   "    sigmoid = 1 / (1 + tl.exp2(-a * 1.4426950408889634))\n"),
                  ("    y = a / (1 + tl.exp(-a)) * b", "    y = a * b / (1 + tl.exp(-a))"))),
]

UNUSUAL += [
    Unusual("silu_mul", "half precision cast to float32 on the host; kernels see float32 or float64",
            _edit(SILU_MUL,
                  ("    a, b = a.contiguous(), b.contiguous()\n    y = torch.empty_like(a)\n"
                   "    silu_mul_kernel[(triton.cdiv(a.numel(), BLOCK),)](a, b, y, a.numel(), "
                   "BLOCK=BLOCK)\n    return y",
                   "    dtype = a.dtype\n    if dtype in (torch.float16, torch.bfloat16):\n"
                   "        a, b = a.float(), b.float()\n"
                   "    a, b = a.contiguous(), b.contiguous()\n    y = torch.empty_like(a)\n"
                   "    silu_mul_kernel[(triton.cdiv(a.numel(), BLOCK),)](a, b, y, a.numel(), "
                   "BLOCK=BLOCK)\n    return y.to(dtype)"),
                  ("    grad, a, b = grad.contiguous(), a.contiguous(), b.contiguous()\n",
                   "    dtype = a.dtype\n    if dtype in (torch.float16, torch.bfloat16):\n"
                   "        grad, a, b = grad.float(), a.float(), b.float()\n"
                   "    grad, a, b = grad.contiguous(), a.contiguous(), b.contiguous()\n"),
                  ("    return grad_a, grad_b\n\n\n@silu_mul_backward.register_fake",
                   "    return grad_a.to(dtype), grad_b.to(dtype)\n\n\n"
                   "@silu_mul_backward.register_fake"))),
    Unusual("silu_mul", "tl.where picking the branch whose exp cannot overflow; backward with "
            "tl.sigmoid, the derivative written with silu: s + silu (1 - s)",
            _edit(SILU_MUL, ("    y = a / (1 + tl.exp(-a)) * b",
                             "    y = tl.where(a > 0, a / (1 + tl.exp(-a)),\n"
                             "                 a * tl.exp(a) / (1 + tl.exp(a))) * b"),
                  ("    sigmoid = 1 / (1 + tl.exp(-a))\n", "    sigmoid = tl.sigmoid(a)\n"
                   "    silu = a * sigmoid\n"),
                  ("        grad_a = grad * b * sigmoid * (1 + a * (1 - sigmoid))",
                   "        grad_a = grad * b * (silu + sigmoid * (1 - silu))"))),
]

MISTAKES = [
    Mistake("silu_mul", "Liger-Kernel's layout: one program per row, a block per row",
            "exceeds triton maximum tensor numel", LIGER_ROWS),
    Mistake("silu_mul", "float64 computed in float32", "computes float64 inputs in float32",
            _edit(SILU_MUL,
                  ("    if a.dtype != tl.float64:\n        a, b = a.to(tl.float32), b.to(tl.float32)\n",
                   "    a, b = a.to(tl.float32), b.to(tl.float32)\n"))),
    Mistake("silu_mul", "sigmoid as exp(a) / (1 + exp(a))", "an exp that overflows",
            _edit(SILU_MUL,
                  ("    y = a / (1 + tl.exp(-a)) * b",
                   "    e = tl.exp(a)\n    y = a * e / (1 + e) * b"),
                  ("    sigmoid = 1 / (1 + tl.exp(-a))\n",
                   "    e = tl.exp(a)\n    sigmoid = e / (1 + e)\n"))),
    Mistake("silu_mul", "no mask on the tail", "kernel reads outside its tensors",
            _edit(SILU_MUL, ("    a = tl.load(a_ptr + offsets, mask=mask)\n"
                             "    b = tl.load(b_ptr + offsets, mask=mask)\n",
                             "    a = tl.load(a_ptr + offsets)\n"
                             "    b = tl.load(b_ptr + offsets)\n"),
                  ("    tl.store(y_ptr + offsets, y.to(y_ptr.dtype.element_ty), mask=mask)",
                   "    tl.store(y_ptr + offsets, y.to(y_ptr.dtype.element_ty))")),
            named=True, nbgrader=True),
    Mistake("silu_mul", "the output written into the input a", "modified its input a in place",
            _edit(SILU_MUL, ("    y = torch.empty_like(a)\n    silu_mul_kernel[(triton.cdiv("
                             "a.numel(), BLOCK),)](a, b, y, a.numel(), BLOCK=BLOCK)\n    return y",
                             "    silu_mul_kernel[(triton.cdiv(a.numel(), BLOCK),)](a, b, a, "
                             "a.numel(), BLOCK=BLOCK)\n    return a.clone()")),
            named=True),
    Mistake("silu_mul", "non-contiguous inputs read as flat memory",
            "right for contiguous inputs but wrong for the same values in a transposed",
            _edit(SILU_MUL, ("    a, b = a.contiguous(), b.contiguous()\n    y = torch.empty_like(a)",
                             "    y = torch.empty(a.shape, dtype=a.dtype, device=a.device)")),
            named=True),
    Mistake("silu_mul", "half precision loaded and never converted",
            "tl.exp and Triton's other math functions take float32 or float64",
            _edit(SILU_MUL, ("    if a.dtype != tl.float64:\n        a, b = a.to(tl.float32), "
                             "b.to(tl.float32)\n", "")),
            named=True),
    Mistake("silu_mul", "the backward kernel launched directly in backward",
            "launched a Triton kernel on a fake tensor",
            _edit(SILU_MUL, ("    return silu_mul_backward(grad_output, a, b, *ctx.needs_input_grad)",
                             "    grad_output, a, b = (t.contiguous() for t in (grad_output, a, b))\n"
                             "    grad_a, grad_b = torch.empty_like(a), torch.empty_like(b)\n"
                             "    silu_mul_backward_kernel[(triton.cdiv(a.numel(), BLOCK),)](\n"
                             "        grad_output, a, b, grad_a, grad_b, a.numel(), BLOCK=BLOCK,\n"
                             "        NEED_A=True, NEED_B=True)\n"
                             "    return grad_a, grad_b")),
            named=True),
    Mistake("silu_mul", "sigmoid computed on the host", "computes with torch ops (mul, sigmoid)",
            _edit(SILU_MUL, ("    a, b = a.contiguous(), b.contiguous()\n    y = torch.empty_like(a)",
                             "    a, b = (torch.sigmoid(a) * a).contiguous(), b.contiguous()\n"
                             "    y = torch.empty_like(a)"),
                  ("    y = a / (1 + tl.exp(-a)) * b", "    y = a * b")),
            named=True),
    Mistake("silu_mul", "the backward kernel launched twice, one gradient each",
            "backward launched 2 Triton kernels",
            _edit(SILU_MUL, ("    silu_mul_backward_kernel[(triton.cdiv(a.numel(), BLOCK),)](grad, a, b, "
                             "grad_a, grad_b,\n", "    grid = (triton.cdiv(a.numel(), BLOCK),)\n"
                             "    silu_mul_backward_kernel[grid](grad, a, b, grad_a, grad_b, a.numel(), "
                             "BLOCK=BLOCK,\n                                   NEED_A=need_a, "
                             "NEED_B=False)\n"
                             "    silu_mul_backward_kernel[(triton.cdiv(a.numel(), BLOCK),)](grad, a, b, "
                             "grad_a, grad_b,\n"),
                  ("NEED_A=need_a, NEED_B=need_b)", "NEED_A=False, NEED_B=need_b)")),
            named=True),
    Mistake("silu_mul", "register_fake always float32", "fake implementation returns shape (5, 3), "
            "torch.float32", _edit(SILU_MUL, ("    return torch.empty_like(a, memory_format=",
                                              "    return torch.empty_like(a, dtype=torch.float32, "
                                              "memory_format="))),
    Mistake("silu_mul", "register_fake with the input's strides", "fake implementation gives strides",
            _edit(SILU_MUL, ("@silu_mul.register_fake\ndef _(a, b):\n    return torch.empty_like("
                             "a, memory_format=torch.contiguous_format)",
                             "@silu_mul.register_fake\ndef _(a, b):\n    return torch.empty_like(a)")),
            named=True),
    Mistake("silu_mul", "grad_a written into grad_output's buffer",
            "backward modified grad_output in place",
            _edit(SILU_MUL, ("(grad, a, b, grad_a, grad_b,\n", "(grad, a, b, grad, grad_b,\n"),
                  ("    return grad_a, grad_b\n",
                   "    return grad.clone(), grad_b  # grad_a, computed in grad's buffer\n"))),
    Mistake("silu_mul", "no fake implementation", "without a fake implementation",
            _edit(SILU_MUL, ("@silu_mul.register_fake\ndef _(a, b):\n    return torch.empty_like("
                             "a, memory_format=torch.contiguous_format)\n", ""))),
]
