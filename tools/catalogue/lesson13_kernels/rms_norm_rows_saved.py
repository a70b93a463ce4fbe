"""Lesson 13: rms_norm_rows whose forward saves no rstd: a single-output forward operator,
setup_context saving x, weight and ctx.eps, and a backward kernel that computes each row's rstd
again (right values; the contract's backward reads one saved value per row instead); and one
that saves rstd in float64 for every input dtype, one number per row no narrower than float32,
which the contract allows (review 79's U4)."""

from .. import Mistake, Unusual
from .common import _edit
from .rms_norm_rows import RMS
from .variants import RMS_RSTD_FLOAT64_CAST, _RSTD_FLOAT64

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

# rstd computed and kept in float64 whatever x's dtype: one number per row, wider than the floor
RSTD_FLOAT64 = _edit(
    RMS,
    ("    rstd = 1 / tl.sqrt(tl.sum(x * x, axis=0) / D + eps)\n",
     "    x64 = x.to(tl.float64)\n"
     "    rstd = 1 / tl.sqrt(tl.sum(x64 * x64, axis=0) / D + eps)  # float64 for every dtype\n"),
    ("    rstd = torch.empty(rows.shape[0], device=x.device,\n"
     "                       dtype=torch.float64 if x.dtype == torch.float64 else torch.float32)",
     "    rstd = torch.empty(rows.shape[0], device=x.device, dtype=torch.float64)"),
    ("    rstd_dtype = torch.float64 if x.dtype == torch.float64 else torch.float32\n",
     "    rstd_dtype = torch.float64\n"),
    ("    tl.store(y_ptr + row * D + columns, (x * rstd * w)",
     "    tl.store(y_ptr + row * D + columns, (x * rstd.to(x.dtype) * w)"),  # no float64 store
    ("    rstd = tl.load(rstd_ptr + row)\n", "    rstd = tl.load(rstd_ptr + row).to(x.dtype)\n"),
    ("    partial_w = torch.empty(rows.shape, device=x.device, dtype=rstd.dtype)",
     "    partial_w = torch.empty(rows.shape, device=x.device, dtype=torch.float64\n"
     "                            if x.dtype == torch.float64 else torch.float32)"))

# one number per row no narrower than float32: the contract's bound, which float64 meets
UNUSUAL = [
    Unusual("rms_norm_rows", "rstd computed and saved in float64 for every input dtype",
            RSTD_FLOAT64),
    Unusual("rms_norm_rows", "rstd saved in float64, cast to float32 in the backward kernel",
            RMS_RSTD_FLOAT64_CAST),
]
# allowed by the contract, but its float64 x_hat stored as bfloat16 is a conversion Triton 3.9's
# interpreter gets wrong (0.55 becomes 0): wrong here, named for that
MISTAKES += [
    Mistake("rms_norm_rows", "rstd saved in float64 for every input dtype, x_hat in float64",
            "converts a float64 value to bfloat16 inside a kernel", _edit(RMS, *_RSTD_FLOAT64)),
]
