"""Lesson 13: what review 54 found passing, each now named: a backward operator returning one
(2, ...) tensor whose rows the registered backward hands autograd (both gradients in one
buffer), and float16 products computed in float16 (within 2 ulp on random values, several ulp
off where sigmoid(a) and silu(a) are below float16's normal range), rms_norm_rows saving two
tensors of one value per row (the contract's budget is one); and an unusual answer: a backward
operator declared to return list[Tensor]."""

from .. import Mistake, Unusual
from .common import _edit
from .rms_norm_rows import RMS
from .silu_mul import SILU_MUL

_TUPLE = "                      b: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:"
_FAKES = ("    return (torch.empty_like(a, memory_format=torch.contiguous_format),\n"
          "            torch.empty_like(b, memory_format=torch.contiguous_format))")

STACKED = _edit(
    SILU_MUL,
    (_TUPLE, "                      b: torch.Tensor) -> torch.Tensor:"),
    ("    grad_a, grad_b = torch.empty_like(a), torch.empty_like(b)\n",
     "    both = torch.empty((2, *a.shape), dtype=a.dtype, device=a.device)\n"
     "    grad_a, grad_b = both[0], both[1]\n"),
    ("    return grad_a, grad_b\n", "    return both\n"),
    (_FAKES, "    return a.new_empty((2, *a.shape))"),
    ("    return silu_mul_backward(grad_output, a, b)\n",
     "    both = silu_mul_backward(grad_output, a, b)\n    return both[0], both[1]\n"))

_FORWARD_FLOAT32 = """    if a.dtype != tl.float64:
        a, b = a.to(tl.float32), b.to(tl.float32)
    y = a / (1 + tl.exp(-a)) * b
"""

MISTAKES = [
    Mistake("rms_norm_rows", "rstd saved twice, two tensors of one value per row",
            "the contract's budget is one such tensor besides the inputs", _edit(
                RMS, ("    ctx.save_for_backward(x, weight, output[1])",
                      "    ctx.save_for_backward(x, weight, output[1], output[1])"),
                ("    x, weight, rstd = ctx.saved_tensors",
                 "    x, weight, rstd, _ = ctx.saved_tensors"))),
    Mistake("silu_mul", "the backward operator returns one (2, ...) tensor, its rows the two "
            "gradients", "gradients for a and b are views of one buffer", STACKED),
    Mistake("silu_mul", "float16: sigmoid in float32, the two products in float16",
            "where sigmoid(a) and silu(a) lie below float16's smallest normal", _edit(
                SILU_MUL, (_FORWARD_FLOAT32, """    if a.dtype == tl.float16:  # products in float16
        s = 1 / (1 + tl.exp(-a.to(tl.float32)))
        y = (a * s.to(tl.float16)) * b
    else:
        if a.dtype != tl.float64:
            a, b = a.to(tl.float32), b.to(tl.float32)
        y = a / (1 + tl.exp(-a)) * b
"""))),
    Mistake("silu_mul", "float16: silu(a) in float32, the product with b in float16",
            "where sigmoid(a) and silu(a) lie below float16's smallest normal", _edit(
                SILU_MUL, (_FORWARD_FLOAT32, """    if a.dtype == tl.float16:  # silu rounded to float16
        a32 = a.to(tl.float32)
        y = (a32 / (1 + tl.exp(-a32))).to(tl.float16) * b
    else:
        if a.dtype != tl.float64:
            a, b = a.to(tl.float32), b.to(tl.float32)
        y = a / (1 + tl.exp(-a)) * b
"""))),
]

_LIST_FAKES = ("    return [torch.empty_like(a, memory_format=torch.contiguous_format),\n"
               "            torch.empty_like(b, memory_format=torch.contiguous_format)]")

UNUSUAL = [
    Unusual("silu_mul", "a backward operator declared to return list[Tensor], two fresh tensors",
            _edit(SILU_MUL,
                  (_TUPLE, "                      b: torch.Tensor) -> list[torch.Tensor]:"),
                  ("    return grad_a, grad_b\n", "    return [grad_a, grad_b]\n"),
                  (_FAKES, _LIST_FAKES),
                  ("    return silu_mul_backward(grad_output, a, b)\n",
                   "    grad_a, grad_b = silu_mul_backward(grad_output, a, b)\n"
                   "    return grad_a, grad_b\n"))),
]
