"""Lesson 13 (your own kernels): unusual-but-correct answers and named mistakes.

Each entry starts as the lesson's first cell does (the interpreter without a GPU, set before a
kernel is defined) and defines the operators of autograd_course again: load one entry and
grade it before loading the next (the dispatcher runs the newest definition).
"""

from . import Mistake, Unusual

HEADER = '''
import os

if not torch.cuda.is_available():
    os.environ["TRITON_INTERPRET"] = "1"
import triton
import triton.language as tl
'''

SILU_MUL = HEADER + '''
BLOCK = 256


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
                             BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    grad = tl.load(grad_ptr + offsets, mask=mask)
    a = tl.load(a_ptr + offsets, mask=mask)
    b = tl.load(b_ptr + offsets, mask=mask)
    if a.dtype != tl.float64:
        grad, a, b = grad.to(tl.float32), a.to(tl.float32), b.to(tl.float32)
    sigmoid = 1 / (1 + tl.exp(-a))
    grad_a = grad * b * sigmoid * (1 + a * (1 - sigmoid))
    tl.store(grad_a_ptr + offsets, grad_a.to(grad_a_ptr.dtype.element_ty), mask=mask)
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
def silu_mul_backward(grad: torch.Tensor, a: torch.Tensor,
                      b: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    grad, a, b = grad.contiguous(), a.contiguous(), b.contiguous()
    grad_a, grad_b = torch.empty_like(a), torch.empty_like(b)
    silu_mul_backward_kernel[(triton.cdiv(a.numel(), BLOCK),)](grad, a, b, grad_a, grad_b,
                                                               a.numel(), BLOCK=BLOCK)
    return grad_a, grad_b


@silu_mul_backward.register_fake
def _(grad, a, b):
    return (torch.empty_like(a, memory_format=torch.contiguous_format),
            torch.empty_like(b, memory_format=torch.contiguous_format))


def setup_context(ctx, inputs, output):
    ctx.save_for_backward(*inputs)


def backward(ctx, grad_output):
    a, b = ctx.saved_tensors
    return silu_mul_backward(grad_output, a, b)


silu_mul.register_autograd(backward, setup_context=setup_context)
'''


def _edit(base: str, *replacements) -> str:
    """``base`` with each (old, new) replaced once; fails loudly if ``old`` is missing."""
    for old, new in replacements:
        assert old in base, old
        base = base.replace(old, new, 1)
    return base


# Liger-Kernel's SwiGLU (src/liger_kernel/ops/swiglu.py): one program per row of the last
# dimension, BLOCK_SIZE the next power of two of the row; here writing fresh gradients where
# Liger overwrites its inputs' buffers, and keeping float64 in float64.
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
                             BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
