"""Lesson 13: rms_norm_rows's mistakes of layout (lesson 13's third review): an expanded
grad_output read as flat memory (y.sum().backward() hands over strides (0, 0): told to add a
mask, before), and the saved weight view read flat by the backward kernel (the battery's
strided weight was a dense copy: only the domain's column slice saw it, naming no tensor)."""

from .. import Mistake
from .common import _edit
from .rms_norm_rows import RMS

MISTAKES = [
    Mistake("rms_norm_rows", "grad_output not made contiguous (an expanded gradient)",
            "grad_output not made contiguous (an expanded gradient",
            _edit(RMS, ("grad_y.reshape(-1, D).contiguous()", "grad_y.reshape(-1, D)"))),
    Mistake("rms_norm_rows", "the saved weight view read as flat memory in backward",
            "its output is the same and its gradients differ: the weight saved for backward",
            _edit(RMS, ("(grad_rows, rows, weight.contiguous(), rstd,",
                        "(grad_rows, rows, weight, rstd,"))),
]
