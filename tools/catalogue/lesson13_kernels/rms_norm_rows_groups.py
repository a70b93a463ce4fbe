"""Lesson 13: rms_norm_rows as the lesson writes it, a fixed grid of backward programs each
looping over a group of consecutive rows, and the two slips of that loop which only a number of
rows above the grid's size shows (137, a prime: no grid of fewer programs divides it); and a
grid larger than the rows whose idle programs leave their partial rows unstored."""

from .. import Mistake
from .common import _edit
from .rms_norm_rows import RMS

GROUPS = _edit(
    RMS,
    ("def rms_norm_backward_kernel(grad_ptr, x_ptr, w_ptr, rstd_ptr, grad_x_ptr, partial_w_ptr, D,\n"
     "                             BLOCK_D: tl.constexpr):\n"
     "    row = tl.program_id(0)\n"
     "    columns = tl.arange(0, BLOCK_D)\n"
     "    mask = columns < D\n"
     "    grad = tl.load(grad_ptr + row * D + columns, mask=mask, other=0.0)\n"
     "    x = tl.load(x_ptr + row * D + columns, mask=mask, other=0.0)\n"
     "    w = tl.load(w_ptr + columns, mask=mask, other=0.0)\n"
     "    if x.dtype != tl.float64:\n"
     "        grad, x, w = grad.to(tl.float32), x.to(tl.float32), w.to(tl.float32)\n"
     "    rstd = tl.load(rstd_ptr + row)\n"
     "    x_hat = x * rstd\n"
     "    grad_hat = grad * w\n"
     "    grad_x = rstd * (grad_hat - x_hat * tl.sum(grad_hat * x_hat, axis=0) / D)\n"
     "    tl.store(grad_x_ptr + row * D + columns, grad_x.to(grad_x_ptr.dtype.element_ty), mask=mask)\n"
     "    tl.store(partial_w_ptr + row * D + columns, (grad * x_hat).to(\n"
     "        partial_w_ptr.dtype.element_ty), mask=mask)",
     "def rms_norm_backward_kernel(grad_ptr, x_ptr, w_ptr, rstd_ptr, grad_x_ptr, partial_w_ptr,\n"
     "                             rows, D, rows_per_program, BLOCK_D: tl.constexpr):\n"
     "    program = tl.program_id(0).to(tl.int64)\n"
     "    first = program * rows_per_program\n"
     "    columns = tl.arange(0, BLOCK_D)\n"
     "    mask = columns < D\n"
     "    w = tl.load(w_ptr + columns, mask=mask, other=0.0)\n"
     "    if w.dtype != tl.float64:\n"
     "        w = w.to(tl.float32)\n"
     "    partial_w = tl.zeros((BLOCK_D,), dtype=partial_w_ptr.dtype.element_ty)\n"
     "    offsets = first * D + columns\n"
     "    for i in range(0, tl.minimum(rows_per_program, rows - first)):\n"
     "        grad = tl.load(grad_ptr + offsets, mask=mask, other=0.0)\n"
     "        x = tl.load(x_ptr + offsets, mask=mask, other=0.0)\n"
     "        if x.dtype != tl.float64:\n"
     "            grad, x = grad.to(tl.float32), x.to(tl.float32)\n"
     "        rstd = tl.load(rstd_ptr + first + i)\n"
     "        x_hat = x * rstd\n"
     "        grad_hat = grad * w\n"
     "        grad_x = rstd * (grad_hat - x_hat * tl.sum(grad_hat * x_hat, axis=0) / D)\n"
     "        tl.store(grad_x_ptr + offsets, grad_x.to(grad_x_ptr.dtype.element_ty), mask=mask)\n"
     "        partial_w += grad * x_hat\n"
     "        offsets += D\n"
     "    tl.store(partial_w_ptr + program * D + columns, partial_w, mask=mask)"),
    ("    partial_w = torch.empty(rows.shape, device=x.device, dtype=rstd.dtype)\n"
     "    if rows.shape[0]:\n"
     "        rms_norm_backward_kernel[(rows.shape[0],)](grad_rows, rows, weight.contiguous(), rstd,\n"
     "                                                   grad_x, partial_w, D,\n",
     "    programs = min(rows.shape[0], 32)\n"
     "    rows_per_program = triton.cdiv(rows.shape[0], max(programs, 1))\n"
     "    partial_w = torch.empty(programs, D, device=x.device, dtype=rstd.dtype)\n"
     "    if rows.shape[0]:\n"
     "        rms_norm_backward_kernel[(programs,)](grad_rows, rows, weight.contiguous(), rstd,\n"
     "                                              grad_x, partial_w, rows.shape[0], D,\n"
     "                                              rows_per_program,\n"))

MISTAKES = [
    Mistake("rms_norm_rows", "rows per program rounded down (rows // programs): the last rows "
            "left out", "leaves the last 9 of 137 rows out",
            _edit(GROUPS, ("    rows_per_program = triton.cdiv(rows.shape[0], max(programs, 1))",
                           "    rows_per_program = rows.shape[0] // max(programs, 1)"))),
    Mistake("rms_norm_rows", "each program's loop not stopped at the last row",
            "kernel reads past the last row with 137 rows",
            _edit(GROUPS, ("    for i in range(0, tl.minimum(rows_per_program, rows - first)):",
                           "    for i in range(0, rows_per_program):"))),
    Mistake("rms_norm_rows", "32 programs whatever the rows; those past the last row skip "
            "their partial store (a torch.empty buffer)",
            "returns or sums memory that no kernel wrote", _edit(
                GROUPS, ("    programs = min(rows.shape[0], 32)\n", "    programs = 32\n"),
                ("    tl.store(partial_w_ptr + program * D + columns, partial_w, mask=mask)",
                 "    if first < rows:  # no rows of its own: no partial row\n"
                 "        tl.store(partial_w_ptr + program * D + columns, partial_w, mask=mask)"))),
]
