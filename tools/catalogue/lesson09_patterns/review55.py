"""Lesson 09, review 55: answers that pass on ordinary magnitudes and break a clause at the ends
of the float range or in float32. A BroadcastMul that recovers the other factor as y / a with
its zeros guarded (0 where a * b underflows, inf where it overflows); ProdOverDim zero tests
against torch.finfo(x.dtype).tiny, which take a subnormal entry for a zero, in float64 and
float32 (one guard only for float32, so that the float32 probe is what fails it); an
IndexSelect that accumulates in float64 and returns that for a float32 x (the engine casts it
back silently, so only the returned dtype shows it). The review's unusual answers (a
hand-written reduction, a zero count, a one-hot product, a triangular matrix, a clamped divisor,
a per-position scatter_add loop) are catalogued already."""

from .. import Mistake, edit
from .answers import _INDEX_ADD, _mul, _prod, _select
from .review53 import _COUNT_ZEROS

MISTAKES = [
    Mistake("BroadcastMul", "the other factor recovered as y / a, zeros guarded with where",
            "is 0 or inf where a * b underflows or overflows", _mul('''
        y = a * b
        grad_a = grad_b = None
        if ctx.needs_input_grad[0]:
            grad_a = (grad_output * torch.where(a != 0, y / a, b)).sum_to_size(a.shape)
        if ctx.needs_input_grad[1]:
            grad_b = (grad_output * torch.where(b != 0, y / b, a)).sum_to_size(b.shape)
        return grad_a, grad_b
'''), named=True),
    Mistake("ProdOverDim", "zeros found as entries below torch.finfo(x.dtype).tiny (subnormals)",
            "treats a tiny entry as a zero",
            _prod(_COUNT_ZEROS.replace("TEST", "x.abs() < torch.finfo(x.dtype).tiny")),
            named=True),
    Mistake("ProdOverDim", "a subnormal guard for float32 only (x == 0 in float64)",
            "treats a tiny entry as a zero",
            _prod(_COUNT_ZEROS.replace("TEST", "(x.abs() < torch.finfo(x.dtype).tiny) "
                                               "if x.dtype == torch.float32 else (x == 0)")),
            named=True),
    Mistake("IndexSelect", "accumulated in float64 and returned in float64 for a float32 x",
            "returned grad_x in torch.float64 for x in torch.float32",
            _select(edit(_INDEX_ADD, ("grad_output.new_zeros(ctx.shape)",
                                      "grad_output.new_zeros(ctx.shape, dtype=torch.float64)"),
                         ("index, grad_output)", "index, grad_output.double())"))),
            named=True),
]

UNUSUAL = []
