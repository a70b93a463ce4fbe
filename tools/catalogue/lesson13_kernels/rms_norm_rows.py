"""Lesson 13: rms_norm_rows's unusual-but-correct answers and named mistakes (each defines the
autograd_course::rms_norm_rows operators again: load and grade one entry at a time)."""

from .. import Mistake, Unusual
from .common import HEADER, _edit

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
    return (grad_x if ctx.needs_input_grad[0] else None,
            grad_weight if ctx.needs_input_grad[1] else None, None)


rms_norm_rows_forward.register_autograd(backward, setup_context=setup_context)


def rms_norm_rows(x, weight, eps):
    return rms_norm_rows_forward(x, weight, eps)[0]
'''

UNUSUAL = [
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
]

ROW_LOOP = _edit(
    RMS,
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
     "                                          BLOCK_D=64)"))

# two unusual choices in each entry: an entry costs a whole battery of interpreted kernels
UNUSUAL += [
    Unusual("rms_norm_rows", "tl.rsqrt, and rstd shaped like x without its last dimension; the "
            "backward operator returns the partials, and the registered backward sums them",
            _edit(RMS, ("    rstd = 1 / tl.sqrt(tl.sum(x * x, axis=0) / D + eps)",
                        "    rstd = tl.rsqrt(tl.sum(x * x, axis=0) / D + eps)"),
                  ("    rstd = torch.empty(rows.shape[0], device=x.device,",
                   "    rstd = torch.empty(x.shape[:-1], device=x.device,"),
                  ("            x.new_empty(x.shape[:-1].numel(), dtype=rstd_dtype))",
                   "            x.new_empty(x.shape[:-1], dtype=rstd_dtype))"),
                  ("    return grad_x.view(x.shape), partial_w.sum(0).to(weight.dtype)",
                   "    return grad_x.view(x.shape), partial_w"),
                  ("    return torch.empty_like(x, memory_format=torch.contiguous_format), "
                   "torch.empty_like(weight)",
                   "    rows = x.shape[:-1].numel()\n"
                   "    return (torch.empty_like(x, memory_format=torch.contiguous_format),\n"
                   "            x.new_empty((rows, x.shape[-1]), dtype=rstd.dtype))"),
                  ("    grad_x, grad_weight = rms_norm_rows_backward(grad_y, x, weight, rstd)\n",
                   "    grad_x, partials = rms_norm_rows_backward(grad_y, x, weight, rstd)\n"
                   "    grad_weight = partials.sum(0).to(weight.dtype)\n"))),
    Unusual("rms_norm_rows", "rows longer than the block: a loop over the row in blocks of 64; "
            "the partials reduced by a second Triton kernel, column blocks of 64",
            _edit(ROW_LOOP, ('@torch.library.custom_op("autograd_course::rms_norm_rows", '
                             'mutates_args=())',
                             """@triton.jit
def column_sum_kernel(partial_ptr, out_ptr, n_rows, D, BLOCK: tl.constexpr):
    columns = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = columns < D
    total = tl.load(partial_ptr + columns, mask=mask, other=0.0)  # float32, or float64
    for row in range(1, n_rows):
        total += tl.load(partial_ptr + row * D + columns, mask=mask, other=0.0)
    tl.store(out_ptr + columns, total.to(out_ptr.dtype.element_ty), mask=mask)


@torch.library.custom_op("autograd_course::rms_norm_rows", mutates_args=())"""),
                  ("    return grad_x.view(x.shape), partial_w.sum(0).to(weight.dtype)",
                   "    grad_weight = torch.zeros_like(weight)\n    if rows.shape[0]:\n"
                   "        column_sum_kernel[(triton.cdiv(D, 64),)](partial_w, grad_weight, "
                   "rows.shape[0], D,\n                                                 BLOCK=64)\n"
                   "    return grad_x.view(x.shape), grad_weight"))),
]

MISTAKES = [
    Mistake("rms_norm_rows", "a block narrower than the row", "right for rows of 5 but wrong",
            _edit(RMS, ("        rms_norm_kernel[(rows.shape[0],)](rows, weight.contiguous(), y, rstd, D, eps,\n"
                        "                                          BLOCK_D=triton.next_power_of_2(D))",
                        "        rms_norm_kernel[(rows.shape[0],)](rows, weight.contiguous(), y, rstd, D, eps,\n"
                        "                                          BLOCK_D=min(triton.next_power_of_2(D), 128))"),
                  ("                                                   BLOCK_D=triton.next_power_of_2(D))",
                   "                                                   BLOCK_D=min(triton.next_power_of_2(D), 128))")),
            named=True, nbgrader=True),
    Mistake("rms_norm_rows", "no mask past the row's end", "kernel reads outside its tensors",
            _edit(RMS, ("    x = tl.load(x_ptr + row * D + columns, mask=mask, other=0.0)\n"
                        "    w = tl.load(w_ptr + columns, mask=mask, other=0.0)\n"
                        "    if x.dtype != tl.float64:\n        x, w = x.to(tl.float32), "
                        "w.to(tl.float32)\n    rstd",
                        "    x = tl.load(x_ptr + row * D + columns)\n"
                        "    w = tl.load(w_ptr + columns)\n"
                        "    if x.dtype != tl.float64:\n        x, w = x.to(tl.float32), "
                        "w.to(tl.float32)\n    rstd")),
            named=True),
    Mistake("rms_norm_rows", "weight gradient not reduced across programs",
            "weight gradient is right for one row but wrong for",
            _edit(RMS, ("    tl.store(partial_w_ptr + row * D + columns, (grad * x_hat).to(",
                        "    tl.store(partial_w_ptr + columns, (grad * x_hat).to("),
                  ("    partial_w = torch.empty(rows.shape, device=x.device, dtype=rstd.dtype)",
                   "    partial_w = torch.zeros((1, D), device=x.device, dtype=rstd.dtype)")),
            named=True),
    Mistake("rms_norm_rows", "every program adds into one shared row (load, add, store): a race",
            "of one kernel launch store to the same address",
            _edit(RMS, ("    tl.store(partial_w_ptr + row * D + columns, (grad * x_hat).to(",
                        "    shared = tl.load(partial_w_ptr + columns, mask=mask, other=0.0)\n"
                        "    tl.store(partial_w_ptr + columns, (shared + grad * x_hat).to("),
                  ("    partial_w = torch.empty(rows.shape, device=x.device, dtype=rstd.dtype)",
                   "    partial_w = torch.zeros((1, D), device=x.device, dtype=rstd.dtype)")),
            named=True),
    Mistake("rms_norm_rows", "eps outside the square root",
            "rms_norm_rows's output is wrong with eps = 0.5: the forward adds eps outside",
            _edit(RMS, ("    rstd = 1 / tl.sqrt(tl.sum(x * x, axis=0) / D + eps)",
                        "    rstd = 1 / (tl.sqrt(tl.sum(x * x, axis=0) / D) + eps)"))),
    Mistake("rms_norm_rows", "eps left out of rstd",
            "rms_norm_rows's output is wrong with eps = 0.5: the forward ignores its eps",
            _edit(RMS, ("    rstd = 1 / tl.sqrt(tl.sum(x * x, axis=0) / D + eps)",
                        "    rstd = 1 / tl.sqrt(tl.sum(x * x, axis=0) / D)"))),
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
    Mistake("rms_norm_rows", "rstd saved in x's dtype", "saves its per-row rstd in torch.float16",
            _edit(RMS, ("    rstd = torch.empty(rows.shape[0], device=x.device,\n"
                        "                       dtype=torch.float64 if x.dtype == torch.float64 "
                        "else torch.float32)",
                        "    rstd = torch.empty(rows.shape[0], device=x.device, dtype=x.dtype)"),
                  ("    rstd_dtype = torch.float64 if x.dtype == torch.float64 else torch.float32",
                   "    rstd_dtype = x.dtype"),
                  ("    partial_w = torch.empty(rows.shape, device=x.device, dtype=rstd.dtype)",
                   "    partial_w = torch.empty(rows.shape, device=x.device, dtype=torch.float64 "
                   "if x.dtype == torch.float64 else torch.float32)"))),
    Mistake("rms_norm_rows", "the weight gradient computed on the host",
            "backward computes with torch ops (mul)",
            _edit(RMS, ("    return grad_x.view(x.shape), partial_w.sum(0).to(weight.dtype)",
                        "    return grad_x.view(x.shape), (grad_rows * rows * rstd[:, None]).sum(0).to(\n"
                        "        weight.dtype)")),
            named=True),
    Mistake("rms_norm_rows", "register_fake with the input's strides",
            "fake implementation gives strides",
            _edit(RMS, ("    return (torch.empty(x.shape, dtype=x.dtype, device=x.device),",
                        "    return (torch.empty_like(x),")),
            named=True),
    Mistake("rms_norm_rows", "the backward operator's fake with the saved x's strides",
            "backward operator autograd_course.rms_norm_rows_backward.default: its fake",
            _edit(RMS, ("    return torch.empty_like(x, memory_format=torch.contiguous_format), "
                        "torch.empty_like(weight)\n",
                        "    return torch.empty_like(x), torch.empty_like(weight)\n")),
            named=True),
    Mistake("rms_norm_rows", "the backward kernel launched directly in backward",
            "launched a Triton kernel on a fake tensor",
            _edit(RMS, ('@torch.library.custom_op("autograd_course::rms_norm_rows_backward", '
                        'mutates_args=())\n', ""),
                  ("@rms_norm_rows_backward.register_fake\ndef _(grad_y, x, weight, rstd):\n"
                   "    return torch.empty_like(x, memory_format=torch.contiguous_format), "
                   "torch.empty_like(weight)\n", ""))),
    # issue 69: first named "a buffer between calls"; the columns past the block are never
    # written, so the results change with what a fresh buffer held
    Mistake("rms_norm_rows", "the block width set once, from the first call's D, in a global",
            "leaves column 4 of every row unwritten", _edit(
                RMS,
                # y zeroed: the column left unwritten reads 0 whatever memory it got, so the
                # first line names the block width, not a read of unwritten memory
                ("    rows = x.reshape(-1, D).contiguous()\n    y = torch.empty_like(rows)\n",
                 "    rows = x.reshape(-1, D).contiguous()\n    y = torch.zeros_like(rows)\n"
                 "    global BLOCK_WIDTH\n    if BLOCK_WIDTH is None:\n"
                 "        BLOCK_WIDTH = triton.next_power_of_2(D)\n"),
                ("                                          BLOCK_D=triton.next_power_of_2(D))",
                 "                                          BLOCK_D=BLOCK_WIDTH)"),
                ("                                                   BLOCK_D=triton.next_power_of_2(D))",
                 "                                                   BLOCK_D=BLOCK_WIDTH)"),
                ('@torch.library.custom_op("autograd_course::rms_norm_rows"',
                 'BLOCK_WIDTH = None\n\n\n@torch.library.custom_op("autograd_course::rms_norm_rows"'))),
]
