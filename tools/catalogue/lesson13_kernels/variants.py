"""Lesson 13: answers written as edits of the lesson's solutions (or of one another), which the
entries of silu_mul_answers and rms_norm_rows_answers build on: an output recovered from the
saved result, rstd saved or read otherwise, two gradients in one buffer, buffers kept between
calls, steps rounded to half precision."""

from .common import _edit
from .rms_norm_rows import RMS
from .rms_norm_rows_groups import GROUPS
from .silu_mul import SILU_MUL


# answers written as edits of one another, shared by the exercise modules


# the saved output gives silu(a) = y / b and sigmoid(a) = silu / a: no exp in backward
SILU_FROM_SAVED_OUTPUT = _edit(
    SILU_MUL,
    ("def silu_mul_backward_kernel(grad_ptr, a_ptr, b_ptr, grad_a_ptr, grad_b_ptr, n,",
     "def silu_mul_backward_kernel(grad_ptr, a_ptr, b_ptr, y_ptr, grad_a_ptr, grad_b_ptr, n,"),
    ("    sigmoid = 1 / (1 + tl.exp(-a))\n",
     "    silu = tl.load(y_ptr + offsets, mask=mask).to(grad.dtype) / b\n"
     "    sigmoid = silu / a\n"),
    ("                      need_b: bool) -> tuple[torch.Tensor, torch.Tensor]:\n"
     "    grad, a, b = grad.contiguous(), a.contiguous(), b.contiguous()",
     "                      need_b: bool, y: torch.Tensor) -> tuple[torch.Tensor, "
     "torch.Tensor]:\n"
     "    grad, a, b, y = grad.contiguous(), a.contiguous(), b.contiguous(), y.contiguous()"),
    ("(grad, a, b, grad_a, grad_b,", "(grad, a, b, y, grad_a, grad_b,"),
    ("def _(grad, a, b, need_a, need_b):", "def _(grad, a, b, need_a, need_b, y):"),
    ("    ctx.save_for_backward(*inputs)", "    ctx.save_for_backward(*inputs, output)"),
    ("    a, b = ctx.saved_tensors\n"
     "    return silu_mul_backward(grad_output, a, b, *ctx.needs_input_grad)",
     "    a, b, y = ctx.saved_tensors\n"
     "    return silu_mul_backward(grad_output, a, b, *ctx.needs_input_grad, y)"))


# y saved instead of x, and x_hat = y / weight in backward (masked-off lanes of w loaded as 1)
RMS_FROM_SAVED_OUTPUT = _edit(
    RMS,
    ("    x = tl.load(x_ptr + row * D + columns, mask=mask, other=0.0)\n"
     "    w = tl.load(w_ptr + columns, mask=mask, other=0.0)\n"
     "    if x.dtype != tl.float64:\n        grad,",
     "    x = tl.load(x_ptr + row * D + columns, mask=mask, other=0.0)\n"
     "    w = tl.load(w_ptr + columns, mask=mask, other=1.0)\n"
     "    if x.dtype != tl.float64:\n        grad,"),
    ("    x_hat = x * rstd\n", "    x_hat = x / w  # x here is y = x_hat * w\n"),
    ("    ctx.save_for_backward(x, weight, output[1])",
     "    ctx.save_for_backward(output[0], weight, output[1])"))


def _chunked(chunk: int) -> str:
    """SILU_MUL whose backward launches its kernel once per ``chunk`` elements."""
    return _edit(
        SILU_MUL,
        ("    silu_mul_backward_kernel[(triton.cdiv(a.numel(), BLOCK),)](grad, a, b, grad_a, "
         "grad_b,\n"
         "                                                               a.numel(), BLOCK=BLOCK,\n"
         "                                                               NEED_A=need_a, NEED_B=need_b)",
         f"    CHUNK = {chunk}  # offsets stay small: a launch per chunk\n"
         "    for start in range(0, a.numel(), CHUNK):\n"
         "        end = min(a.numel(), start + CHUNK)\n"
         "        flat = [t.view(-1)[start:end] for t in (grad, a, b, grad_a, grad_b)]\n"
         "        silu_mul_backward_kernel[(triton.cdiv(end - start, BLOCK),)](\n"
         "            *flat, end - start, BLOCK=BLOCK, NEED_A=need_a, NEED_B=need_b)"))


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


_TUPLE = "                      need_b: bool) -> tuple[torch.Tensor, torch.Tensor]:"


_FAKES = ("    return (torch.empty_like(a, memory_format=torch.contiguous_format) if need_a\n"
          "            else a.new_empty(0),\n"
          "            torch.empty_like(b, memory_format=torch.contiguous_format) if need_b\n"
          "            else b.new_empty(0))")


_ALLOCATE = ("    grad_a = torch.empty_like(a) if need_a else a.new_empty(0)\n"
             "    grad_b = torch.empty_like(b) if need_b else b.new_empty(0)\n")


_CALL = "    return silu_mul_backward(grad_output, a, b, *ctx.needs_input_grad)\n"


