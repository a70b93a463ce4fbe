"""Lesson 13: what review 60 wrote (rev59c_13): the weight gradient added with tl.atomic_add
(the contract asks for per-program partial sums reduced afterwards), here after each program
has summed its group of rows; eps added to the row's sum of squares before dividing by D."""

from .. import Mistake
from .common import _edit
from .rms_norm_rows import RMS
from .rms_norm_rows_groups import GROUPS

MISTAKES = [
    Mistake("rms_norm_rows", "each program's partial row added into one row with tl.atomic_add",
            "adds into shared memory with an atomic operation (tl.atomic_add)",
            _edit(GROUPS,
                  ("    tl.store(partial_w_ptr + program * D + columns, partial_w, mask=mask)",
                   "    tl.atomic_add(partial_w_ptr + columns, partial_w, mask=mask)"),
                  ("    partial_w = torch.empty(programs, D, device=x.device, dtype=rstd.dtype)",
                   "    partial_w = torch.zeros(1, D, device=x.device, dtype=rstd.dtype)"))),
    Mistake("rms_norm_rows", "eps added to the sum of squares, then divided by D",
            "adds eps to the sum of squares before dividing by D",
            _edit(RMS, ("    rstd = 1 / tl.sqrt(tl.sum(x * x, axis=0) / D + eps)",
                        "    rstd = 1 / tl.sqrt((tl.sum(x * x, axis=0) + eps) / D)"))),
]
