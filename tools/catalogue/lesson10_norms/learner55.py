"""Lesson 10, learner 55: LayerNormFunction computing the bias gradient whether or not bias is
given (a gradient returned for bias=None)."""

from .. import Mistake, edit
from .layer_norm_mistakes import WIDE_LAYER_NORM

MISTAKES = [
    Mistake("LayerNormFunction", "bias gradient computed even for bias=None",
            "backward returned a gradient for bias, which is not a tensor",
            edit(WIDE_LAYER_NORM, ("        if ctx.needs_input_grad[2]:\n            gb =",
                                   "        if True:\n            gb ="))),
]
UNUSUAL = []
