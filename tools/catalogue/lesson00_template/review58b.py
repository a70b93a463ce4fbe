"""Lesson 00, review 58 (second round): Square's gradient set to 0 below a threshold of |x|
(named as a threshold, not as squaring), x kept in a closure on ctx, WeightedSum's forward
rescaled through w2 / w1, and the weights in a module dict keyed by id(ctx). Unusual: a module
call counter (nothing backward needs), a contiguous copy of x saved by Square (its contract,
unlike Outer's, forbids no copy), and the weights saved as one tensor of x's dtype (float64
inputs keep every digit; float32 ones round as a Python float would)."""

from .. import Mistake, Unusual, edit
from .answers import READ_X, SAVE_X, _square, _weighted

_SQUARE = _square(SAVE_X, READ_X + "        return grad_output * 2 * x")
_WEIGHTED = _weighted("        return grad_output * ctx.w1, grad_output * ctx.w2, None, None")

UNUSUAL = [
    Unusual("Square", "a module-level call counter, x saved through ctx", "CALLS = 0\n" + edit(
        _SQUARE, ("        ctx.save_for_backward(x)\n",
                  "        global CALLS\n        CALLS += 1\n        ctx.save_for_backward(x)\n"))),
    Unusual("Square", "a contiguous copy of x saved, flattened with view", edit(
        _SQUARE, (SAVE_X, "        flat = x.contiguous().view(-1)\n"
                          "        ctx.save_for_backward(flat)\n"
                          "        return (flat * flat).view(x.shape)"),
        (READ_X + "        return grad_output * 2 * x",
         "        flat, = ctx.saved_tensors\n"
         "        return (2 * flat * grad_output.reshape(-1)).view(grad_output.shape)"))),
    Unusual("WeightedSum", "the weights saved as one tensor of x1's dtype", _weighted(
        "        w, = ctx.saved_tensors\n"
        "        return grad_output * w[0], grad_output * w[1], None, None",
        "        w = torch.tensor([w1, w2], dtype=x1.dtype, device=x1.device)\n"
        "        ctx.save_for_backward(w)\n"
        "        return w[0] * x1 + w[1] * x2")),
]

MISTAKES = [
    Mistake("Square", "the gradient set to 0 where |x| < 1e-150",
            "below a threshold of |x|", edit(
                _SQUARE, ("return grad_output * 2 * x",
                          "return torch.where(x.abs() < 1e-150, torch.zeros_like(x), "
                          "2 * x * grad_output)"))),
    Mistake("Square", "x kept in a closure on ctx",
            "Square stores a tensor as ctx.get's closure variable x", edit(
                _SQUARE, ("        ctx.save_for_backward(x)\n", "        ctx.get = lambda: x\n"),
                (READ_X, "        x = ctx.get()\n"))),
    Mistake("WeightedSum", "forward rescaled: w1 * (x1 + (w2 / w1) * x2)",
            "through a ratio of the weights that overflows or underflows", edit(
                _WEIGHTED, ("        return w1 * x1 + w2 * x2",
                            "        if w1 == 0:\n"
                            "            return w2 * x2 + 0 * x1\n"
                            "        return w1 * (x1 + (w2 / w1) * x2)"))),
    Mistake("WeightedSum", "the weights in a module dict keyed by id(ctx), never removed",
            "WeightedSum.forward kept state outside ctx: _W in a module global",
            "_W = {}\n" + edit(
                _WEIGHTED,
                ("        ctx.w1, ctx.w2 = w1, w2\n", "        _W[id(ctx)] = (w1, w2)\n"),
                ("        return grad_output * ctx.w1, grad_output * ctx.w2",
                 "        w1, w2 = _W[id(ctx)]\n"
                 "        return grad_output * w1, grad_output * w2"))),
]
