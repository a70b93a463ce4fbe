"""Lesson 09's Normalize: backwards that tell a row above eps from one below by another test than
the norm against eps (the length of y, the divisor with isclose, a safety margin or a float32
copy, the norm rebuilt as |y| x divisor, the norm of x.float(), eps as a float32 tensor), most
of them wrong only on rows within a few ulps of eps."""

from .. import Mistake
from .answers import _function


_NORMALIZE_BY_LENGTH = _function("Normalize", '''
    def forward(ctx, x, eps):
        divisor = torch.linalg.vector_norm(x, dim=-1, keepdim=True).clamp_min(eps)
        y = x / divisor
        ctx.save_for_backward(y, divisor)
        return y
''', '''
    def backward(ctx, grad_output):
        y, divisor = ctx.saved_tensors
        length = y.norm(dim=-1, keepdim=True)
        above = TEST
        radial = (y * grad_output).sum(-1, keepdim=True)
        return (grad_output - y * radial * above) / divisor, None
''')


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


MISTAKES = [
    *(Mistake("Normalize", f"above eps told from the length of y ({test})",
              "does backward decide the case from |y|?",
              _NORMALIZE_BY_LENGTH.replace("TEST", test))
      for test in ("length > 0.99", "torch.isclose(length, torch.ones_like(length))",
                   "length > 0.5")),
    # |y| within a tolerance of 1: only the row one ulp below eps is misread (review 09)
    Mistake("Normalize", "above eps told from the length of y (length > 1 - 1e-6)",
            "backward decided the case from y", _NORMALIZE_BY_LENGTH.replace("TEST",
                                                                       "length > 1 - 1e-6")),
    Mistake("Normalize", "norm for the test computed on x.float()",
            "Normalize's gradient on a row one ulp below eps is that of a row above eps",
            _function("Normalize", '''
    def forward(ctx, x, eps):
        y = F.normalize(x, dim=-1, eps=eps)
        ctx.save_for_backward(y, x.float().norm(dim=-1, keepdim=True))
        ctx.eps = eps
        return y
''', '''
    def backward(ctx, grad_output):
        y, norm = ctx.saved_tensors
        radial = (y * grad_output).sum(-1, keepdim=True)
        above = norm >= ctx.eps
        return (grad_output - y * radial * above) / norm.clamp_min(ctx.eps).to(y.dtype), None
''')),
    *(Mistake("Normalize", f"above eps told from the divisor with {name} ({test})",
              "Normalize's gradient on a row just above eps is grad_output / eps",
              _NORMALIZE_BY_DIVISOR.replace("TEST", test))
      for name, test in (
          ("isclose", "~torch.isclose(divisor, torch.full_like(divisor, ctx.eps))"),
          ("a safety margin", "divisor > ctx.eps * (1 + 1e-6)"),
          ("a float32 copy", "divisor.float() > ctx.eps"))),
    Mistake("Normalize", "above eps told from the divisor with divisor >= eps (always true)",
            "Normalize's gradient is wrong on rows whose norm is below eps",
            _NORMALIZE_BY_DIVISOR.replace("TEST", "divisor >= ctx.eps")),
    Mistake("Normalize", "above eps told from the norm rebuilt as |y| x divisor",
            "backward rebuilt the norm as |y| x divisor",
            _NORMALIZE_BY_DIVISOR.replace(
                "TEST", "torch.linalg.vector_norm(y, dim=-1, keepdim=True) * divisor >= ctx.eps")),
    Mistake("Normalize", "eps as torch.tensor(eps) in forward and backward",
            "eps became a float32 tensor", _NORMALIZE_TENSOR_EPS),
]
