"""Lesson 09, review 57: BroadcastMul against a size-0 dim (a (1, 3) a beside a (0, 1) b), where
a reduction that sums only the dims where the input is smaller than the output leaves a (0, 3)
gradient the engine sums for it; the gradient in x's dtype, now a graded clause of ProdOverDim,
Cumsum, CumMax and Normalize as of BroadcastMul and IndexSelect (each answer returns float64
for a float32 x); and the review's unusual answers not catalogued yet (Cumsum as a matmul with a
triangle of ones, CumMax by index_add one slice at a time)."""

from .. import Mistake, Unusual, edit
from .answers import (_CUMMAX_FORWARD, _PROD_EXACT, _PROJECTION, _REVERSED, _SCATTER_ADD,
                      _cummax, _cumsum, _mul, _normalize, _prod)

MISTAKES = [
    Mistake("BroadcastMul", "sums only the dims where the input is smaller than the output",
            "a dim where a has size 1 and the output size 0 was not summed", _mul('''
        def reduce_to(g, shape):
            lead = g.dim() - len(shape)
            g = g.sum(tuple(range(lead))) if lead else g
            dims = tuple(i for i, (s, o) in enumerate(zip(shape, g.shape)) if s < o)
            return g.sum(dims, keepdim=True) if dims else g
        grad_a = reduce_to(grad_output * b, a.shape) if ctx.needs_input_grad[0] else None
        grad_b = reduce_to(grad_output * a, b.shape) if ctx.needs_input_grad[1] else None
        return grad_a, grad_b
'''), named=True),
    Mistake("ProdOverDim", "exclusive products taken in float64, returned in float64",
            "returned grad_x in torch.float64 for x in torch.float32",
            _prod(edit(_PROD_EXACT, ("        ones = torch", "        x = x.double()\n"
                                     "        ones = torch"),
                       ("grad_output.unsqueeze(dim) *", "grad_output.double().unsqueeze(dim) *")))),
    Mistake("Cumsum", "the reversed scan in float64, returned in float64",
            "returned grad_x in torch.float64 for x in torch.float32",
            _cumsum(edit(_REVERSED, ("grad_output.flip", "grad_output.double().flip")))),
    Mistake("CumMax", "scatter_add into a float64 buffer, returned in float64",
            "returned grad_x in torch.float64 for x in torch.float32",
            _cummax(edit(_SCATTER_ADD, ("torch.zeros_like(grad_output).scatter_add(ctx.dim, "
                                        "indices, grad_output)",
                                        "torch.zeros_like(grad_output.double()).scatter_add("
                                        "ctx.dim, indices, grad_output.double())")))),
    Mistake("Normalize", "the projection taken in float64, returned in float64",
            "returned grad_x in torch.float64 for x in torch.float32",
            _normalize(edit(_PROJECTION, ("(y * grad_output)", "(y.double() * grad_output)"),
                            ("(grad_output - y", "(grad_output.double() - y")))),
]

UNUSUAL = [
    Unusual("Cumsum", "a matmul with a triangle of ones along dim", _cumsum('''
        g = grad_output.movedim(dim, -1)
        n = g.shape[-1]
        lower = torch.ones(n, n, dtype=g.dtype, device=g.device).tril()  # [o, i]: i <= o
        return (g @ lower).movedim(-1, dim), None
''')),
    Unusual("CumMax", "index_add one flattened slice at a time", _cummax('''
        d = ctx.dim % grad_output.dim()
        g = grad_output.movedim(d, -1).reshape(-1, grad_output.shape[d])
        i = indices.movedim(d, -1).reshape(-1, grad_output.shape[d])
        out = torch.zeros_like(g)
        for r in range(g.shape[0]):
            out[r] = out[r].index_add(0, i[r], g[r])
        return out.reshape(grad_output.movedim(d, -1).shape).movedim(-1, d), None
''', forward=_CUMMAX_FORWARD)),
]
