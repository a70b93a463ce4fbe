"""Lesson 09, review 53: a Normalize whose norm is the textbook (x * x).sum(-1).sqrt(), which
rounds a few ulps away from F.normalize's x.norm(dim=-1) and so puts a row within an ulp of eps
on the other side of it; ProdOverDim backwards that find zeros with a tolerance, so that a tiny
entry counts as a zero. (The review's unusual answers, a hand-written unbroadcast, a zero count,
a one-hot product and a triangular matrix of ones, are catalogued already.)"""

from .. import Mistake
from .answers import _PROJECTION, _normalize, _prod

_COUNT_ZEROS = '''
        zero = TEST
        count = zero.sum(dim, keepdim=True)
        safe = torch.where(zero, torch.ones_like(x), x)
        p = safe.prod(dim, keepdim=True)
        others = torch.where(count == 0, p / safe,
                             torch.where((count == 1) & zero, p, torch.zeros_like(x)))
        return grad_output.unsqueeze(dim) * others, None
'''

UNUSUAL = []

MISTAKES = [
    Mistake("Normalize", "norm as (x * x).sum(-1).sqrt()",
            "your norm is not F.normalize's", _normalize(_PROJECTION, forward='''
    def forward(ctx, x, eps):
        norm = (x * x).sum(-1, keepdim=True).sqrt()
        y = x / norm.clamp_min(eps)
        ctx.save_for_backward(y, norm)
        ctx.eps = eps
        return y
'''), named=True),
    Mistake("ProdOverDim", "zeros counted with a tolerance (x.abs() < 1e-12)",
            "treats a tiny entry as a zero",
            _prod(_COUNT_ZEROS.replace("TEST", "x.abs() < 1e-12")), named=True),
    Mistake("ProdOverDim", "zeros found with torch.finfo(x.dtype).eps as the tolerance",
            "treats a tiny entry as a zero",
            _prod(_COUNT_ZEROS.replace("TEST", "x.abs() < torch.finfo(x.dtype).eps")),
            named=True),
    Mistake("ProdOverDim", "zeros found with torch.isclose against 0 (atol 1e-8)",
            "treats a tiny entry as a zero",
            _prod(_COUNT_ZEROS.replace("TEST", "torch.isclose(x, torch.zeros_like(x))")),
            named=True),
]
