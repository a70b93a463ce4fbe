"""Lesson 00, review 58 (third round): Square's gradient cut to 0 below a threshold of |x| far
down the range (1e-200, and subnormal x alone), and float32 (float16) arithmetic above a size
in Square and in Outer, each named by a probe at that scale. Unusual: an in-place product on a
clone of grad_output above 4096 entries (a size-dependent path that keeps every digit), and
the weights saved as two 0-d float64 tensors with torch.add's alpha= in forward."""

from .. import Mistake, Unusual, edit
from .answers import READ_UV, READ_X, SAVE_X, _outer, _square, _weighted

_SQUARE = _square(SAVE_X, READ_X + "        return grad_output * 2 * x")
_OUTER = _outer(READ_UV + "        need_u, need_v = ctx.needs_input_grad[:2]\n"
                "        return (grad_output @ v if need_u else None,\n"
                "                u @ grad_output if need_v else None)")

UNUSUAL = [
    Unusual("Square", "in place on a clone of grad_output above 4096 entries", edit(
        _SQUARE, ("        return grad_output * 2 * x",
                  "        if x.numel() > 4096:\n"
                  "            g = grad_output.clone()\n"
                  "            g.mul_(x).mul_(2)\n"
                  "            return g\n"
                  "        return 2 * x * grad_output"))),
    Unusual("WeightedSum", "the weights saved as two 0-d float64 tensors, torch.add's alpha=",
            _weighted("        w1, w2 = ctx.saved_tensors\n"
                      "        return grad_output * w1, grad_output * w2, None, None",
                      "        ctx.save_for_backward(torch.tensor(w1, dtype=torch.float64),\n"
                      "                              torch.tensor(w2, dtype=torch.float64))\n"
                      "        return torch.add(x1 * w1, x2, alpha=w2)")),
]

MISTAKES = [
    Mistake("Square", "the gradient set to 0 where |x| < 1e-200",
            "below a threshold of |x|", edit(
                _SQUARE, ("return grad_output * 2 * x",
                          "return torch.where(x.abs() < 1e-200, torch.zeros_like(x), "
                          "2 * x * grad_output)"))),
    Mistake("Square", "the gradient set to 0 for subnormal x (below float64's smallest normal)",
            "below a threshold of |x|", edit(
                _SQUARE, ("return grad_output * 2 * x",
                          "return torch.where(x.abs() < torch.finfo(x.dtype).tiny, "
                          "torch.zeros_like(x), 2 * x * grad_output)"))),
    Mistake("Square", "float32 arithmetic when x has 10,000 entries or more",
            "above some size", edit(
                _SQUARE, ("        return grad_output * 2 * x",
                          "        if x.numel() >= 10_000:\n"
                          "            return (grad_output.float() * 2 * x.float()).to(x.dtype)\n"
                          "        return grad_output * 2 * x"))),
    Mistake("Square", "float16 arithmetic for float32 x of 10,000 entries or more",
            "at x of shape (256, 512) (float32)", edit(
                _SQUARE, ("        return grad_output * 2 * x",
                          "        if x.numel() >= 10_000 and x.dtype == torch.float32:\n"
                          "            return (grad_output.half() * 2 * x.half()).float()\n"
                          "        return grad_output * 2 * x"))),
    Mistake("Outer", "grad_v rounded through float32 when m > 64", "above some size", edit(
        _OUTER, ("u @ grad_output if need_v",
                 "(u @ grad_output).float().to(u.dtype) if u.numel() > 64 and need_v else "
                 "u @ grad_output if need_v"))),
]
