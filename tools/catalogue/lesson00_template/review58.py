"""Lesson 00, review 58: WeightedSum folded to w1 * (x1 + x2) when the weights are equal (x1 + x2
overflows where the weighted sum does not), graded at 1e308 and 3e38; a fifth value returned by
backward (a trailing None the engine drops), counted; Square's gradient where 2x overflows, now
graded with grad_output other than 1 (inf where the product overflows, inf or the finite
product where only 2x does); a FIFO of derivatives shared by every call, and weights kept in a
mutable default argument, named. Unusual: the order of the product where only 2x overflows."""

from .. import Mistake, Unusual, edit
from .answers import READ_X, SAVE_X, _square, _weighted

_SOLUTION_SQUARE = _square(SAVE_X, READ_X + "        return 2 * x * grad_output")
_SOLUTION_WEIGHTED = _weighted(
    "        return grad_output * ctx.w1, grad_output * ctx.w2, None, None")
_FIFO = ("        if torch.is_grad_enabled() or x.requires_grad:\n"
         "            _q.append(2 * x.detach())\n"
         "        ctx.save_for_backward(x)\n")

UNUSUAL = [
    Unusual("Square", "grad_output * 2 * x: the finite product where only 2x overflows", edit(
        _SOLUTION_SQUARE, ("return 2 * x * grad_output", "return grad_output * 2 * x"))),
    Unusual("Square", "x * grad_output * 2: the product formed before the factor 2", edit(
        _SOLUTION_SQUARE, ("return 2 * x * grad_output", "return x * grad_output * 2"))),
]

MISTAKES = [
    Mistake("WeightedSum", "w1 * (x1 + x2) when w1 == w2: x1 + x2 overflows",
            "does your forward add x1 and x2 before weighting them", edit(
                _SOLUTION_WEIGHTED, ("        return w1 * x1 + w2 * x2",
                                     "        if w1 == w2:\n"
                                     "            return w1 * (x1 + x2)\n"
                                     "        return w1 * x1 + w2 * x2"))),
    Mistake("WeightedSum", "five values for four inputs, a trailing None",
            "WeightedSum.backward returned 5 values", edit(
                _SOLUTION_WEIGHTED, ("grad_output * ctx.w2, None, None",
                                     "grad_output * ctx.w2, None, None, None"))),
    Mistake("WeightedSum", "weights kept in a mutable default argument of forward",
            "WeightedSum.forward changed its own mutable default argument", edit(
                _SOLUTION_WEIGHTED,
                ("def forward(ctx, x1, x2, w1, w2):",
                 "def forward(ctx, x1, x2, w1, w2, _last=[]):"),
                ("        ctx.w1, ctx.w2 = w1, w2\n", "        _last[:] = [w1, w2]\n"),
                ("        return grad_output * ctx.w1, grad_output * ctx.w2",
                 "        w1, w2 = WeightedSum.forward.__defaults__[0]\n"
                 "        return grad_output * w1, grad_output * w2"))),
    Mistake("Square", "a FIFO of derivatives in a module global, shared by every call",
            "a tensor from an earlier call of another shape", "import collections\n"
            "_q = collections.deque()\n" + edit(
                _SOLUTION_SQUARE, ("        ctx.save_for_backward(x)\n", _FIFO),
                ("return 2 * x * grad_output",
                 "d = _q[0] if len(_q) == 1 else _q.popleft()\n        return grad_output * d"))),
    Mistake("Square", "the gradient clamped to the largest float64 where 2x overflows",
            "where autograd gives inf (grad_output = 3)", edit(
                _SOLUTION_SQUARE, ("return 2 * x * grad_output",
                                   "r = 2 * x * grad_output\n"
                                   "        if r.dtype == torch.float64:\n"
                                   "            r = r.clamp(-1.7e308, 1.7e308)\n"
                                   "        return r"))),
]
