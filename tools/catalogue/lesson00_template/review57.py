"""Lesson 00, review 57 (round C): Square's gradient made finite where 2x overflows (nan_to_num,
in both dtypes, and the output as well), graded at 1e308 and 2e38 with infs compared exactly; a
cache set once on the class, for Square (in backward, in forward) and WeightedSum, caught by the
class-state check that now runs before the first call, as Outer's does. Unusual: x * x and
addcmul; a copy of the output saved beside x; WeightedSum skipping the term whose weight is 0
(x1 and x2 are finite by contract, where 0 * x is 0)."""

from .. import Mistake, Unusual, edit
from .answers import READ_X, SAVE_X, _square, _weighted

_SOLUTION_SQUARE = _square(SAVE_X, READ_X + "        return 2 * x * grad_output")
_SOLUTION_WEIGHTED = _weighted(
    "        return grad_output * ctx.w1, grad_output * ctx.w2, None, None")
_CACHE = ("        cache = Square.__dict__.get('_two')\n"
          "        if cache is None:\n"
          "            Square._two = cache = {}\n")

UNUSUAL = [
    Unusual("Square", "x.mul(x), the gradient by addcmul into zeros", _square(
        "        ctx.save_for_backward(x)\n        return x.mul(x)",
        READ_X + "        return torch.addcmul(torch.zeros_like(x), x, grad_output, value=2.0)")),
    Unusual("Square", "a copy of the output saved beside x", _square(
        "        y = x ** 2\n        ctx.save_for_backward(x, y.clone())\n        return y",
        "        x, _ = ctx.saved_tensors\n        return 2 * x * grad_output")),
    Unusual("WeightedSum", "the term whose weight is 0 skipped in forward", edit(
        _SOLUTION_WEIGHTED, ("        return w1 * x1 + w2 * x2",
                             "        if not w1:\n            return w2 * x2\n"
                             "        if not w2:\n            return w1 * x1\n"
                             "        return w1 * x1 + w2 * x2"))),
]

MISTAKES = [
    Mistake("Square", "nan_to_num on the gradient: the largest float where 2x overflows",
            "where autograd gives inf", edit(
                _SOLUTION_SQUARE, ("return 2 * x * grad_output",
                                   "return torch.nan_to_num(2 * x * grad_output)"))),
    Mistake("Square", "the gradient clamped to float32's range, in float32 only",
            "(torch.float32), where autograd gives inf", edit(
                _SOLUTION_SQUARE, ("return 2 * x * grad_output",
                                   "r = 2 * x * grad_output\n"
                                   "        if r.dtype == torch.float32:\n"
                                   "            r = r.clamp(-3.4e38, 3.4e38)\n"
                                   "        return r"))),
    Mistake("Square", "nan_to_num on the output: the largest float where x ** 2 overflows",
            "your output is", edit(_SOLUTION_SQUARE, ("return x ** 2",
                                                     "return torch.nan_to_num(x ** 2)"))),
    Mistake("Square", "a constant 2 cached on the class, by dtype, in backward",
            "Square.backward sets Square._two", edit(
                _SOLUTION_SQUARE, ("        return 2 * x * grad_output",
                                   _CACHE + "        two = cache.setdefault(x.dtype, "
                                   "torch.tensor(2.0, dtype=x.dtype))\n"
                                   "        return two * x * grad_output"))),
    Mistake("Square", "a constant 2 cached on the class, by dtype, in forward",
            "Square.forward sets Square._two", edit(
                _SOLUTION_SQUARE, ("        ctx.save_for_backward(x)\n",
                                   _CACHE + "        cache.setdefault(x.dtype, 2.0)\n"
                                   "        ctx.save_for_backward(x)\n"),
                ("return 2 * x * grad_output", "return Square._two[x.dtype] * x * grad_output"))),
    Mistake("WeightedSum", "a flag set once on the class in forward",
            "WeightedSum.forward sets WeightedSum._ready", edit(
                _SOLUTION_WEIGHTED, ("        ctx.w1, ctx.w2 = w1, w2\n",
                                     "        if not WeightedSum.__dict__.get('_ready'):\n"
                                     "            WeightedSum._ready = True\n"
                                     "        ctx.w1, ctx.w2 = w1, w2\n"))),
]