''', '''def silu_mul_backward_kernel(grad_ptr, a_ptr, b_ptr, grad_a_ptr, grad_b_ptr, stride, n_cols,
                             BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    columns = tl.arange(0, BLOCK)
    mask = columns < n_cols
    offsets = row * stride + columns
'''),
    ('''    sigmoid = 1 / (1 + tl.exp(-a))
    grad_a = grad * b * sigmoid * (1 + a * (1 - sigmoid))''',
     '''    sigmoid = tl.sigmoid(a)
    silu = a * sigmoid
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
    grad_a, grad_b = torch.empty_like(a), torch.empty_like(b)
    silu_mul_backward_kernel[(triton.cdiv(a.numel(), BLOCK),)](grad, a, b, grad_a, grad_b,
                                                               a.numel(), BLOCK=BLOCK)
    return grad_a, grad_b''', '''    shape = a.shape
    width = shape[-1] if a.dim() else 1
    grad, a, b = (t.reshape(-1, width).contiguous() for t in (grad, a, b))
    grad_a, grad_b = torch.empty_like(a), torch.empty_like(b)
    if a.numel():
        silu_mul_backward_kernel[(a.shape[0],)](grad, a, b, grad_a, grad_b, a.stride(0), width,
                                                BLOCK=triton.next_power_of_2(width))
    return grad_a.view(shape), grad_b.view(shape)'''),
)

UNUSUAL = [
    Unusual("silu_mul", "Liger-Kernel's layout: one program per row, a block per row",
            LIGER_ROWS),
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
                  ("silu_mul_kernel[(triton.cdiv(a.numel(), BLOCK),)]", "silu_mul_kernel[(4,)]"),
                  ("BLOCK = 256", "BLOCK = 64"))),
    Unusual("silu_mul", "a block of 16 and exp2 for the sigmoid",
            _edit(SILU_MUL,
                  ("BLOCK = 256", "BLOCK = 16"),
                  ("    sigmoid = 1 / (1 + tl.exp(-a))\n",
                   "    sigmoid = 1 / (1 + tl.exp2(-a * 1.4426950408889634))\n"),
                  ("    y = a / (1 + tl.exp(-a)) * b", "    y = a * b / (1 + tl.exp(-a))"))),
    Unusual("silu_mul", "registered by name: torch.library.register_fake and register_autograd",
            _edit(SILU_MUL,
                  ("@silu_mul.register_fake\ndef _(a, b):",
                   '@torch.library.register_fake("autograd_course::silu_mul")\ndef _(a, b):'),
                  ("silu_mul.register_autograd(backward, setup_context=setup_context)",
                   'torch.library.register_autograd("autograd_course::silu_mul", backward,\n'
                   '                                setup_context=setup_context)'))),
]

MISTAKES = [
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
            _edit(SILU_MUL, ("    return silu_mul_backward(grad_output, a, b)",
                             "    grad_output, a, b = (t.contiguous() for t in (grad_output, a, b))\n"
                             "    grad_a, grad_b = torch.empty_like(a), torch.empty_like(b)\n"
                             "    silu_mul_backward_kernel[(triton.cdiv(a.numel(), BLOCK),)](\n"
                             "        grad_output, a, b, grad_a, grad_b, a.numel(), BLOCK=BLOCK)\n"
                             "    return grad_a, grad_b")),
            named=True),
    Mistake("silu_mul", "sigmoid computed on the host", "computes with torch ops (mul, sigmoid)",
            _edit(SILU_MUL, ("    a, b = a.contiguous(), b.contiguous()\n    y = torch.empty_like(a)",
                             "    a, b = (torch.sigmoid(a) * a).contiguous(), b.contiguous()\n"
                             "    y = torch.empty_like(a)"),
                  ("    y = a / (1 + tl.exp(-a)) * b", "    y = a * b")),
            named=True),
    Mistake("silu_mul", "no fake implementation", "without a fake implementation",
            _edit(SILU_MUL, ("@silu_mul.register_fake\ndef _(a, b):\n    return torch.empty_like("
                             "a, memory_format=torch.contiguous_format)\n", ""))),
]

RMS = HEADER + '''

@triton.jit
def rms_norm_kernel(x_ptr, w_ptr, y_ptr, rstd_ptr, D, eps, BLOCK_D: tl.constexpr):
    row = tl.program_id(0)
    columns = tl.arange(0, BLOCK_D)
    mask = columns < D
    x = tl.load(x_ptr + row * D + columns, mask=mask, other=0.0)
    w = tl.load(w_ptr + columns, mask=mask, other=0.0)
    if x.dtype != tl.float64:
        x, w = x.to(tl.float32), w.to(tl.float32)
    rstd = 1 / tl.sqrt(tl.sum(x * x, axis=0) / D + eps)
    tl.store(rstd_ptr + row, rstd.to(rstd_ptr.dtype.element_ty))
    tl.store(y_ptr + row * D + columns, (x * rstd * w).to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def rms_norm_backward_kernel(grad_ptr, x_ptr, w_ptr, rstd_ptr, grad_x_ptr, partial_w_ptr, D,
                             BLOCK_D: tl.constexpr):
    row = tl.program_id(0)
    columns = tl.arange(0, BLOCK_D)
    mask = columns < D
    grad = tl.load(grad_ptr + row * D + columns, mask=mask, other=0.0)
    x = tl.load(x_ptr + row * D + columns, mask=mask, other=0.0)
    w = tl.load(w_ptr + columns, mask=mask, other=0.0)
    if x.dtype != tl.float64:
        grad, x, w = grad.to(tl.float32), x.to(tl.float32), w.to(tl.float32)
    rstd = tl.load(rstd_ptr + row)
    x_hat = x * rstd
    grad_hat = grad * w
    grad_x = rstd * (grad_hat - x_hat * tl.sum(grad_hat * x_hat, axis=0) / D)
    tl.store(grad_x_ptr + row * D + columns, grad_x.to(grad_x_ptr.dtype.element_ty), mask=mask)
    tl.store(partial_w_ptr + row * D + columns, (grad * x_hat).to(
        partial_w_ptr.dtype.element_ty), mask=mask)


@torch.library.custom_op("autograd_course::rms_norm_rows", mutates_args=())
def rms_norm_rows_forward(x: torch.Tensor, weight: torch.Tensor,
                          eps: float) -> tuple[torch.Tensor, torch.Tensor]:
    D = x.shape[-1]
    rows = x.reshape(-1, D).contiguous()
    y = torch.empty_like(rows)
    rstd = torch.empty(rows.shape[0], device=x.device,
                       dtype=torch.float64 if x.dtype == torch.float64 else torch.float32)
    if rows.shape[0]:
        rms_norm_kernel[(rows.shape[0],)](rows, weight.contiguous(), y, rstd, D, eps,
                                          BLOCK_D=triton.next_power_of_2(D))
    return y.view(x.shape), rstd


@rms_norm_rows_forward.register_fake
def _(x, weight, eps):
    rstd_dtype = torch.float64 if x.dtype == torch.float64 else torch.float32
    return (torch.empty(x.shape, dtype=x.dtype, device=x.device),
            x.new_empty(x.shape[:-1].numel(), dtype=rstd_dtype))


@torch.library.custom_op("autograd_course::rms_norm_rows_backward", mutates_args=())
def rms_norm_rows_backward(grad_y: torch.Tensor, x: torch.Tensor, weight: torch.Tensor,
                           rstd: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    D = x.shape[-1]
    rows, grad_rows = x.reshape(-1, D).contiguous(), grad_y.reshape(-1, D).contiguous()
    grad_x = torch.empty_like(rows)
    partial_w = torch.empty(rows.shape, device=x.device, dtype=rstd.dtype)
    if rows.shape[0]:
        rms_norm_backward_kernel[(rows.shape[0],)](grad_rows, rows, weight.contiguous(), rstd,
                                                   grad_x, partial_w, D,
                                                   BLOCK_D=triton.next_power_of_2(D))
    return grad_x.view(x.shape), partial_w.sum(0).to(weight.dtype)


@rms_norm_rows_backward.register_fake
def _(grad_y, x, weight, rstd):
    return torch.empty_like(x, memory_format=torch.contiguous_format), torch.empty_like(weight)


def setup_context(ctx, inputs, output):
    x, weight, eps = inputs
    ctx.save_for_backward(x, weight, output[1])


def backward(ctx, grad_y, grad_rstd):
    x, weight, rstd = ctx.saved_tensors
    grad_x, grad_weight = rms_norm_rows_backward(grad_y, x, weight, rstd)
    return grad_x, grad_weight, None


rms_norm_rows_forward.register_autograd(backward, setup_context=setup_context)


def rms_norm_rows(x, weight, eps):
    return rms_norm_rows_forward(x, weight, eps)[0]
'''

UNUSUAL += [
    Unusual("rms_norm_rows", "a program per block of 4 rows, a (4, BLOCK_D) block",
            _edit(RMS,
                  ('''    row = tl.program_id(0)
    columns = tl.arange(0, BLOCK_D)
    mask = columns < D
    x = tl.load(x_ptr + row * D + columns, mask=mask, other=0.0)
    w = tl.load(w_ptr + columns, mask=mask, other=0.0)
    if x.dtype != tl.float64:
        x, w = x.to(tl.float32), w.to(tl.float32)
    rstd = 1 / tl.sqrt(tl.sum(x * x, axis=0) / D + eps)
    tl.store(rstd_ptr + row, rstd.to(rstd_ptr.dtype.element_ty))
    tl.store(y_ptr + row * D + columns, (x * rstd * w).to(y_ptr.dtype.element_ty), mask=mask)''',
                   '''    rows = tl.program_id(0) * 4 + tl.arange(0, 4)
    columns = tl.arange(0, BLOCK_D)
    mask = (rows[:, None] < n_rows) & (columns[None, :] < D)
    offsets = rows[:, None] * D + columns[None, :]
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    w = tl.load(w_ptr + columns, mask=columns < D, other=0.0)
    if x.dtype != tl.float64:
        x, w = x.to(tl.float32), w.to(tl.float32)
    rstd = 1 / tl.sqrt(tl.sum(x * x, axis=1) / D + eps)
    tl.store(rstd_ptr + rows, rstd.to(rstd_ptr.dtype.element_ty), mask=rows < n_rows)
    y = x * rstd[:, None] * w[None, :]
    tl.store(y_ptr + offsets, y.to(y_ptr.dtype.element_ty), mask=mask)'''),
                  ("def rms_norm_kernel(x_ptr, w_ptr, y_ptr, rstd_ptr, D, eps,",
                   "def rms_norm_kernel(x_ptr, w_ptr, y_ptr, rstd_ptr, n_rows, D, eps,"),
                  ("        rms_norm_kernel[(rows.shape[0],)](rows, weight.contiguous(), y, rstd, D, eps,",
                   "        rms_norm_kernel[(triton.cdiv(rows.shape[0], 4),)](\n"
                   "            rows, weight.contiguous(), y, rstd, rows.shape[0], D, eps,"))),
    Unusual("rms_norm_rows", "two-stage weight gradient: 3 programs loop over rows, "
            "one partial row each (Liger-Kernel's layout)",
            _edit(RMS,
                  ('''    row = tl.program_id(0)
    columns = tl.arange(0, BLOCK_D)
    mask = columns < D
    grad = tl.load(grad_ptr + row * D + columns, mask=mask, other=0.0)
    x = tl.load(x_ptr + row * D + columns, mask=mask, other=0.0)
    w = tl.load(w_ptr + columns, mask=mask, other=0.0)
    if x.dtype != tl.float64:
        grad, x, w = grad.to(tl.float32), x.to(tl.float32), w.to(tl.float32)
    rstd = tl.load(rstd_ptr + row)
    x_hat = x * rstd
    grad_hat = grad * w
    grad_x = rstd * (grad_hat - x_hat * tl.sum(grad_hat * x_hat, axis=0) / D)
    tl.store(grad_x_ptr + row * D + columns, grad_x.to(grad_x_ptr.dtype.element_ty), mask=mask)
    tl.store(partial_w_ptr + row * D + columns, (grad * x_hat).to(
        partial_w_ptr.dtype.element_ty), mask=mask)''',
                   '''    program = tl.program_id(0)
    columns = tl.arange(0, BLOCK_D)
    mask = columns < D
    w = tl.load(w_ptr + columns, mask=mask, other=0.0)
    if w.dtype != tl.float64:
        w = w.to(tl.float32)
    grad_w = tl.zeros((BLOCK_D,), dtype=w.dtype)
    for row in range(program, n_rows, 3):
        grad = tl.load(grad_ptr + row * D + columns, mask=mask, other=0.0).to(w.dtype)
        x = tl.load(x_ptr + row * D + columns, mask=mask, other=0.0).to(w.dtype)
        rstd = tl.load(rstd_ptr + row).to(w.dtype)
        x_hat = x * rstd
        grad_hat = grad * w
        grad_x = rstd * (grad_hat - x_hat * tl.sum(grad_hat * x_hat, axis=0) / D)
        tl.store(grad_x_ptr + row * D + columns, grad_x.to(grad_x_ptr.dtype.element_ty),
                 mask=mask)
        grad_w += grad * x_hat
    tl.store(partial_w_ptr + program * D + columns, grad_w.to(partial_w_ptr.dtype.element_ty),
             mask=mask)'''),
                  ("def rms_norm_backward_kernel(grad_ptr, x_ptr, w_ptr, rstd_ptr, grad_x_ptr, "
                   "partial_w_ptr, D,", "def rms_norm_backward_kernel(grad_ptr, x_ptr, w_ptr, "
                   "rstd_ptr, grad_x_ptr, partial_w_ptr, n_rows, D,"),
                  ("    partial_w = torch.empty(rows.shape, device=x.device, dtype=rstd.dtype)",
                   "    partial_w = torch.empty((3, D), device=x.device, dtype=rstd.dtype)"),
                  ("    if rows.shape[0]:\n        rms_norm_backward_kernel[(rows.shape[0],)](grad_rows, "
                   "rows, weight.contiguous(), rstd,\n                                                   "
                   "grad_x, partial_w, D,",
                   "    if True:\n        rms_norm_backward_kernel[(3,)](grad_rows, rows, "
                   "weight.contiguous(), rstd,\n                                       "
                   "grad_x, partial_w, rows.shape[0], D,"))),
    Unusual("rms_norm_rows", "rows longer than the block: a loop over the row in blocks of 64",
            _edit(RMS,
                  ('''    x = tl.load(x_ptr + row * D + columns, mask=mask, other=0.0)
    w = tl.load(w_ptr + columns, mask=mask, other=0.0)
    if x.dtype != tl.float64:
        x, w = x.to(tl.float32), w.to(tl.float32)
    rstd = 1 / tl.sqrt(tl.sum(x * x, axis=0) / D + eps)
    tl.store(rstd_ptr + row, rstd.to(rstd_ptr.dtype.element_ty))
    tl.store(y_ptr + row * D + columns, (x * rstd * w).to(y_ptr.dtype.element_ty), mask=mask)''',
                   '''    first = tl.load(x_ptr + row * D + columns, mask=mask, other=0.0)
    total = tl.zeros((BLOCK_D,), dtype=tl.float64 if first.dtype == tl.float64 else tl.float32)
    for start in range(0, D, BLOCK_D):
        x = tl.load(x_ptr + row * D + start + columns, mask=start + columns < D, other=0.0)
        total += x.to(total.dtype) * x.to(total.dtype)
    rstd = 1 / tl.sqrt(tl.sum(total, axis=0) / D + eps)
    tl.store(rstd_ptr + row, rstd.to(rstd_ptr.dtype.element_ty))
    for start in range(0, D, BLOCK_D):
        inside = start + columns < D
        x = tl.load(x_ptr + row * D + start + columns, mask=inside, other=0.0).to(total.dtype)
        w = tl.load(w_ptr + start + columns, mask=inside, other=0.0).to(total.dtype)
        tl.store(y_ptr + row * D + start + columns, (x * rstd * w).to(y_ptr.dtype.element_ty),
                 mask=inside)'''),
                  ("        rms_norm_kernel[(rows.shape[0],)](rows, weight.contiguous(), y, rstd, D, eps,\n"
                   "                                          BLOCK_D=triton.next_power_of_2(D))",
                   "        rms_norm_kernel[(rows.shape[0],)](rows, weight.contiguous(), y, rstd, D, eps,\n"
                   "                                          BLOCK_D=64)"))),
]

MISTAKES += [
    Mistake("rms_norm_rows", "a block narrower than the row", "right for rows of 5 but wrong",
            _edit(RMS, ("        rms_norm_kernel[(rows.shape[0],)](rows, weight.contiguous(), y, rstd, D, eps,\n"
                        "                                          BLOCK_D=triton.next_power_of_2(D))",
                        "        rms_norm_kernel[(rows.shape[0],)](rows, weight.contiguous(), y, rstd, D, eps,\n"
                        "                                          BLOCK_D=min(triton.next_power_of_2(D), 128))"),
                  ("                                                   BLOCK_D=triton.next_power_of_2(D))",
                   "                                                   BLOCK_D=min(triton.next_power_of_2(D), 128))")),
            named=True, nbgrader=True),
    Mistake("rms_norm_rows", "weight gradient not reduced across programs",
            "weight gradient is right for one row but wrong for",
            _edit(RMS, ("    tl.store(partial_w_ptr + row * D + columns, (grad * x_hat).to(",
                        "    tl.store(partial_w_ptr + columns, (grad * x_hat).to("),
                  ("    partial_w = torch.empty(rows.shape, device=x.device, dtype=rstd.dtype)",
                   "    partial_w = torch.zeros((1, D), device=x.device, dtype=rstd.dtype)")),
            named=True),
    Mistake("rms_norm_rows", "float16 accumulated in float16", "loses precision in torch.float16",
            _edit(RMS, ('''    if x.dtype != tl.float64:
        x, w = x.to(tl.float32), w.to(tl.float32)
    rstd = 1 / tl.sqrt(tl.sum(x * x, axis=0) / D + eps)''',
                        '''    squares = tl.sum(x * x, axis=0)  # in x's own dtype
    if x.dtype != tl.float64:
        x, w, squares = x.to(tl.float32), w.to(tl.float32), squares.to(tl.float32)
    rstd = 1 / tl.sqrt(squares / D + eps)''')),
            named=True),
    Mistake("rms_norm_rows", "y written into the input x", "modified its input x in place",
            _edit(RMS, ("    y = torch.empty_like(rows)\n", "    y = rows\n"),
                  ("    return y.view(x.shape), rstd", "    return y.view(x.shape).clone(), rstd")),
            named=True),
    Mistake("rms_norm_rows", "a 2-D input passed as is, strides ignored",
            "right for contiguous inputs but wrong for the same values in a transposed",
            _edit(RMS, ("    rows = x.reshape(-1, D).contiguous()\n    y = torch.empty_like(rows)",
                        "    rows = x if x.dim() == 2 else x.reshape(-1, D)\n"
                        "    y = torch.empty(rows.shape, dtype=x.dtype, device=x.device)")),
            named=True),
    Mistake("rms_norm_rows", "the backward kernel launched directly in backward",
            "launched a Triton kernel on a fake tensor",
            _edit(RMS, ('@torch.library.custom_op("autograd_course::rms_norm_rows_backward", '
                        'mutates_args=())\n', ""),
                  ("@rms_norm_rows_backward.register_fake\ndef _(grad_y, x, weight, rstd):\n"
                   "    return torch.empty_like(x, memory_format=torch.contiguous_format), "
                   "torch.empty_like(weight)\n", ""))),
]
