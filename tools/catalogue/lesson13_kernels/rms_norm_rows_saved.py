"""Lesson 13: rms_norm_rows whose forward saves no rstd: a single-output forward operator,
setup_context saving x, weight and ctx.eps, and a backward kernel that computes each row's rstd
again (right values; the contract's backward reads one saved value per row instead)."""

from .. import Mistake
from .common import _edit
from .rms_norm_rows import RMS

RECOMPUTED = _edit(
    RMS,
    ("def rms_norm_backward_kernel(grad_ptr, x_ptr, w_ptr, rstd_ptr, grad_x_ptr, partial_w_ptr, D,",
     "def rms_norm_backward_kernel(grad_ptr, x_ptr, w_ptr, eps, grad_x_ptr, partial_w_ptr, D,"),
    ("    rstd = tl.load(rstd_ptr + row)\n",
     "    rstd = 1 / tl.sqrt(tl.sum(x * x, axis=0) / D + eps)  # again, from x\n"),
    ("                          eps: float) -> tuple[torch.Tensor, torch.Tensor]:",
     "                          eps: float) -> torch.Tensor:"),
    ("    return y.view(x.shape), rstd", "    return y.view(x.shape)  # rstd dropped"),
    ("    return (torch.empty(x.shape, dtype=x.dtype, device=x.device),\n"
     "            x.new_empty(x.shape[:-1].numel(), dtype=rstd_dtype))",
     "    return torch.empty(x.shape, dtype=x.dtype, device=x.device)"),
    ("                           rstd: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:",
     "                           eps: float) -> tuple[torch.Tensor, torch.Tensor]:"),
    ("    partial_w = torch.empty(rows.shape, device=x.device, dtype=rstd.dtype)",
     "    partial_w = torch.empty(rows.shape, device=x.device, dtype=torch.float64\n"
     "                            if x.dtype == torch.float64 else torch.float32)"),
    ("rows, weight.contiguous(), rstd,", "rows, weight.contiguous(), eps,"),
    ("def _(grad_y, x, weight, rstd):", "def _(grad_y, x, weight, eps):"),
    ("    ctx.save_for_backward(x, weight, output[1])",
     "    ctx.save_for_backward(x, weight)\n    ctx.eps = eps"),
    ("def backward(ctx, grad_y, grad_rstd):\n    x, weight, rstd = ctx.saved_tensors\n"
     "    grad_x, grad_weight = rms_norm_rows_backward(grad_y, x, weight, rstd)",
     "def backward(ctx, grad_y):\n    x, weight = ctx.saved_tensors\n"
     "    grad_x, grad_weight = rms_norm_rows_backward(grad_y, x, weight, ctx.eps)"),
    ("    return rms_norm_rows_forward(x, weight, eps)[0]",
     "    return rms_norm_rows_forward(x, weight, eps)"))

MISTAKES = [
    Mistake("rms_norm_rows", "no rstd saved: the backward kernel computes each row's rstd again",
            "rms_norm_rows's forward saves no value per row", RECOMPUTED),
]
