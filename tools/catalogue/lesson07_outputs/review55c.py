"""Lesson 07: review 55c's answers. AbsInPlace written with boolean-mask indexing passed both
checks: x[mask] copies the selected entries and its kernel runs nonzero for their int64
positions (a dispatch mode never sees it), and forward's memory was measured on one mixed-sign
x. check_forward_memory now counts the positions from the mask and runs on an all-negative and
an all-positive x too; x[mask] = 0 (masked_fill_'s path inside index_put_) stays unusual."""

from .. import Mistake
from .abs_in_place import COMPARISONS, abs_answer
from .relu_in_place import _RELU_FORWARD, _relu

_MASK = "boolean mask"

MISTAKES = [
    Mistake("AbsInPlace", "neg = x < 0; x[neg] = -x[neg]", _MASK,
            abs_answer(COMPARISONS, ("x.abs_()", "neg = x < 0\n        x[neg] = -x[neg]"))),
    Mistake("AbsInPlace", "x[x < 0] *= -1", _MASK,
            abs_answer(COMPARISONS, ("x.abs_()", "x[x < 0] *= -1"))),
    Mistake("ReLUInPlace", "x[neg] = torch.zeros_like(x[neg])", _MASK,
            _relu(_RELU_FORWARD.replace("x.clamp_(min=0)", "neg = x < 0\n"
                                        "        x[neg] = torch.zeros_like(x[neg])"))),
]
UNUSUAL: list = []
