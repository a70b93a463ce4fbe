"""Lesson 00, review 56: caches keyed by the input tensor (Square's 2x; Square's, WeightedSum's
and Outer's outputs), stale after an in-place update between calls (an optimizer step). The
review keyed them by x.data_ptr() or id(x), which a freed tensor's successor can reuse, so that
an earlier check fails them by chance: here the key is the tensor object itself (its id,
checked by a weakref), which only the same tensor finds. Also 2 * y / x guarded at 0, which
overflows where x ** 2 does (inf where 2x is finite); tiny weights taken for 0; weights rounded
through bfloat16; float32 arithmetic in WeightedSum's backward, named before the tiny weights.
Unusual: x.detach() saved with set_materialize_grads(False) and an in-place multiply on a fresh
tensor; torch.add with alpha= and a generator over needs_input_grad."""

from .. import CACHED_BY_TENSOR as _CACHE, Mistake, Unusual, edit
from .answers import READ_X, SAVE_X, _outer, _square, _weighted

_SOLUTION_SQUARE = _square(SAVE_X, READ_X + "        return grad_output * 2 * x")
_SOLUTION_WEIGHTED = _weighted("        return grad_output * ctx.w1, grad_output * ctx.w2, None, None")
_BOTH = ("        u, v = ctx.saved_tensors\n"
         "        return (grad_output @ v if ctx.needs_input_grad[0] else None,\n"
         "                u @ grad_output if ctx.needs_input_grad[1] else None)")
_OLD_OUTPUT = "returned the output of the old values"

UNUSUAL = [
    Unusual("Square", "x.detach() saved, grads not materialised, in place on a fresh tensor",
            _square("        ctx.set_materialize_grads(False)\n"
                    "        ctx.save_for_backward(x.detach())\n        return torch.mul(x, x)",
                    "        if grad_output is None:\n            return None\n"
                    + READ_X + "        return grad_output.mul(x).mul_(2)")),
    Unusual("WeightedSum", "torch.add with alpha=, a generator over needs_input_grad", _weighted(
        "        grads = tuple(grad_output * w if need else None\n"
        "                      for w, need in zip(ctx.weights, ctx.needs_input_grad))\n"
        "        return grads + (None, None)",
        forward="        ctx.weights = (w1, w2)\n"
                "        return torch.add(x1 * w1, x2, alpha=w2)")),
]

MISTAKES = [
    Mistake("Square", "2x cached by the tensor x in forward, saved for backward",
            "returned grad_x of the old values", _CACHE + _square(
                "        ctx.save_for_backward(_cached((x,), (), lambda: 2 * x))\n"
                "        return x ** 2",
                "        two_x, = ctx.saved_tensors\n        return grad_output * two_x")),
    Mistake("Square", "the output cached by the tensor x", _OLD_OUTPUT, _CACHE + edit(
        _SOLUTION_SQUARE, ("return x ** 2", "return _cached((x,), (), lambda: x ** 2).clone()"))),
    Mistake("Square", "2 * y / x with x = 0 guarded: inf where x ** 2 overflows",
            "x ** 2 overflows to inf there", _square(
                "        y = x ** 2\n        ctx.save_for_backward(x, y)\n        return y",
                "        x, y = ctx.saved_tensors\n"
                "        safe = torch.where(x == 0, torch.ones_like(x), x)\n"
                "        return grad_output * torch.where(x == 0, torch.zeros_like(x), "
                "2 * y / safe)")),
    Mistake("WeightedSum", "weights below 1e-7 taken for 0", "a tiny weight", edit(
        _SOLUTION_WEIGHTED, ("ctx.w1, ctx.w2 = w1, w2\n",
                             "w1 = 0.0 if abs(w1) < 1e-7 else w1\n"
                             "        w2 = 0.0 if abs(w2) < 1e-7 else w2\n"
                             "        ctx.w1, ctx.w2 = w1, w2\n"))),
    Mistake("WeightedSum", "weights through a bfloat16 tensor in backward",
            "rounded to bfloat16", _weighted(
                "        w = torch.tensor([ctx.w1, ctx.w2], dtype=torch.bfloat16)"
                ".to(grad_output.dtype)\n"
                "        return grad_output * w[0], grad_output * w[1], None, None")),
    Mistake("WeightedSum", "float32 arithmetic in backward, tiny weights graded after it",
            "every value of grad_x1 is exactly a float32 number", edit(
                _SOLUTION_WEIGHTED, ("return grad_output * ctx.w1, grad_output * ctx.w2",
                                     "g = grad_output.float()\n"
                                     "        return g * ctx.w1, g * ctx.w2"))),
    Mistake("WeightedSum", "the output cached by the tensors x1, x2 and the weights",
            _OLD_OUTPUT, _CACHE + edit(
                _SOLUTION_WEIGHTED,
                ("return w1 * x1 + w2 * x2",
                 "return _cached((x1, x2), (w1, w2), lambda: w1 * x1 + w2 * x2).clone()"))),
    Mistake("Outer", "the output cached by the tensors u and v", _OLD_OUTPUT, _CACHE + _outer(
        _BOTH, forward="        ctx.save_for_backward(u, v)\n"
                       "        return _cached((u, v), (), lambda: torch.outer(u, v)).clone()")),
]
