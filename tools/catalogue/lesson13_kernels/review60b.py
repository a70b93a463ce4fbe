"""Lesson 13: what review 60 found a second time (rev60_13): the inputs saved as contiguous or
cast copies (new memory the size of x for a non-contiguous or half x), which the contract's
"saves the inputs and one per-row tensor, nothing else" rules out."""

from .. import Mistake
from .common import _edit
from .rms_norm_rows import RMS

_SAVE = "    ctx.save_for_backward(x, weight, output[1])"

MISTAKES = [
    Mistake("rms_norm_rows", "x.contiguous() and weight.contiguous() saved (w_r9)",
            "saves a copy of x for backward",
            _edit(RMS, (_SAVE, "    ctx.save_for_backward(x.contiguous(), weight.contiguous(),"
                               " output[1])"))),
    Mistake("rms_norm_rows", "weight.contiguous() saved, x as it came",
            "saves a copy of weight for backward",
            _edit(RMS, (_SAVE, "    ctx.save_for_backward(x, weight.contiguous(), output[1])"))),
    Mistake("rms_norm_rows", "x saved cast to float32 (a copy for half input)",
            "saves a copy of x for backward",
            _edit(RMS, (_SAVE, "    ctx.save_for_backward(x.float(), weight, output[1])"))),
]