STACKED = _edit(
    SILU_MUL,
    (_TUPLE, "                      need_b: bool) -> torch.Tensor:"),
    (_ALLOCATE,
     "    both = torch.empty((2, *a.shape), dtype=a.dtype, device=a.device)\n"
     "    grad_a, grad_b = both[0], both[1]\n"),
    ("    return grad_a, grad_b\n", "    return both\n"),
    (_FAKES, "    return a.new_empty((2, *a.shape))"),
    (_CALL, "    both = silu_mul_backward(grad_output, a, b, *ctx.needs_input_grad)\n"
            "    return both[0], both[1]\n"))


_FORWARD_FLOAT32 = """    if a.dtype != tl.float64:
        a, b = a.to(tl.float32), b.to(tl.float32)
    y = a / (1 + tl.exp(-a)) * b
"""


_LIST_FAKES = ("    return [torch.empty_like(a, memory_format=torch.contiguous_format) if need_a\n"
               "            else a.new_empty(0),\n"
               "            torch.empty_like(b, memory_format=torch.contiguous_format) if need_b\n"
               "            else b.new_empty(0)]")


_FORWARD_LAUNCH = ("    silu_mul_kernel[(triton.cdiv(a.numel(), BLOCK),)](a, b, y, a.numel(), "
                   "BLOCK=BLOCK)\n")


_BACKWARD_LAUNCH = ("    silu_mul_backward_kernel[(triton.cdiv(a.numel(), BLOCK),)](grad, a, b, "
                    "grad_a, grad_b,\n")


_TWO_SIZES = "backward used a later call's size"


_GRAD_B = ("        tl.store(grad_b_ptr + offsets, (grad * a * sigmoid).to(grad_b_ptr.dtype.element_ty),\n"
           "                 mask=mask)\n")


_GRAD_A = "        grad_a = grad * b * sigmoid * (1 + a * (1 - sigmoid))\n"


def _half_grad_b(dtype: str) -> str:
    """The gradient for b formed in ``dtype`` from grad_output and silu(a) rounded to it."""
    return _edit(SILU_MUL, (_GRAD_B, (
        f"        if grad_b_ptr.dtype.element_ty == tl.{dtype}:\n"
        f"            grad_b = grad.to(tl.{dtype}) * (a * sigmoid).to(tl.{dtype})\n"
        "        else:\n"
        "            grad_b = (grad * a * sigmoid).to(grad_b_ptr.dtype.element_ty)\n"
        "        tl.store(grad_b_ptr + offsets, grad_b, mask=mask)\n")))


_Y = ("    tl.store(y_ptr + row * D + columns, (x * rstd * w).to(y_ptr.dtype.element_ty), "
      "mask=mask)\n")


_GRAD_X = "    grad_x = rstd * (grad_hat - x_hat * tl.sum(grad_hat * x_hat, axis=0) / D)\n"


_PARTIALS = "    partial_w = torch.empty(rows.shape, device=x.device, dtype=rstd.dtype)\n"


_KEPT = "keeps a buffer from one call to the next"


_FORWARD = ("    y = torch.empty_like(a)\n"
            "    silu_mul_kernel[(triton.cdiv(a.numel(), BLOCK),)](a, b, y, a.numel(), "
            "BLOCK=BLOCK)\n    return y\n")


_OP = '@torch.library.custom_op("autograd_course::silu_mul", mutates_args=())'


_PARTIALS = "    partial_w = torch.empty(rows.shape, device=x.device, dtype=rstd.dtype)\n"


_BACKWARD_MASK = ("    mask = offsets < n\n    grad = tl.load(",
                  "    mask = offsets <= n\n    grad = tl.load(")


_SQUARES_IN_HALF = (
    "    x = tl.load(x_ptr + row * D + columns, mask=mask, other=0.0)\n"
    "    w = tl.load(w_ptr + columns, mask=mask, other=0.0)\n"
    "    if x.dtype != tl.float64:\n"
    "        x, w = x.to(tl.float32), w.to(tl.float32)\n"
    "    rstd = 1 / tl.sqrt(tl.sum(x * x, axis=0) / D + eps)\n",
    "    x = tl.load(x_ptr + row * D + columns, mask=mask, other=0.0)\n"
    "    w = tl.load(w_ptr + columns, mask=mask, other=0.0)\n"
    "    xx = x * x  # in the loaded dtype\n"
    "    if x.dtype == tl.bfloat16:\n"
    "        xx = x.to(tl.float32) * x.to(tl.float32)\n"
    "    if x.dtype != tl.float64:\n"
    "        x, w = x.to(tl.float32), w.to(tl.float32)\n"
    "    rstd = 1 / tl.sqrt(tl.sum(xx.to(x.dtype), axis=0) / D + eps)\n")


_WEIGHT_CACHE = (
    "        rms_norm_kernel[(rows.shape[0],)](rows, weight.contiguous(), y, rstd, D, eps,",
    "        key = (weight.data_ptr(), weight.shape, weight.dtype)\n"
    "        if key not in _W_CACHE:\n"
    "            _W_CACHE.clear()\n"
    "            _W_CACHE[key] = weight.contiguous().clone()\n"
    "        rms_norm_kernel[(rows.shape[0],)](rows, _W_CACHE[key], y, rstd, D, eps,")


_CACHE_GLOBAL = ("\n@triton.jit\n", "\n_W_CACHE = {}\n\n\n@triton.jit\n")


_SAVE = "    ctx.save_for_backward(x, weight, output[1])"
