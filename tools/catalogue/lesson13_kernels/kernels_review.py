"""Lesson 13: mistakes a review found, each now named: a masked load without other= feeding a
row's sum (NaN in masked-off lanes under the grader, undefined on a GPU), a row's mean divided
by the block's width, a result recovered from the saved output by dividing by an input (not
finite at its zeros), two gradients as views of one buffer, and a triton_op forward."""

from .. import Mistake
from .common import _edit
from .rms_norm_rows import RMS
from .silu_mul import SILU_MUL

# the saved output gives silu(a) = y / b and sigmoid(a) = silu / a: no exp in backward
SILU_FROM_SAVED_OUTPUT = _edit(
    SILU_MUL,
    ("def silu_mul_backward_kernel(grad_ptr, a_ptr, b_ptr, grad_a_ptr, grad_b_ptr, n,",
     "def silu_mul_backward_kernel(grad_ptr, a_ptr, b_ptr, y_ptr, grad_a_ptr, grad_b_ptr, n,"),
    ("    sigmoid = 1 / (1 + tl.exp(-a))\n",
     "    silu = tl.load(y_ptr + offsets, mask=mask).to(grad.dtype) / b\n"
     "    sigmoid = silu / a\n"),
    ("                      b: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:\n"
     "    grad, a, b = grad.contiguous(), a.contiguous(), b.contiguous()",
     "                      b: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, "
     "torch.Tensor]:\n"
     "    grad, a, b, y = grad.contiguous(), a.contiguous(), b.contiguous(), y.contiguous()"),
    ("(grad, a, b, grad_a, grad_b,", "(grad, a, b, y, grad_a, grad_b,"),
    ("def _(grad, a, b):", "def _(grad, a, b, y):"),
    ("    ctx.save_for_backward(*inputs)", "    ctx.save_for_backward(*inputs, output)"),
    ("    a, b = ctx.saved_tensors\n    return silu_mul_backward(grad_output, a, b)",
     "    a, b, y = ctx.saved_tensors\n    return silu_mul_backward(grad_output, a, b, y)"))

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

MISTAKES = [
    Mistake("rms_norm_rows", "masked loads without other= feeding tl.sum",
            "a masked load without other= feeds a result of rms_norm_rows", _edit(
                RMS,
                ("    x = tl.load(x_ptr + row * D + columns, mask=mask, other=0.0)\n"
                 "    w = tl.load(w_ptr + columns, mask=mask, other=0.0)\n",
                 "    x = tl.load(x_ptr + row * D + columns, mask=mask)\n"
                 "    w = tl.load(w_ptr + columns, mask=mask)\n"))),
    Mistake("rms_norm_rows", "the mean over the row divided by BLOCK_D, not D",
            "right for rows of 8 (a power of two", _edit(
                RMS,
                ("    rstd = 1 / tl.sqrt(tl.sum(x * x, axis=0) / D + eps)",
                 "    rstd = 1 / tl.sqrt(tl.sum(x * x, axis=0) / BLOCK_D + eps)"),
                ("tl.sum(grad_hat * x_hat, axis=0) / D)",
                 "tl.sum(grad_hat * x_hat, axis=0) / BLOCK_D)"))),
    Mistake("rms_norm_rows", "y saved, x_hat recovered as y / weight",
            "not finite where a weight entry is 0",
            RMS_FROM_SAVED_OUTPUT),
    Mistake("silu_mul", "silu and sigmoid recovered from the saved output, y / b and silu / a",
            "not finite where a or b is 0", SILU_FROM_SAVED_OUTPUT),
    Mistake("silu_mul", "two gradients returned as views of one buffer",
            "returns outputs that alias each other", _edit(
                SILU_MUL,
                ("    grad_a, grad_b = torch.empty_like(a), torch.empty_like(b)\n",
                 "    both = torch.empty((2, *a.shape), dtype=a.dtype, device=a.device)\n"
                 "    grad_a, grad_b = both[0], both[1]\n"))),
    Mistake("silu_mul", "the forward operator a torch.library.triton_op",
            "is a torch.library.triton_op", _edit(
                SILU_MUL,
                ('@torch.library.custom_op("autograd_course::silu_mul", mutates_args=())',
                 '@torch.library.triton_op("autograd_course::silu_mul", mutates_args=())'))),
]
