"""Lesson 13: what review 59 wrote (rev58z_13): x_hat recovered from y / w with the weight's
masked-off lanes loaded as 0 (every row NaN, named as the division by the weight), a mask off
by one in the backward kernel, sigmoid clipped to 0 below a = -20 in float64; and an
rms_norm_rows that loops over each row in blocks of 128 (two passes forward) with tl.atomic_add
for the weight's gradient, one program per row."""

from .. import Mistake, Unusual
from .common import HEADER, _edit
from .rms_norm_rows import RMS
from .silu_mul import SILU_MUL

_BACKWARD_MASK = ("    mask = offsets < n\n    grad = tl.load(",
                  "    mask = offsets <= n\n    grad = tl.load(")

MISTAKES = [
    Mistake("rms_norm_rows", "y saved, x_hat = y / w, the weight's masked-off lanes loaded as 0",
            "x_hat recovered from y / w?", _edit(
                RMS, ("    x_hat = x * rstd\n", "    x_hat = x / w  # x here is y\n"),
                ("    ctx.save_for_backward(x, weight, output[1])",
                 "    ctx.save_for_backward(output[0], weight, output[1])"))),
    Mistake("silu_mul", "the backward kernel's mask offsets <= n, one lane too many",
            "reads outside its tensors on lanes past the end", _edit(SILU_MUL, _BACKWARD_MASK)),
    Mistake("silu_mul", "sigmoid clipped to 0 below a = -20, forward and backward",
            "taken as 1 (or 0) past some |a|", _edit(
                SILU_MUL, ("    y = a / (1 + tl.exp(-a)) * b",
                           "    y = tl.where(a < -20.0, 0.0, a / (1 + tl.exp(-a))) * b"),
                ("    sigmoid = 1 / (1 + tl.exp(-a))\n",
                 "    sigmoid = tl.where(a < -20.0, 0.0, 1 / (1 + tl.exp(-a)))\n"))),
]

UNUSUAL = [Unusual("rms_norm_rows", "one program per row looping over it in blocks of 128 (two "
                   "passes forward, two backward), tl.atomic_add into a zeroed weight gradient",
                   HEADER + '''
COLS = 128


@triton.jit
def fwd_kernel(x_ptr, w_ptr, y_ptr, rstd_ptr, D, eps, COLS: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = row * D
    acc = tl.zeros((COLS,), dtype=rstd_ptr.dtype.element_ty)
    for c in range(0, D, COLS):
        cols = c + tl.arange(0, COLS)
        m = cols < D
        x = tl.load(x_ptr + base + cols, mask=m, other=0.0).to(acc.dtype)
        acc += x * x
    rstd = 1 / tl.sqrt(tl.sum(acc, axis=0) / D + eps)
    tl.store(rstd_ptr + row, rstd)
    for c in range(0, D, COLS):
        cols = c + tl.arange(0, COLS)
        m = cols < D
        x = tl.load(x_ptr + base + cols, mask=m, other=0.0).to(acc.dtype)
        w = tl.load(w_ptr + cols, mask=m, other=0.0).to(acc.dtype)
        tl.store(y_ptr + base + cols, (x * rstd * w).to(y_ptr.dtype.element_ty), mask=m)


@triton.jit
def bwd_kernel(g_ptr, x_ptr, w_ptr, rstd_ptr, gx_ptr, gw_ptr, D, COLS: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = row * D
    rstd = tl.load(rstd_ptr + row)
    acc = tl.zeros((COLS,), dtype=rstd_ptr.dtype.element_ty)
    for c in range(0, D, COLS):
        cols = c + tl.arange(0, COLS)
        m = cols < D
        x = tl.load(x_ptr + base + cols, mask=m, other=0.0).to(acc.dtype)
        g = tl.load(g_ptr + base + cols, mask=m, other=0.0).to(acc.dtype)
        w = tl.load(w_ptr + cols, mask=m, other=0.0).to(acc.dtype)
        acc += g * w * x * rstd
    dot = tl.sum(acc, axis=0) / D
    for c in range(0, D, COLS):
        cols = c + tl.arange(0, COLS)
        m = cols < D
        x = tl.load(x_ptr + base + cols, mask=m, other=0.0).to(acc.dtype)
        g = tl.load(g_ptr + base + cols, mask=m, other=0.0).to(acc.dtype)
        w = tl.load(w_ptr + cols, mask=m, other=0.0).to(acc.dtype)
        xh = x * rstd
        tl.store(gx_ptr + base + cols, (rstd * (g * w - xh * dot)).to(gx_ptr.dtype.element_ty),
                 mask=m)
        tl.atomic_add(gw_ptr + cols, g * xh, mask=m)


def _wide(dt):
    return torch.float64 if dt == torch.float64 else torch.float32


@torch.library.custom_op("autograd_course::rmsr_fwd", mutates_args=())
def rmsr_fwd(x: torch.Tensor, weight: torch.Tensor,
             eps: float) -> tuple[torch.Tensor, torch.Tensor]:
    D = x.shape[-1]
    xr = x.contiguous().view(-1, D)
    y = torch.empty_like(xr)
    rstd = torch.empty(xr.shape[0], dtype=_wide(x.dtype), device=x.device)
    if xr.shape[0]:
        fwd_kernel[(xr.shape[0],)](xr, weight.contiguous(), y, rstd, D, eps, COLS=COLS)
    return y.view(x.shape), rstd


@rmsr_fwd.register_fake
def _(x, weight, eps):
    rows = x.numel() // x.shape[-1] if x.shape[-1] else x.shape[:-1].numel()
    return x.new_empty(x.shape), x.new_empty((rows,), dtype=_wide(x.dtype))


@torch.library.custom_op("autograd_course::rmsr_bwd", mutates_args=())
def rmsr_bwd(g: torch.Tensor, x: torch.Tensor, weight: torch.Tensor,
             rstd: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    D = x.shape[-1]
    xr, gr = x.contiguous().view(-1, D), g.contiguous().view(-1, D)
    gx = torch.empty_like(xr)
    gw = torch.zeros(D, dtype=rstd.dtype, device=x.device)
    if xr.shape[0]:
        bwd_kernel[(xr.shape[0],)](gr, xr, weight.contiguous(), rstd, gx, gw, D, COLS=COLS)
    return gx.view(x.shape), gw.to(weight.dtype)


@rmsr_bwd.register_fake
def _(g, x, weight, rstd):
    return x.new_empty(x.shape), weight.new_empty(weight.shape)


def _setup(ctx, inputs, output):
    x, w, eps = inputs
    ctx.save_for_backward(x, w, output[1])


def _bw(ctx, gy, grstd):
    x, w, rstd = ctx.saved_tensors
    gx, gw = rmsr_bwd(gy, x, w, rstd)
    return gx, gw, None


rmsr_fwd.register_autograd(_bw, setup_context=_setup)


def rms_norm_rows(x, weight, eps):
    return rmsr_fwd(x, weight, eps)[0]
''')]
