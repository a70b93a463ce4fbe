"""Lesson 09: answers with known verdicts from the fifth fresh review: a Normalize whose test in
backward calls rows just above eps below it (isclose, a safety margin, a float32 copy of the
divisor), a BroadcastMul reduction with sum(()) or size-1 dims found from the left, a CumMax
that turns a negative dim into -1."""

from . import Mistake
from .lesson09 import _function, _mul
from .lesson09_transfer import _cummax

# saves the divisor max(norm, eps), then tells the cases apart by comparing it with eps
_NORMALIZE_BY_DIVISOR = _function("Normalize", '''
    def forward(ctx, x, eps):
        divisor = torch.linalg.vector_norm(x, dim=-1, keepdim=True).clamp_min(eps)
        y = x / divisor
        ctx.save_for_backward(y, divisor)
        ctx.eps = eps
        return y
''', '''
    def backward(ctx, grad_output):
        y, divisor = ctx.saved_tensors
        above = TEST
        radial = (y * grad_output).sum(-1, keepdim=True)
        return (grad_output - y * radial * above) / divisor, None
''')

UNUSUAL = []

MISTAKES = [
    Mistake("Normalize", f"above eps told from the divisor with {name} ({test})",
            "Normalize's gradient on a row just above eps is grad_output / eps",
            _NORMALIZE_BY_DIVISOR.replace("TEST", test))
    for name, test in (
        ("isclose", "~torch.isclose(divisor, torch.full_like(divisor, ctx.eps))"),
        ("a safety margin", "divisor > ctx.eps * (1 + 1e-6)"),
        ("a float32 copy", "divisor.float() > ctx.eps"))
] + [
    Mistake("Normalize", "above eps told from the divisor with divisor >= eps (always true)",
            "Normalize's gradient is wrong on rows whose norm is below eps",
            _NORMALIZE_BY_DIVISOR.replace("TEST", "divisor >= ctx.eps")),
    Mistake("BroadcastMul", "leading dims summed with t.sum(()) when there are none",
            "called sum with an empty tuple of dims", _mul('''
        def reduce(t, shape):
            t = t.sum(tuple(range(t.dim() - len(shape))))
            keep = tuple(i for i, s in enumerate(shape) if s == 1)
            return t.sum(keep, keepdim=True) if keep else t
        grad_a = reduce(grad_output * b, a.shape) if ctx.needs_input_grad[0] else None
        grad_b = reduce(grad_output * a, b.shape) if ctx.needs_input_grad[1] else None
        return grad_a, grad_b
''')),
    Mistake("BroadcastMul", "size-1 dims summed left-aligned, before the leading dims",
            "lining the shapes up from the left", _mul('''
        def reduce(t, shape):
            for i, s in enumerate(shape):
                if s == 1:
                    t = t.sum(i, keepdim=True)
            while t.dim() > len(shape):
                t = t.sum(0)
            return t
        grad_a = reduce(grad_output * b, a.shape) if ctx.needs_input_grad[0] else None
        grad_b = reduce(grad_output * a, b.shape) if ctx.needs_input_grad[1] else None
        return grad_a, grad_b
''')),
    Mistake("CumMax", "a negative dim turned into -1 in backward",
            "right for dim=0 but wrong for dim=-2", _cummax(
                "        dim = ctx.dim if ctx.dim >= 0 else -1\n"
                "        return torch.zeros_like(grad_output).scatter_add(dim, indices, "
                "grad_output), None\n")),
]
