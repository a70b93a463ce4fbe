"""Lesson 09: answers with known verdicts from the seventh fresh review: a Cumsum written as the
total minus a running sum (cancels where grad_output decays along dim), and a Normalize whose
eps is torch.tensor(eps), a float32 tensor, in forward and backward."""

from . import Mistake
from .lesson09 import _function

_CUMSUM_FORWARD = '''
    def forward(ctx, x, dim):
        ctx.dim = dim
        return torch.cumsum(x, dim)
'''

_NORMALIZE_TENSOR_EPS = _function("Normalize", '''
    def forward(ctx, x, eps):
        norm = torch.linalg.vector_norm(x, dim=-1, keepdim=True)
        y = x / torch.maximum(norm, torch.tensor(eps))
        ctx.save_for_backward(y, norm)
        ctx.eps = eps
        return y
''', '''
    def backward(ctx, grad_output):
        y, norm = ctx.saved_tensors
        eps = torch.tensor(ctx.eps)
        radial = (y * grad_output).sum(-1, keepdim=True)
        return (grad_output - y * radial * (norm >= eps)) / torch.maximum(norm, eps), None
''')

UNUSUAL = []

MISTAKES = [
    Mistake("Cumsum", f"total minus a running sum ({body})",
            "Cumsum's gradient written as the total minus a running sum",
            _function("Cumsum", _CUMSUM_FORWARD, f'''
    def backward(ctx, grad_output):
        dim = ctx.dim
        return {body}, None
'''))
    for body in ("grad_output.sum(dim, keepdim=True) - (grad_output.cumsum(dim) - grad_output)",)
] + [
    Mistake("Cumsum", "reversed scan in float32",
            "Cumsum's gradient is off by more than rounding where grad_output decays",
            _function("Cumsum", _CUMSUM_FORWARD, '''
    def backward(ctx, grad_output):
        dim = ctx.dim
        g = grad_output.float()
        return g.flip(dim).cumsum(dim).flip(dim).to(grad_output.dtype), None
''')),
    Mistake("Normalize", "eps as torch.tensor(eps) in forward and backward",
            "eps became a float32 tensor", _NORMALIZE_TENSOR_EPS),
]
