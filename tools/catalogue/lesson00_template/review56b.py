"""Lesson 00, review 56b: constants at the ends of their range. Square's 2 * y / x guarded at
x = 0 and where y is inf, still 0 where x ** 2 underflows (1e-170) and a few digits off where it
is subnormal (3e-160), and a guard at float64's smallest normal, wrong in float32 only;
WeightedSum's gradient for x2 reused from x1's through the ratio w2 / w1, inf at (1e-200, 1e200)
or (1e-310, 1.0), and the same guarded by math.isfinite, 0 where the ratio underflows. Layouts
the page now states: x, x1 and x2 flattened with .view(-1) (transposed inputs), u spread down
the rows with as_strided (stride 1 assumed). Unusual: the weights as a float64 tensor through
save_for_backward, read back with tolist()."""

from .. import Mistake, Unusual, edit
from . import review56
from .answers import READ_UV, READ_X, SAVE_X, _outer, _square, _weighted

_GUARDED = next(m.code for m in review56.MISTAKES if m.name.startswith("2 * y / x with x = 0"))
_INF_GUARDED = edit(_GUARDED, ("2 * y / safe)",
                               "torch.where(torch.isinf(y), 2 * x, 2 * y / safe))"))
_SOLUTION_WEIGHTED = _weighted(
    "        return grad_output * ctx.w1, grad_output * ctx.w2, None, None")
_RATIO = ("        g1 = grad_output * ctx.w1\n"
          "        g2 = g1 * (ctx.w2 / ctx.w1) if ctx.w1 != 0 else grad_output * ctx.w2\n"
          "        return g1, g2, None, None")
_BOTH = ("        need_u, need_v = ctx.needs_input_grad\n"
         "        return (grad_output @ v if need_u else None,\n"
         "                u @ grad_output if need_v else None)")

UNUSUAL = [
    Unusual("WeightedSum", "weights as a float64 tensor saved, read back with tolist()", _weighted(
        "        w, = ctx.saved_tensors\n        w1, w2 = w.tolist()\n"
        "        return grad_output.mul(w1), grad_output.mul(w2), None, None",
        forward="        ctx.save_for_backward(torch.tensor([w1, w2], dtype=torch.float64))\n"
                "        return torch.add(x1 * w1, x2, alpha=w2)")),
]

MISTAKES = [
    Mistake("Square", "2 * y / x guarded at x = 0 and where y is inf: 0 where x ** 2 underflows",
            "x ** 2 underflows to 0 there", _INF_GUARDED),
    Mistake("Square", "2 * y / x below float64's smallest normal y guarded: wrong in float32",
            "a subnormal number with few digits left",
            edit(_INF_GUARDED, ("2 * y / safe))", "torch.where(y.double() < 2.3e-308, 2 * x, "
                                                   "2 * y / safe)))"))),
    Mistake("Square", "x flattened with .view(-1) in forward", "view size is not compatible",
            _square("        ctx.save_for_backward(x)\n        flat = x.view(-1)\n"
                    "        return (flat * flat).view(x.shape)",
                    READ_X + "        return grad_output * 2 * x")),
    Mistake("WeightedSum", "grad_x2 as grad_x1 * (w2 / w1), guarded at w1 = 0",
            "through a ratio of the weights that overflows or underflows", _weighted(_RATIO)),
    Mistake("WeightedSum", "grad_x2 through the ratio w2 / w1 where it is finite",
            "through a ratio of the weights that overflows or underflows", "import math\n" + edit(
                _weighted(_RATIO), ("if ctx.w1 != 0 else",
                                    "if ctx.w1 != 0 and math.isfinite(ctx.w2 / ctx.w1) else"))),
    Mistake("WeightedSum", "x1 and x2 flattened with .view(-1) in forward",
            "view size is not compatible", edit(
                _SOLUTION_WEIGHTED, ("return w1 * x1 + w2 * x2",
                                     "return (w1 * x1.view(-1) + w2 * x2.view(-1))"
                                     ".view(x1.shape)"))),
    Mistake("Outer", "u spread down the rows with as_strided, stride 1",
            "with column slice inputs", _outer(
                READ_UV + _BOTH, forward="        ctx.save_for_backward(u, v)\n"
                "        return torch.as_strided(u, (len(u), len(v)), (1, 0)) * v")),
]
