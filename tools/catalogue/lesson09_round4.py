"""Lesson 09: answers with known verdicts from the fourth fresh review: a backward that writes
into the saved input (its gradient right on the x it was given), and a Normalize that tells
the two cases apart from the length of y."""

from . import Mistake
from .lesson09 import _function, _prod

# the zeros counted, then overwritten with ones in the saved x: the gradient is right on the
# x forward was given, and that x is changed
PROD_ZEROS_OVERWRITTEN = _prod('''
        zero = x == 0
        nonzero = (~zero).sum(dim, keepdim=True)
        x[zero] = 1.0
        p = x.prod(dim, keepdim=True)
        n = x.shape[dim]
        others = torch.where(zero, p * (nonzero == n - 1), (p / x) * (nonzero == n))
        return grad_output.unsqueeze(dim) * others, None
''')

# the saved x reused as the zero buffer of the scatter-add
CUMMAX_BUFFER_IS_X = _function("CumMax", '''
    def forward(ctx, x, dim):
        values, indices = torch.cummax(x, dim)
        ctx.save_for_backward(x, indices)
        ctx.dim = dim
        return values
''', '''
    def backward(ctx, grad_output):
        x, indices = ctx.saved_tensors
        return x.zero_().scatter_add_(ctx.dim, indices, grad_output), None
''')

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

UNUSUAL = []

MISTAKES = [
    Mistake("ProdOverDim", "zeros overwritten with ones in the saved x (x[x == 0] = 1)",
            "ProdOverDim.backward modified its input x in place", PROD_ZEROS_OVERWRITTEN),
    Mistake("CumMax", "the saved x zeroed and used as the scatter-add buffer",
            "CumMax.backward modified its input x in place", CUMMAX_BUFFER_IS_X),
    *(Mistake("Normalize", f"above eps told from the length of y ({test})",
              "does backward decide the case from |y|?",
              _NORMALIZE_BY_LENGTH.replace("TEST", test))
      for test in ("length > 0.99", "torch.isclose(length, torch.ones_like(length))",
                   "length > 0.5")),
]
