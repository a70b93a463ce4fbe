"""Lesson 13: what review 56 found passing, each now named: a size or a grid kept in a module
global by forward and read by backward (two calls of different sizes in flight: the first
call's backward runs with the second call's), grad_output * b computed in float16 in the
backward (90000 overflows float16), and a float32-tuned shortcut taking sigmoid(a) as 1 past
a = 15 (1.9e-7 off in float64); rms_norm_rows's backward grid kept in a global."""

from .. import Mistake
from .common import _edit
from .rms_norm_rows import RMS
from .silu_mul import SILU_MUL

_FORWARD_LAUNCH = ("    silu_mul_kernel[(triton.cdiv(a.numel(), BLOCK),)](a, b, y, a.numel(), "
                   "BLOCK=BLOCK)\n")
_BACKWARD_LAUNCH = ("    silu_mul_backward_kernel[(triton.cdiv(a.numel(), BLOCK),)](grad, a, b, "
                    "grad_a, grad_b,\n")
_TWO_SIZES = "backward used a later call's size"

MISTAKES = [
    Mistake("silu_mul", "the element count kept in a module global by forward, read by backward",
            _TWO_SIZES, _edit(
                SILU_MUL,
                (_FORWARD_LAUNCH, "    STATE['n'] = a.numel()\n" + _FORWARD_LAUNCH),
                ("BLOCK = 1024\n", "BLOCK = 1024\nSTATE = {}\n"),
                ("                                                               a.numel(), "
                 "BLOCK=BLOCK)",
                 "                                                               STATE['n'], "
                 "BLOCK=BLOCK)"))),
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
                 "    sigmoid = 1 / (1 + tl.exp(-a))\n"
                 "    grad_a = grad * b * sigmoid * (1 + a * (1 - sigmoid))\n",
                 "        gb = grad.to(tl.float32) * b.to(tl.float32)\n"
                 "        if a.dtype == tl.float16:\n"
                 "            gb = (grad * b).to(tl.float32)  # only exp needs float32\n"
                 "        grad, a, b = grad.to(tl.float32), a.to(tl.float32), b.to(tl.float32)\n"
                 "    else:\n"
                 "        gb = grad * b\n"
                 "    sigmoid = 1 / (1 + tl.exp(-a))\n"
                 "    grad_a = gb * sigmoid * (1 + a * (1 - sigmoid))\n"))),
    Mistake("silu_mul", "sigmoid taken as 1 past a = 15 (a float32-tuned fast path)",
            "in float64 is", _edit(
                SILU_MUL,
                ("    y = a / (1 + tl.exp(-a)) * b\n",
                 "    y = tl.where(a > 15.0, a, a / (1 + tl.exp(-a))) * b\n"),
                ("    sigmoid = 1 / (1 + tl.exp(-a))\n",
                 "    sigmoid = tl.where(a > 15.0, 1.0, 1 / (1 + tl.exp(-a)))\n"))),
    Mistake("rms_norm_rows", "the backward's grid (the number of rows) kept in a module global "
            "by forward", _TWO_SIZES, _edit(
                RMS,
                ("    rows = x.reshape(-1, D).contiguous()\n",
                 "    rows = x.reshape(-1, D).contiguous()\n"
                 "    global ROWS\n    ROWS = rows.shape[0]\n"),
                ("        rms_norm_backward_kernel[(rows.shape[0],)](",
                 "        rms_norm_backward_kernel[(ROWS,)]("))),
]
