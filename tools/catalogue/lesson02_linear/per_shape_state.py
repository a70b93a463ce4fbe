"""Lesson 02: the answers of review 55c, state kept in a global between calls. An output
written into a buffer kept per shape (``torch.matmul(..., out=_BUF[key])``) passed both
checks: with a bias, ``y + bias`` is fresh, and the per-call check's two calls differ in
leading shape. It is named now by two calls with bias=None on inputs of the same shapes in
one graph, in MyLinearFunction and Bilinear. A weight.T cached under id(weight) (told only
'output is wrong') and a mask written into a global buffer (autograd's own in-place error) are
named too."""

from .. import Mistake, edit
from .answers import FLAT, FUSED_FORWARD, FUSED_READ, FUSED_RETURN, GUARDED, _RETURN, _fused, _linear
from .bilinear import GW, GX1, GX2, _bilinear_with

_LINEAR_BIAS = ("        grad_bias = g2.sum(0) if ctx.has_bias and ctx.needs_input_grad[2] "
                "else None\n")
_LINEAR = _linear(FLAT + GUARDED + _LINEAR_BIAS + _RETURN)
_OUT_BUFFER = ("_BUF = {}\n\ndef _buffer(shape, like):\n"
               "    key = (tuple(shape), like.dtype, like.device)\n"
               "    if key not in _BUF:\n"
               "        _BUF[key] = torch.empty(shape, dtype=like.dtype, device=like.device)\n"
               "    return _BUF[key]\n")

MISTAKES = [
    Mistake("MyLinearFunction", "output written into a global buffer kept per shape",
            "keeps state in a global: one call's output is a buffer another call reuses",
            _OUT_BUFFER + edit(_LINEAR, ("y = x @ weight.T",
                                         "y = torch.matmul(x, weight.T, out=_buffer("
                                         "(*x.shape[:-1], weight.shape[0]), x))")), named=True),
    Mistake("Bilinear", "output written into a global buffer kept per shape",
            "keeps state in a global: one call's output is a buffer another call reuses",
            _OUT_BUFFER + edit(_bilinear_with(GX1, GX2, GW),
                               ("y = torch.einsum('...i,oij,...j->...o', x1, weight, x2)",
                                "y = _buffer((*x1.shape[:-1], weight.shape[0]), x1)\n"
                                "        y.copy_(torch.einsum('...i,oij,...j->...o', x1, "
                                "weight, x2))")), named=True),
    Mistake("MyLinearFunction", "weight.T cached in a global under id(weight)",
            "keeps state in a global: a stale cache",
            "_WT = {}\n" + edit(_LINEAR, ("y = x @ weight.T",
                                          "y = x @ _WT.setdefault(id(weight), "
                                          "weight.T.contiguous())")), named=True),
    Mistake("FusedLinearReLU", "mask written into a global buffer kept per shape",
            "keeps state in a global: one call's saved tensor is a buffer another call reuses",
            "_MASKS = {}\n" + _fused(FUSED_READ + FUSED_RETURN, edit(
                FUSED_FORWARD, ("mask = z > 0", "mask = torch.gt(z, 0, out=_MASKS.setdefault("
                                "(z.shape, z.device), torch.empty(z.shape, dtype=torch.bool, "
                                "device=z.device)))"))), named=True),
]

UNUSUAL = []
