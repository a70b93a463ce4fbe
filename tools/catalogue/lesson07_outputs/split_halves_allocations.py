"""Lesson 07's SplitHalves: a backward that allocates more than the gradient it returns, with one
half or both, named only as far as its ops prove (zeros for the missing half, two zero-padded
halves plus their sum; otherwise the bytes and the ops); and a shape kept in a module global."""

from .. import Mistake, edit
from .split_halves import _SPLIT_BACKWARD, _SPLIT_FORWARD, _split


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
    # as the lesson's SinCosLazy builds its gradient: right, and one allocation with one half,
    # but with both, each half padded to x's width and the two summed: three tensors
    Mistake("SplitHalves", "each half padded to full width, the two added",
            "two zero-padded halves plus their sum", _split(backward='''
    @staticmethod
    def backward(ctx, a, b):
        grad_x = None
        if a is not None:
            grad_x = F.pad(a, (0, a.shape[-1]))
        if b is not None:
            term = F.pad(b, (b.shape[-1], 0))
            grad_x = term if grad_x is None else grad_x + term
        return grad_x
'''), named=True),
    # one half alone padded (one tensor); both copied contiguous before the cat (three)
    Mistake("SplitHalves", "both halves made contiguous before the cat",
            "one tensor of x's shape is the least", _split(backward='''
    @staticmethod
    def backward(ctx, a, b):
        if a is None and b is None:
            return None
        if b is None:
            return F.pad(a, (0, a.shape[-1]))
        if a is None:
            return F.pad(b, (b.shape[-1], 0))
        return torch.cat([a.contiguous(), b.contiguous()], dim=-1)
''')),
    # x's shape in a module global: the domain's two calls give x shapes (3, 6) and (2, 4)
    Mistake("SplitHalves", "x's shape kept in a module global",
            "SplitHalves is right for each call alone", "SHAPE = [None]\n" + _split(
                edit(_SPLIT_FORWARD, ("        h = ", "        SHAPE[0] = x.shape\n        h = ")),
                edit(_SPLIT_BACKWARD, ("known.new_zeros(*known.shape[:-1], 2 * h)",
                                       "known.new_zeros(SHAPE[0])")))),
    # a TypeError of the learner's own, with both gradients present: no None is blamed
    Mistake("SplitHalves", "torch.cat given the halves without a list",
            "SplitHalves.backward raised TypeError: cat()", _split(backward='''
    @staticmethod
    def backward(ctx, a, b):
        if a is None or b is None:
            known = a if a is not None else b
            g = known.new_zeros(*known.shape[:-1], 2 * known.shape[-1])
            h = known.shape[-1]
            g[..., :h] = a if a is not None else 0
            g[..., h:] = b if b is not None else 0
            return g
        return torch.cat(a, b, -1)
''')),
]
