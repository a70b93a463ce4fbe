"""Lesson 07's SplitHalves: a backward that allocates more than the gradient it returns, named
only as far as its ops prove (zeros for the missing half; otherwise the bytes and the ops); and
a SortWithIndices gradient built in a float32 tensor, which autograd casts back to float64."""

from . import Mistake
from .lesson07 import _sort, _sort_backward, _split

UNUSUAL = []
MISTAKES = [
    Mistake("SplitHalves", "the half it has cloned into new_zeros",
            "allocated 72 bytes for a gradient of 48", _split(backward='''
    @staticmethod
    def backward(ctx, a, b):
        if a is None and b is None:
            return None
        known = a if a is not None else b
        h = known.shape[-1]
        g = known.new_zeros(*known.shape[:-1], 2 * h)
        if a is not None:
            g[..., :h] = a.clone()
        if b is not None:
            g[..., h:] = b.clone()
        return g
'''), named=True),
    Mistake("SortWithIndices", "scattered into torch.zeros (float32)",
            "every value of grad_x is exactly a float32 number", _sort(backward=_sort_backward(
                "        g = torch.zeros(grad_values.shape)\n"
                "        return g.scatter(-1, indices, grad_values.to(g.dtype))\n"))),
]
