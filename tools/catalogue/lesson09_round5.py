"""Lesson 09: answers with known verdicts from the fifth fresh review: a Normalize whose test in
backward calls rows just above eps below it (isclose, a safety margin, a float32 copy of the
divisor)."""

from . import Mistake
from .lesson09 import _function

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
]
