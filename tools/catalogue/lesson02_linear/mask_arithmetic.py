"""Lesson 02: the answers of review 55. A FusedLinearReLU whose forward returns the
pre-activation times its mask passed every check: where the pre-activation overflows to -inf,
-inf * 0 is nan where torch.relu gives 0 (now checked in float64 and float32, named). A forward
that saves the float output, not a mask, is named by what it saves. And the review's three
unusual answers: tensordot and a ones-vector bias gradient, 2-D internals with addmm and
masked_fill, F.bilinear with a matmul backward. And a Bilinear grad_x2 that reads the weight
with its last two indices swapped, which einsum refuses for n1 != n2: named now from that case
by a probe at n1 == n2, not by einsum's error."""

from .. import Mistake, Unusual, edit
from .bilinear import GW, GX1, _bilinear_with
from .answers import FUSED_FORWARD, FUSED_READ, FUSED_RETURN, _fused

MISTAKES = [
    Mistake("FusedLinearReLU", "saves the float output, reads y > 0 in backward",
            "FusedLinearReLU saved a float64 output of shape",
            _fused(edit(FUSED_READ, ("x, weight, mask = ctx.saved_tensors",
                                     "x, weight, y = ctx.saved_tensors\n        mask = y > 0"))
                   + FUSED_RETURN,
                   edit(FUSED_FORWARD, ("mask = z > 0\n        ctx.save_for_backward(x, weight, mask)",
                                        "y = z.clamp(min=0)\n        ctx.save_for_backward(x, weight, y)"),
                        ("return z.clamp(min=0)", "return y"))),
            named=True),
    Mistake("Bilinear", "grad_x2 reads weight[o, j, i]: einsum raises for n1 != n2",
            "your grad_x2 reads the weight as weight[o, j, i] in place of weight[o, i, j]",
            _bilinear_with(GX1, "torch.einsum('...i,oji,...o->...j', x1, weight, grad_output)",
                           GW), named=True),
]

UNUSUAL = [
    Unusual("MyLinearFunction", "tensordot, grad_weight as (x2.T @ g2).T, grad_bias as ones @ g2, "
            "no bias flag", '''
class MyLinearFunction(torch.autograd.Function):
    """Unusual but correct: tensordot / transposed product, bias gradient as ones @ G2,
    saves only what is read, no bias flag (reads len(needs_input_grad))."""
    @staticmethod
    def forward(ctx, x, weight, bias=None):
        n = ctx.needs_input_grad
        ctx.save_for_backward(x if n[1] else None, weight if n[0] else None)
        y = torch.tensordot(x, weight, dims=([-1], [1]))
        return y if bias is None else torch.add(y, bias)
    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        n = ctx.needs_input_grad
        g2 = g.reshape(-1, g.shape[-1])
        out = [None, None, None]
        if n[0]: out[0] = torch.tensordot(g, w, dims=([-1], [0]))
        if n[1]: out[1] = (x.reshape(-1, x.shape[-1]).T @ g2).T       # (in, M)(M, out) -> transposed
        if len(n) > 2 and n[2]: out[2] = g2.new_ones(g2.shape[0]) @ g2 # a matvec, not a sum
        return tuple(out)
'''),
    Unusual("FusedLinearReLU", "2-D internals: addmm, a (rows, out) mask, masked_fill out of place",
            '''
class FusedLinearReLU(torch.autograd.Function):
    """Unusual but correct: 2-D internals, mask flattened to rows, masked_fill, addmm."""
    @staticmethod
    def forward(ctx, x, weight, bias=None):
        lead, n_in = x.shape[:-1], x.shape[-1]
        x2 = x.reshape(-1, n_in)
        z2 = torch.addmm(bias, x2, weight.T) if bias is not None else x2 @ weight.T
        on = z2 > 0                                      # (M, out) bool
        n = ctx.needs_input_grad
        ctx.save_for_backward(x2 if n[1] else None, weight if n[0] else None, on)
        ctx.lead, ctx.has_bias = tuple(lead), bias is not None
        return torch.where(on, z2, 0).reshape(*lead, weight.shape[0])
    @staticmethod
    def backward(ctx, g):
        x2, w, on = ctx.saved_tensors
        gz = g.reshape(on.shape).masked_fill(~on, 0)     # out of place
        n = ctx.needs_input_grad
        gx = gw = gb = None
        if n[0]: gx = (gz @ w).reshape(*ctx.lead, w.shape[1])
        if n[1]: gw = gz.T @ x2
        if ctx.has_bias and n[2]: gb = gz.sum(0)
        return gx, gw, gb
'''),
    Unusual("Bilinear", "F.bilinear forward, per-row matmuls backward, saves only what is read",
            '''
class Bilinear(torch.autograd.Function):
    """Unusual but correct: F.bilinear forward, matmul backward on flattened rows,
    saves only what the wanted gradients read."""
    @staticmethod
    def forward(ctx, x1, x2, weight, bias=None):
        n = ctx.needs_input_grad
        ctx.save_for_backward(x1 if (n[1] or n[2]) else None, x2 if (n[0] or n[2]) else None,
                              weight if (n[0] or n[1]) else None)
        ctx.has_bias = bias is not None
        return F.bilinear(x1, x2, weight, bias)
    @staticmethod
    def backward(ctx, g):
        x1, x2, w = ctx.saved_tensors
        n = ctx.needs_input_grad
        lead, o = g.shape[:-1], g.shape[-1]
        g2 = g.reshape(-1, o)
        res = [None] * 4
        if n[0]:  # sum_o,j g_o W_oij x2_j
            gw_ = torch.einsum("mo,oij->mij", g2, w)               # (M, n1, n2)
            res[0] = (gw_ @ x2.reshape(-1, x2.shape[-1], 1)).squeeze(-1).reshape(*lead, w.shape[1])
        if n[1]:
            gw_ = torch.einsum("mo,oij->mij", g2, w)
            res[1] = (x1.reshape(-1, 1, x1.shape[-1]) @ gw_).squeeze(-2).reshape(*lead, w.shape[2])
        if n[2]:
            a = x1.reshape(-1, x1.shape[-1]); b = x2.reshape(-1, x2.shape[-1])
            outer = (a[:, :, None] * b[:, None, :]).reshape(a.shape[0], a.shape[1] * b.shape[1])  # (M, n1*n2)
            res[2] = (g2.T @ outer).reshape(w.shape if w is not None else (o, a.shape[1], b.shape[1]))
        if ctx.has_bias and n[3]: res[3] = g2.sum(0)
        return tuple(res)
'''),
]

# correct since issue 69: infinite pre-activations and grad_output left the domain
UNUSUAL.append(Unusual("FusedLinearReLU", "forward returns z * mask: nan where z overflows to -inf",
        _fused(FUSED_READ + FUSED_RETURN,
                   edit(FUSED_FORWARD, ("return z.clamp(min=0)", "return z * mask")))))
