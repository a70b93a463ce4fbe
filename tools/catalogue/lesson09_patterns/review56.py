"""Lesson 09, review 56: Normalize's float32 "at eps" is now tried at eps that float32 rounds
down (0.7, 1e-12) as well as up (0.1), so a backward that compares the float32 norm with the
Python float eps in float64 fails (it passed when only eps = 0.1 was tried). ProdOverDim's
gradient is "the product of the others, up to rounding": the route through logs, with zeros
counted, is accepted (292 ulps in float64, far inside the graded tolerance). (The review's
CumMax saving a view of its indices is catalogued already, in cummax.py.)"""

from .. import Mistake, Unusual, edit
from .answers import _PROJECTION, _normalize, _prod

MISTAKES = [
    Mistake("Normalize", "float32 norm compared with eps in float64 (norm.double() >= eps)",
            "compares a float32 row's norm with eps in float64",
            _normalize(edit(_PROJECTION, ("above = norm >= ctx.eps",
                                          "above = norm.double() >= ctx.eps"))), named=True),
    Mistake("Normalize", "the divisor chosen in float64 too (where(norm.double() >= eps, ...))",
            "compares a float32 row's norm with eps in float64", _normalize('''
        above = norm.double() >= ctx.eps
        eps = torch.tensor(ctx.eps, dtype=torch.float64)
        div = torch.where(above, norm.double(), eps).to(grad_output.dtype)
        return (grad_output - y * (y * grad_output).sum(-1, keepdim=True) * above) / div, None
''', forward='''
    def forward(ctx, x, eps):
        norm = torch.linalg.vector_norm(x, dim=-1, keepdim=True)
        eps64 = torch.tensor(eps, dtype=torch.float64)
        div = torch.where(norm.double() >= eps, norm.double(), eps64).to(x.dtype)
        y = x / div
        ctx.save_for_backward(y, norm)
        ctx.eps = eps
        return y
''')),
]

UNUSUAL = [
    Unusual("ProdOverDim", "the others through logs, exp(sum log|x| - log|x_c|), zeros counted",
            _prod('''
        z = x == 0
        nz = torch.where(z, torch.ones_like(x), x)
        logs = nz.abs().log()
        sign = torch.where(nz < 0, -1.0, 1.0).to(x.dtype)
        total_log = logs.sum(dim, keepdim=True)
        others_nz = sign.prod(dim, keepdim=True) * sign * torch.exp(total_log - logs)
        count = z.sum(dim, keepdim=True)
        others = torch.where(count == 0, others_nz,
                             torch.where((count == 1) & z, others_nz, torch.zeros_like(x)))
        g = grad_output.unsqueeze(dim) if x.dim() else grad_output
        return g * others, None
''')),
    Unusual("Normalize", "norm saved without keepdim, the two cases picked by torch.where",
            _normalize('''
        n = norm.unsqueeze(-1)
        projected = (grad_output - y * (y * grad_output).sum(-1, keepdim=True)) / n
        return torch.where(n >= ctx.eps, projected, grad_output / ctx.eps), None
''', forward='''
    def forward(ctx, x, eps):
        norm = x.norm(dim=-1)
        y = x / norm.clamp_min(eps).unsqueeze(-1)
        ctx.save_for_backward(y, norm)
        ctx.eps = eps
        return y
''')),
]
