"""Lesson 09's ProdOverDim by counting each slice's zeros: correct where only an exact 0 counts
as a zero (the product of the others then taken by division where a slice has no zero, as
torch.prod(x, dim)'s own backward does where x holds no zero at all, or through logs), wrong where the zero test has a tolerance
(a tiny entry then counts as a zero: x.abs() < 1e-12, torch.finfo's eps or tiny, isclose)."""

from .. import Mistake, Unusual
from .answers import _prod
from .prod_over_dim import PROD_03

_COUNT_ZEROS = '''
        zero = TEST
        count = zero.sum(dim, keepdim=True)
        safe = torch.where(zero, torch.ones_like(x), x)
        p = safe.prod(dim, keepdim=True)
        others = torch.where(count == 0, p / safe,
                             torch.where((count == 1) & zero, p, torch.zeros_like(x)))
        return grad_output.unsqueeze(dim) * others, None
'''

UNUSUAL = [
    # Mistakes while the grader tried subnormal entries, where y / x loses the product of the
    # others (1.0 for 1.3 on [5e-324, 1.3]); no model meets those, and torch.prod's own
    # backward divides there too
    Unusual("ProdOverDim", "PyTorch 0.3's Prod (torch/autograd/_functions/reduce.py, ported to "
            "torch 2): divide when no slice holds a zero, exclusive cumprods otherwise "
            "(catalogued as unusual before review 55c)", PROD_03),
    Unusual("ProdOverDim", "y / x on slices with no zero (zeros counted exactly)",
            _prod(_COUNT_ZEROS.replace("TEST", "x == 0"))),
    Unusual("ProdOverDim", "count the zeros, divide only where safe", _prod('''
        zeros = (x == 0).sum(dim, keepdim=True)
        safe = torch.where(x == 0, torch.ones_like(x), x)
        product_of_nonzeros = safe.prod(dim, keepdim=True)
        others = torch.where(x == 0, product_of_nonzeros, product_of_nonzeros / safe)
        local = torch.where(zeros == 0, others,
                            torch.where((zeros == 1) & (x == 0), others, torch.zeros_like(x)))
        g = grad_output.unsqueeze(dim) if x.dim() else grad_output
        return g * local, None
''')),
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
]

MISTAKES = [
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
    Mistake("ProdOverDim", "zeros found as entries below torch.finfo(x.dtype).tiny (subnormals)",
            "treats a tiny entry as a zero",
            _prod(_COUNT_ZEROS.replace("TEST", "x.abs() < torch.finfo(x.dtype).tiny")),
            named=True),
    Mistake("ProdOverDim", "a subnormal guard for float32 only (x == 0 in float64)",
            "treats a tiny entry as a zero",
            _prod(_COUNT_ZEROS.replace("TEST", "(x.abs() < torch.finfo(x.dtype).tiny) "
                                               "if x.dtype == torch.float32 else (x == 0)")),
            named=True),
]
