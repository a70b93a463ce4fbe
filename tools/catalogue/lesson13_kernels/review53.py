"""Lesson 13: what review 53 found passing, each now named: a backward kernel launched once per
chunk of the input (2**16 and 2**20 elements), an rstd saved and handed to the backward kernel
but summed again from x there, rstd saved in float64 for every input dtype (cast to float32
inside the kernel, or not), partial rows from torch.empty summed with no program run (0 rows),
and the sigmoid's derivative written as exp(-a) * sigmoid**2 (inf * 0 far left)."""

from .. import Mistake
from .common import _edit
from .rms_norm_rows import RMS
from .silu_mul import SILU_MUL


def _chunked(chunk: int) -> str:
    """SILU_MUL whose backward launches its kernel once per ``chunk`` elements."""
    return _edit(
        SILU_MUL,
        ("    silu_mul_backward_kernel[(triton.cdiv(a.numel(), BLOCK),)](grad, a, b, grad_a, "
         "grad_b,\n"
         "                                                               a.numel(), BLOCK=BLOCK)",
         f"    CHUNK = {chunk}  # offsets stay small: a launch per chunk\n"
         "    for start in range(0, a.numel(), CHUNK):\n"
         "        end = min(a.numel(), start + CHUNK)\n"
         "        flat = [t.view(-1)[start:end] for t in (grad, a, b, grad_a, grad_b)]\n"
         "        silu_mul_backward_kernel[(triton.cdiv(end - start, BLOCK),)](\n"
         "            *flat, end - start, BLOCK=BLOCK)"))


RMS_RSTD_UNREAD = _edit(
    RMS,
    ("def rms_norm_backward_kernel(grad_ptr, x_ptr, w_ptr, rstd_ptr, grad_x_ptr, partial_w_ptr, D,\n"
     "                             BLOCK_D: tl.constexpr):",
     "def rms_norm_backward_kernel(grad_ptr, x_ptr, w_ptr, rstd_ptr, grad_x_ptr, partial_w_ptr, D,\n"
     "                             eps, BLOCK_D: tl.constexpr):"),
    ("    rstd = tl.load(rstd_ptr + row)\n",
     "    rstd = 1 / tl.sqrt(tl.sum(x * x, axis=0) / D + eps)  # from x again\n"),
    ("                           rstd: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:",
     "                           rstd: torch.Tensor, eps: float) -> tuple[torch.Tensor, "
     "torch.Tensor]:"),
    ("                                                   grad_x, partial_w, D,\n",
     "                                                   grad_x, partial_w, D, eps,\n"),
    ("def _(grad_y, x, weight, rstd):", "def _(grad_y, x, weight, rstd, eps):"),
    ("    ctx.save_for_backward(x, weight, output[1])",
     "    ctx.save_for_backward(x, weight, output[1])\n    ctx.eps = eps"),
    ("    grad_x, grad_weight = rms_norm_rows_backward(grad_y, x, weight, rstd)",
     "    grad_x, grad_weight = rms_norm_rows_backward(grad_y, x, weight, rstd, ctx.eps)"))

_RSTD_FLOAT64 = (
    ("    rstd = torch.empty(rows.shape[0], device=x.device,\n"
     "                       dtype=torch.float64 if x.dtype == torch.float64 else torch.float32)",
     "    rstd = torch.empty(rows.shape[0], device=x.device, dtype=torch.float64)  # precise"),
    ("    rstd_dtype = torch.float64 if x.dtype == torch.float64 else torch.float32",
     "    rstd_dtype = torch.float64"))

RMS_RSTD_FLOAT64_CAST = _edit(
    RMS, *_RSTD_FLOAT64,
    ("    rstd = tl.load(rstd_ptr + row)\n",
     "    rstd = tl.load(rstd_ptr + row)\n"
     "    if x.dtype != tl.float64:\n"
     "        rstd = rstd.to(tl.float32)  # float32 before any bfloat16 store\n"))

RMS_EMPTY_PARTIALS = _edit(
    RMS,
    ("    partial_w = torch.empty(rows.shape, device=x.device, dtype=rstd.dtype)",
     "    partial_w = torch.empty(max(1, rows.shape[0]), D, device=x.device, dtype=rstd.dtype)"))

MISTAKES = [
    Mistake("silu_mul", "the backward kernel launched once per 2**16 elements",
            "silu_mul's backward launched", _chunked(1 << 16)),
    Mistake("silu_mul", "the backward kernel launched once per 2**20 elements",
            "silu_mul's backward launched", _chunked(1 << 20)),
    Mistake("silu_mul", "sigmoid's derivative as exp(-a) * sigmoid**2",
            "inf * 0", _edit(
                SILU_MUL,
                ("    sigmoid = 1 / (1 + tl.exp(-a))\n"
                 "    grad_a = grad * b * sigmoid * (1 + a * (1 - sigmoid))\n",
                 "    e = tl.exp(-a)\n    sigmoid = 1 / (1 + e)\n"
                 "    grad_a = grad * b * (sigmoid + a * e * sigmoid * sigmoid)\n"))),
    Mistake("rms_norm_rows", "rstd saved and passed, the backward kernel summing x**2 again",
            "does not read the rstd that forward saved", RMS_RSTD_UNREAD),
    Mistake("rms_norm_rows", "rstd saved in float64 for every input dtype",
            "saves its per-row rstd in torch.float64", _edit(RMS, *_RSTD_FLOAT64)),
    Mistake("rms_norm_rows", "rstd saved in float64, cast to float32 in the backward kernel",
            "saves its per-row rstd in torch.float64", RMS_RSTD_FLOAT64_CAST),
    Mistake("rms_norm_rows", "partial rows from torch.empty summed with no rows",
            "reads memory that no kernel wrote", RMS_EMPTY_PARTIALS),
]
