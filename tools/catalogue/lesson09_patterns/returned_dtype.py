"""Lesson 09: gradients returned in a wider dtype than their input's (float64 for a float32
input), which the engine casts back silently; the Function contract's rule 2 has each gradient
in its input's dtype, so only the dtype backward itself returned shows it, and the hint cites
that rule. Named by the generic check every exercise runs (``autograder.returned_dtypes``),
which replaced lesson 09's own: the verdicts are the same, the hints its wording."""

from .. import Mistake, edit
from .answers import (_INDEX_ADD, _PROD_EXACT, _PROJECTION, _REVERSED, _SCATTER_ADD, _cummax,
                      _cumsum, _mul, _normalize, _prod, _select)

MISTAKES = [
    Mistake("BroadcastMul", "reduced in float64 and returned in float64 for float32 inputs",
            "returned grad_a in float64 for a float32 a: autograd casts it back without a word",
            _mul('''
        grad_a = grad_b = None
        if ctx.needs_input_grad[0]:
            grad_a = (grad_output.double() * b.double()).sum_to_size(a.shape)
        if ctx.needs_input_grad[1]:
            grad_b = (grad_output.double() * a.double()).sum_to_size(b.shape)
        return grad_a, grad_b
'''), named=True),
    Mistake("ProdOverDim", "exclusive products taken in float64, returned in float64",
            "returned grad_x in float64 for a float32 x: autograd casts it back without a word",
            _prod(edit(_PROD_EXACT, ("        ones = torch", "        x = x.double()\n"
                                     "        ones = torch"),
                       ("grad_output.unsqueeze(dim) *", "grad_output.double().unsqueeze(dim) *")))),
    Mistake("Cumsum", "the reversed scan in float64, returned in float64",
            "returned grad_x in float64 for a float32 x: autograd casts it back without a word, "
            "after the work (and the memory) of float64",
            _cumsum(edit(_REVERSED, ("grad_output.flip", "grad_output.double().flip")))),
    Mistake("IndexSelect", "accumulated in float64 and returned in float64 for a float32 x",
            "returned grad_x in float64 for a float32 x: autograd casts it back without a word",
            _select(edit(_INDEX_ADD, ("grad_output.new_zeros(ctx.shape)",
                                      "grad_output.new_zeros(ctx.shape, dtype=torch.float64)"),
                         ("index, grad_output)", "index, grad_output.double())"))),
            named=True),
    Mistake("Normalize", "the projection taken in float64, returned in float64",
            "returned grad_x in float64 for a float32 x: autograd casts it back without a word",
            _normalize(edit(_PROJECTION, ("(y * grad_output)", "(y.double() * grad_output)"),
                            ("(grad_output - y", "(grad_output.double() - y")))),
    Mistake("CumMax", "scatter_add into a float64 buffer, returned in float64",
            "returned grad_x in float64 for a float32 x: autograd casts it back without a word",
            _cummax(edit(_SCATTER_ADD, ("torch.zeros_like(grad_output).scatter_add(ctx.dim, "
                                        "indices, grad_output)",
                                        "torch.zeros_like(grad_output.double()).scatter_add("
                                        "ctx.dim, indices, grad_output.double())")))),
]

UNUSUAL = []
