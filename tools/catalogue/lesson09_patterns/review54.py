"""Lesson 09, review 54: a CumMax that runs cummax on x.movedim(dim, -1) and saves the indices
moved back with .contiguous() (a copy wherever dim is not the last; the identity check now runs
along dims 0 and -2 too); Normalize answers that place float32 rows by a norm taken in float64
"for accuracy" (F.normalize uses the float32 norm, so rows within an ulp of eps change case),
or that save the per-row norm in float64; a Cumsum that keeps x on ctx for its shape (the
message asks whether backward needs the tensor at all, rather than sending it to
save_for_backward, which the saving clause then fails). Unusual: the movedim route saving a
view, and a Normalize that tests the clamped divisor."""

from .. import Mistake, Unusual
from .answers import _PROJECTION, _REVERSED, _cumsum, _function, _normalize

_MOVEDIM_FORWARD = '''    def forward(ctx, x, dim):
        values, indices = torch.cummax(x.movedim(dim, -1), -1)
        ctx.save_for_backward(indices.movedim(-1, dim)KEEP)
        ctx.dim = dim
        return values.movedim(-1, dim)
'''
_SCATTER_BACK = '''    def backward(ctx, grad_output):
        indices, = ctx.saved_tensors
        return torch.zeros_like(grad_output).scatter_add(ctx.dim, indices, grad_output), None
'''

_F64_NORM = '''
    def forward(ctx, x, eps):
        norm = torch.linalg.vector_norm(x, dim=-1, keepdim=True, dtype=torch.float64)
        y = (x / norm.clamp_min(eps)).to(x.dtype)
        ctx.save_for_backward(y, SAVED)
        ctx.eps = eps
        return y
'''

UNUSUAL = [
    Unusual("CumMax", "cummax along the last dim after movedim, the indices saved as a view",
            _function("CumMax", _MOVEDIM_FORWARD.replace("KEEP", ""), _SCATTER_BACK)),
]

MISTAKES = [
    Mistake("CumMax", "cummax after movedim, the indices moved back with .contiguous() (a copy)",
            "forward made beside the indices torch.cummax returned",
            _function("CumMax", _MOVEDIM_FORWARD.replace("KEEP", ".contiguous()"),
                      _SCATTER_BACK), named=True),
    Mistake("Normalize", "the norm taken in float64 for accuracy, saved in float64",
            "a norm taken in float64", _normalize('''
        above = norm >= ctx.eps
        radial = (y * grad_output).sum(-1, keepdim=True)
        return ((grad_output - y * radial * above) / norm.clamp_min(ctx.eps)).to(
            grad_output.dtype), None
''', forward=_F64_NORM.replace("SAVED", "norm")), named=True),
    Mistake("Normalize", "the norm taken in float64, rounded to x's dtype and saved",
            "wrong on a float32 row within one ulp of eps", _normalize(_PROJECTION, forward=_F64_NORM.replace(
                "SAVED", "norm.to(x.dtype)")), named=True),
    Mistake("Normalize", "x's norm saved in float64 (placed right, bytes of its own)",
            "number per row in float64", _normalize("        norm = norm.to(y.dtype)\n"
                                                    + _PROJECTION, forward='''
    def forward(ctx, x, eps):
        norm = x.norm(dim=-1, keepdim=True)
        y = x / norm.clamp_min(eps)
        ctx.save_for_backward(y, norm.double())
        ctx.eps = eps
        return y
'''), named=True),
    Mistake("Cumsum", "x kept on ctx for its shape", "does backward need that tensor at all",
            _cumsum(_REVERSED.replace(".flip(dim), None", ".flip(dim).reshape(ctx.x.shape), None"),
                    forward='''    def forward(ctx, x, dim):
        ctx.x, ctx.dim = x, dim
        return torch.cumsum(x, dim)
'''), named=True),
]
