"""Lesson 00, review 58 (fourth round): the reviewer's wrong answers were all named already;
their correct but unusual ones: Square's product in the order (x * grad_output) * 2, which
rounds differently from autograd's at the smallest subnormals when grad_output is not a power
of two (the contract allows any order there), and WeightedSum's float32 inputs summed in
float64 and cast once (more exact than autograd's, last-ulp differences)."""

from .. import Unusual, edit
from .answers import READ_X, SAVE_X, _square, _weighted

_SQUARE = _square(SAVE_X, READ_X + "        return grad_output * 2 * x")

UNUSUAL = [
    Unusual("Square", "the product in the order (x * grad_output) * 2", edit(
        _SQUARE, ("return grad_output * 2 * x", "return (x * grad_output) * 2"))),
    Unusual("WeightedSum", "float32 inputs weighted and summed in float64, cast back once",
            _weighted("        return grad_output * ctx.w1, grad_output * ctx.w2, None, None",
                      "        ctx.w1, ctx.w2 = w1, w2\n"
                      "        return (w1 * x1.double() + w2 * x2.double()).to(x1.dtype)")),
]

MISTAKES: list = []
