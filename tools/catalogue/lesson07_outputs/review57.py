"""Lesson 07: review 57's answers. All were caught; three first lines were polished: an error of
the learner's own now quotes the line that raised it (a 0-d x reshaped to rows), one over-wide
saved sign names its dtype, and a mark_dirty left out no longer calls the grader's clone the
learner's (issue 48: the learner did return x; apply handed back a view of it). Four unusual
answers pass: a copysign_ write, a sign built by torch.gt(out=int8), an expanded 0-d zero
concatenated to the known half, F.relu(inplace=True) with a backward by y.sign()."""

from .. import Mistake, Unusual, edit
from .abs_in_place import COMPARISONS, abs_answer
from .relu_in_place import _RELU_BACKWARD, _RELU_FORWARD, _relu
from .sort_with_indices import _sort, _sort_backward
from .split_halves import _SPLIT_BACKWARD, _split

MISTAKES = [
    Mistake("SortWithIndices", "rows by reshape(-1, n) and a loop, raising on a 0-d x",
            "tuple index out of range at `n = indices.shape[-1]` (line", _sort(
                backward=_sort_backward(
                    "        n = indices.shape[-1]\n"
                    "        g2, i2 = grad_values.reshape(-1, n), indices.reshape(-1, n)\n"
                    "        out = torch.zeros_like(g2)\n"
                    "        for r in range(g2.shape[0]):\n"
                    "            out[r, i2[r]] = g2[r]\n"
                    "        return out.reshape(grad_values.shape)\n"))),
    Mistake("AbsInPlace", "one int16 sign from two int16 comparisons",
            "saves one tensor, int16 (2 bytes per element)",
            abs_answer((COMPARISONS[0], "sign = (x > 0).to(torch.int16) - (x < 0).to(torch.int16)"))),
]

UNUSUAL = [
    Unusual("AbsInPlace", "copysign_(1.0) as the write, grad_output itself where all are +1",
            abs_answer(COMPARISONS, ("x.abs_()", "x.copysign_(1.0)"),
                       ("        return grad_output * sign",
                        "        if bool((sign == 1).all()):\n"
                        "            return grad_output\n"
                        "        return grad_output * sign"))),
    Unusual("AbsInPlace", "the sign by torch.gt(x, 0, out=int8) less x < 0",
            abs_answer(("sign = torch.sign(x).to(torch.int8)",
                        "sign = torch.empty(x.shape, dtype=torch.int8, device=x.device)\n"
                        "        torch.gt(x, 0, out=sign)\n"
                        "        sign.sub_((x < 0).to(torch.int8))"))),
    Unusual("SplitHalves", "a missing half as an expanded 0-d zero, then cat", _split(
        backward=edit(_SPLIT_BACKWARD, (
            "        known = a if a is not None else b\n"
            "        h = known.shape[-1]\n"
            "        g = known.new_zeros(*known.shape[:-1], 2 * h)\n"
            "        if a is not None:\n"
            "            g[..., :h] = a\n"
            "        if b is not None:\n"
            "            g[..., h:] = b\n"
            "        return g\n",
            "        zero = (a if a is not None else b).new_zeros(())\n"
            "        a = zero.expand_as(b) if a is None else a\n"
            "        b = zero.expand_as(a) if b is None else b\n"
            "        return torch.cat([a, b], -1)\n")))),
    Unusual("ReLUInPlace", "F.relu(x, inplace=True), backward by y.sign()", _relu(
        edit(_RELU_FORWARD, ("x.clamp_(min=0)", "torch.nn.functional.relu(x, inplace=True)")),
        edit(_RELU_BACKWARD, ("grad_output * (y > 0)", "grad_output * y.sign()")))),
]
