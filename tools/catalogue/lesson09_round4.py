"""Lesson 09: answers with known verdicts from the fourth fresh review: a backward that writes
into the saved input (its gradient right on the x it was given), a Normalize that tells the two
cases apart from the length of y, a buffer made without a dtype, an exclusive scan that wraps."""

from . import Mistake
from .lesson09 import _cumsum, _function, _prod, _select
from .lesson09_transfer import _cummax

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
    Mistake("IndexSelect", "buffer from torch.zeros(ctx.shape), float32 whatever x is",
            "IndexSelect's backward added values into a tensor of another dtype", _select(
                "        return torch.zeros(ctx.shape).index_add(0, index, grad_output), None\n")),
    Mistake("CumMax", "buffer from torch.zeros(grad_output.shape), float32 whatever x is",
            "CumMax's backward added values into a tensor of another dtype", _cummax(
                "        return torch.zeros(grad_output.shape).scatter_add(ctx.dim, indices, "
                "grad_output), None\n")),
    Mistake("Cumsum", "total less an exclusive scan shifted with roll (wraps round)",
            "Cumsum's gradient is right everywhere but at the first entry along dim", _cumsum('''
        exclusive = grad_output.cumsum(dim).roll(1, dim)
        return grad_output.sum(dim, keepdim=True) - exclusive, None
''')),
]
