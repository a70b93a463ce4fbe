"""Lesson 13: what review 59c wrote (rev59b_13): rms_norm_rows's setup_context saving y on top
of x, weight and rstd (a whole extra activation); a float copy of an input cached by data_ptr
(or by data_ptr and _version), stale once the input changes in place (gradcheck perturbs it
through .data), in rms_norm_rows and in silu_mul."""

from .. import Mistake
from .common import _edit
from .rms_norm_rows import RMS
from .silu_mul import SILU_MUL

_WEIGHT_CACHE = (
    "        rms_norm_kernel[(rows.shape[0],)](rows, weight.contiguous(), y, rstd, D, eps,",
    "        key = (weight.data_ptr(), weight.shape, weight.dtype)\n"
    "        if key not in _W_CACHE:\n"
    "            _W_CACHE.clear()\n"
    "            _W_CACHE[key] = weight.contiguous().clone()\n"
    "        rms_norm_kernel[(rows.shape[0],)](rows, _W_CACHE[key], y, rstd, D, eps,")
_CACHE_GLOBAL = ("\n@triton.jit\n", "\n_W_CACHE = {}\n\n\n@triton.jit\n")

MISTAKES = [
    Mistake("rms_norm_rows", "setup_context saves y as well as x, weight and rstd",
            "saves an extra tensor of shape (3, 2, 5) (the output y)",
            _edit(RMS, ("    ctx.save_for_backward(x, weight, output[1])",
                        "    ctx.save_for_backward(x, weight, output[1], output[0])"),
                  ("    x, weight, rstd = ctx.saved_tensors",
                   "    x, weight, rstd, _y = ctx.saved_tensors"))),
    Mistake("rms_norm_rows", "a contiguous copy of weight cached by data_ptr between calls",
            "keeps a copy of weight from an earlier call",
            _edit(RMS, _CACHE_GLOBAL, _WEIGHT_CACHE)),
    Mistake("rms_norm_rows", "a copy of weight cached by data_ptr and _version between calls",
            "keeps a copy of weight from an earlier call",
            _edit(RMS, _CACHE_GLOBAL, (_WEIGHT_CACHE[0], _WEIGHT_CACHE[1].replace(
                "weight.dtype)", "weight.dtype, weight._version)")))),
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

UNUSUAL = []  # the reviewer's two unusual answers repeat catalogued ones (tl.sigmoid, a
# list[Tensor] backward operator; a row loop with tl.atomic_add and tl.rsqrt)
