"""Lesson 13: rms_norm_rows's mistakes that only the generated checks of its domain see (issue
37): a column slice read with D as its row stride, and a float32 rstd saved for float64 input
(a float32 weight gradient for a half weight, once here, is correct: contract_rules' UNUSUAL)."""

from .. import Mistake
from .common import _edit
from .rms_norm_rows import RMS

MISTAKES = [
    Mistake("rms_norm_rows", "D as the row stride of a column slice (issue 37)",
            "output is wrong: largest error 3.35 at index (3, 0)", _edit(
                RMS,
                ("    rows = x.reshape(-1, D).contiguous()\n    y = torch.empty_like(rows)",
                 "    rows = x.reshape(-1, D)\n    if rows.stride(-1) != 1:\n"
                 "        rows = rows.contiguous()\n"
                 "    y = torch.empty(rows.shape, dtype=x.dtype, device=x.device)"),
                ("    rows, grad_rows = x.reshape(-1, D).contiguous(), "
                 "grad_y.reshape(-1, D).contiguous()",
                 "    rows, grad_rows = x.reshape(-1, D), grad_y.reshape(-1, D).contiguous()\n"
                 "    if rows.stride(-1) != 1:\n        rows = rows.contiguous()"))),
    Mistake("rms_norm_rows", "a float32 rstd for float64 input (issue 37)",
            "saved a float32 tensor of shape (4,) for float64 inputs", _edit(
                RMS,
                ("    rstd = torch.empty(rows.shape[0], device=x.device,\n"
                 "                       dtype=torch.float64 if x.dtype == torch.float64 "
                 "else torch.float32)",
                 "    rstd = torch.empty(rows.shape[0], device=x.device, dtype=torch.float32)"),
                ("    rstd_dtype = torch.float64 if x.dtype == torch.float64 else torch.float32\n",
                 "    rstd_dtype = torch.float32\n"))),
]
