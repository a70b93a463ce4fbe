"""Lesson 13: what the second review 58 found passing, now named where it lives: a buffer kept
from one call to the next that never reaches a result (a float32 staging buffer for half
inputs kept per size, an output buffer kept per shape and cloned, partial rows kept per shape
and fully overwritten), which no value the battery compares can show."""

from .. import Mistake
from .common import _edit
from .rms_norm_rows import RMS
from .silu_mul import SILU_MUL

_KEPT = "keeps a buffer from one call to the next"
_FORWARD = ("    y = torch.empty_like(a)\n"
            "    silu_mul_kernel[(triton.cdiv(a.numel(), BLOCK),)](a, b, y, a.numel(), "
            "BLOCK=BLOCK)\n    return y\n")
_OP = '@torch.library.custom_op("autograd_course::silu_mul", mutates_args=())'
_PARTIALS = "    partial_w = torch.empty(rows.shape, device=x.device, dtype=rstd.dtype)\n"

MISTAKES = [
    Mistake("silu_mul", "float16/bfloat16: a float32 staging buffer kept per size in a global, "
            "cast to a fresh output", _KEPT, _edit(SILU_MUL, (_FORWARD, (
                "    if a.dtype in (torch.float16, torch.bfloat16):\n"
                "        key = (a.numel(), a.device)\n"
                "        if key not in _STAGING:\n"
                "            _STAGING[key] = torch.empty(a.numel(), device=a.device,\n"
                "                                        dtype=torch.float32)\n"
                "        y = _STAGING[key]\n"
                "    else:\n"
                "        y = torch.empty_like(a)\n"
                "    silu_mul_kernel[(triton.cdiv(a.numel(), BLOCK),)](a, b, y, a.numel(), "
                "BLOCK=BLOCK)\n    return y.view(a.shape).to(a.dtype)\n")),
                (_OP, "_STAGING = {}\n\n\n" + _OP))),
    Mistake("silu_mul", "every dtype: the output buffer kept per shape in a global, a clone "
            "returned", _KEPT, _edit(SILU_MUL, ("    y = torch.empty_like(a)\n", (
                "    y = _KEPT.setdefault((a.shape, a.dtype, a.device), torch.empty_like(a))\n")),
                ("    return y\n", "    return y.clone()\n"), (_OP, "_KEPT = {}\n\n\n" + _OP))),
    Mistake("rms_norm_rows", "partial rows kept per shape in a global, fully overwritten by "
            "every call", _KEPT, _edit(RMS, (_PARTIALS, (
                "    partial_w = _WORKSPACE.setdefault((rows.shape, rstd.dtype, x.device),\n"
                "                                      torch.empty(rows.shape, device=x.device,\n"
                "                                                  dtype=rstd.dtype))\n")),
                ('@torch.library.custom_op("autograd_course::rms_norm_rows_backward"',
                 '_WORKSPACE = {}\n\n\n@torch.library.custom_op('
                 '"autograd_course::rms_norm_rows_backward"'))),
]
