"""Lesson 09, review 55c: answers that a contract clause now grades as stated. ProdOverDim's
truth is the exact product of the others, so y / x on slices with no zero (PyTorch's own
prod_backward, and the count-the-zeros answer once catalogued as unusual) is off beside a
subnormal entry: 1.0 for 1.3 on [5e-324, 1.3]. Normalize's float32 "at eps" is eps as float32
holds it, so `divisor > eps` (two answers once catalogued as unusual) drops the projection on
[0.1, 0] with eps=0.1. BroadcastMul returns each gradient in its input's dtype, as IndexSelect
does."""

from .. import Mistake
from .answers import _function, _mul, _normalize, _prod
from .prod_over_dim import PROD_03
from .review53 import _COUNT_ZEROS

MISTAKES = [
    Mistake("ProdOverDim", "PyTorch 0.3's Prod (torch/autograd/_functions/reduce.py, ported to "
            "torch 2): divide when no slice holds a zero, exclusive cumprods otherwise "
            "(catalogued as unusual before review 55c)",
            "divides the product by the entry (y / x)", PROD_03, named=True),
    Mistake("ProdOverDim", "y / x on slices with no zero (zeros counted exactly)",
            "divides the product by the entry (y / x)",
            _prod(_COUNT_ZEROS.replace("TEST", "x == 0")), named=True),
    Mistake("ProdOverDim", "count the zeros, divide only where safe",
            "divides the product by the entry (y / x)", _prod('''
        zeros = (x == 0).sum(dim, keepdim=True)
        safe = torch.where(x == 0, torch.ones_like(x), x)
        product_of_nonzeros = safe.prod(dim, keepdim=True)
        others = torch.where(x == 0, product_of_nonzeros, product_of_nonzeros / safe)
        local = torch.where(zeros == 0, others,
                            torch.where((zeros == 1) & (x == 0), others, torch.zeros_like(x)))
        g = grad_output.unsqueeze(dim) if x.dim() else grad_output
        return g * local, None
'''), named=True),
    # catalogued as unusual before review 55c: the float32 row at eps as float32 holds it
    Mistake("Normalize", "saves the clamped norm; the branch from the output's length",
            "equals eps as float32 holds it for a row below eps",
            _normalize('''
        eps = ctx.eps
        radial = (y * grad_output).sum(-1, keepdim=True)
        projected = torch.where(norm > eps, grad_output - y * radial, grad_output)
        return projected / norm, None
''', forward='''
    def forward(ctx, x, eps):
        norm = torch.linalg.vector_norm(x, dim=-1, keepdim=True).clamp_min(eps)
        y = x / norm
        ctx.save_for_backward(y, norm)
        ctx.eps = eps
        return y
'''), named=True),
    Mistake("Normalize", "saves the clamped divisor; above eps told by divisor > eps",
            "equals eps as float32 holds it for a row below eps",
            _function("Normalize", '''
    def forward(ctx, x, eps):
        divisor = x.norm(dim=-1, keepdim=True).clamp_min(eps)
        y = x / divisor
        ctx.save_for_backward(y, divisor)
        ctx.eps = eps
        return y
''', '''
    def backward(ctx, grad_output):
        y, divisor = ctx.saved_tensors
        above = divisor > ctx.eps
        radial = torch.where(above, y * (y * grad_output).sum(-1, keepdim=True), 0)
        return (grad_output - radial) / divisor, None
'''), named=True),
    Mistake("BroadcastMul", "reduced in float64 and returned in float64 for float32 inputs",
            "returned grad_a in torch.float64 for a in torch.float32", _mul('''
        grad_a = grad_b = None
        if ctx.needs_input_grad[0]:
            grad_a = (grad_output.double() * b.double()).sum_to_size(a.shape)
        if ctx.needs_input_grad[1]:
            grad_b = (grad_output.double() * a.double()).sum_to_size(b.shape)
        return grad_a, grad_b
'''), named=True),
]

UNUSUAL = []
