"""Lesson 07: in-place Functions that write through a boolean mask. x[mask] copies the selected
entries and its kernel runs nonzero for their int64 positions (a dispatch mode never sees it),
and masked_select makes int64 positions for every entry of its mask: check_forward_memory
counts both from the mask, on a mixed-sign, an all-negative and an all-positive x. x[mask] = 0
(masked_fill_'s path inside index_put_) stays unusual."""

from .. import Mistake
from .abs_in_place import COMPARISONS, abs_answer
from .relu_in_place import _RELU_FORWARD, _relu

_MASK = "boolean mask"

MISTAKES = [
    Mistake("AbsInPlace", "neg = x < 0; x[neg] = -x[neg]", _MASK,
            abs_answer(COMPARISONS, ("x.abs_()", "neg = x < 0\n        x[neg] = -x[neg]"))),
    Mistake("AbsInPlace", "x[x < 0] *= -1", _MASK,
            abs_answer(COMPARISONS, ("x.abs_()", "x[x < 0] *= -1"))),
    # masked_select's kernel turns its mask into int64 positions, 8 bytes per entry of x
    Mistake("AbsInPlace", "masked_scatter_ of the negated masked_select", "with masked_select",
            abs_answer(COMPARISONS, ("x.abs_()", "neg = x < 0\n"
                                     "        x.masked_scatter_(neg, -x.masked_select(neg))"))),
    Mistake("ReLUInPlace", "x[neg] = torch.zeros_like(x[neg])", _MASK,
            _relu(_RELU_FORWARD.replace("x.clamp_(min=0)", "neg = x < 0\n"
                                        "        x[neg] = torch.zeros_like(x[neg])"))),
]
UNUSUAL: list = []
