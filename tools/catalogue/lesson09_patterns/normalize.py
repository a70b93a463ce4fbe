"""Lesson 09: answers with known verdicts for Normalize (the projection term, rows below eps
divided by eps alone); normalize_eps_branch holds how backward tells the two cases apart."""

from .. import Mistake, Unusual
from .answers import _PROJECTION, _function, _normalize


_F64_NORM = '''
    def forward(ctx, x, eps):
        norm = torch.linalg.vector_norm(x, dim=-1, keepdim=True, dtype=torch.float64)
        y = (x / norm.clamp_min(eps)).to(x.dtype)
        ctx.save_for_backward(y, SAVED)
        ctx.eps = eps
        return y
'''


UNUSUAL = [
    # wrong only one ulp above some eps (0.0009 among them), where 1 / norm rounds to 1 / eps:
    # within the contract's band, where either side is right
    Unusual("Normalize", "above eps told from the saved reciprocal (1 / max(norm, eps) < 1 / eps)",
            _function("Normalize", '''
    def forward(ctx, x, eps):
        inverse = 1 / x.norm(dim=-1, keepdim=True).clamp_min(eps)
        y = x * inverse
        ctx.save_for_backward(y, inverse)
        ctx.eps = eps
        return y
''', '''
    def backward(ctx, grad_output):
        y, inverse = ctx.saved_tensors
        above = inverse < 1 / ctx.eps  # 1 / max(norm, eps) is 1 / eps below eps
        radial = (y * grad_output).sum(-1, keepdim=True)
        return (grad_output - y * radial * above) * inverse, None
''')),
    # F.normalize places a float32 row by its float32 norm; one rounded from float64 differs by an
    # ulp at most, within the contract's band
    Unusual("Normalize", "the norm taken in float64, rounded to x's dtype and saved",
            _normalize(_PROJECTION, forward=_F64_NORM.replace("SAVED", "norm.to(x.dtype)"))),
    Unusual("Normalize", "two branches with torch.where", _normalize('''
        radial = (y * grad_output).sum(dim=-1, keepdim=True)
        above = (grad_output - radial * y) / torch.clamp(norm, min=ctx.eps)
        return torch.where(norm >= ctx.eps, above, grad_output / ctx.eps), None
''')),
    Unusual("Normalize", "F.normalize forward, where-branch backward", _function("Normalize", '''
    def forward(ctx, x, eps):
        y = F.normalize(x, dim=-1, eps=eps)
        n = x.norm(dim=-1, keepdim=True)
        ctx.save_for_backward(y, n)
        ctx.eps = eps
        return y
''', '''
    def backward(ctx, g):
        y, n = ctx.saved_tensors
        proj = g - y * (y * g).sum(-1, keepdim=True)
        return torch.where(n < ctx.eps, g / ctx.eps, proj / n.clamp_min(ctx.eps)), None
''')),
    Unusual("Normalize", "(g - y (y.g)) / n via addcmul", _normalize('''
        dot = (y * grad_output).sum(-1, keepdim=True)
        mask = (norm >= ctx.eps).to(y.dtype)
        divisor = torch.maximum(norm, torch.full_like(norm, ctx.eps))
        return torch.addcmul(grad_output, y, dot * mask, value=-1) / divisor, None
''')),
]


MISTAKES = [
    # W23 of review 74: each row's dot product as a batched matmul, whose unsqueeze(-2) a 0-d x
    # (a row of one along dim=-1, which F.normalize takes) does not have
    Mistake("Normalize", "the row dot product as a batched matmul",
            "Normalize.backward raised IndexError with x of shape ()", _normalize('''
        radial = (y.unsqueeze(-2) @ grad_output.unsqueeze(-1)).squeeze(-1)
        above = norm >= ctx.eps
        return (grad_output - y * radial * above) / norm.clamp_min(ctx.eps), None
''')),
    # W8 of review 74: the divisor and a bool mask saved beside y, two numbers per row
    Mistake("Normalize", "saves y, the divisor and a bool mask per row",
            "Normalize saves 164 bytes where the contract allows 160", _function("Normalize", '''
    def forward(ctx, x, eps):
        norm = torch.linalg.vector_norm(x, dim=-1, keepdim=True)
        divisor = norm.clamp_min(eps)
        y = x / divisor
        ctx.save_for_backward(y, divisor, norm >= eps)
        return y
''', '''
    def backward(ctx, grad_output):
        y, divisor, above = ctx.saved_tensors
        return (grad_output - y * (y * grad_output).sum(-1, keepdim=True) * above) / divisor, None
''')),
    # UNUSUAL until review 74: each breaks on a 0-d x, a row of one along dim=-1, which
    # F.normalize takes (rule 1; the domain graded no 0-d x before)
    Mistake("Normalize", "the row dot product as an einsum (no 0-d branch)",
            "Normalize.backward raised RuntimeError with x of shape ()", _normalize('''
        radial = torch.einsum("...i,...i->...", y, grad_output).unsqueeze(-1)
        above = norm >= ctx.eps
        return (grad_output - y * radial * above) / norm.clamp_min(ctx.eps), None
''')),
    Mistake("Normalize", "norm without keepdim, unsqueezed in backward; einsum dot",
            "Normalize's output has shape (1,) but should have shape ()",
            _function("Normalize",
            '''
    def forward(ctx, x, eps):
        n = torch.linalg.vector_norm(x, dim=-1)
        y = x / n.clamp_min(eps).unsqueeze(-1)
        ctx.save_for_backward(y, n)
        ctx.eps = eps
        return y
''', '''
    def backward(ctx, g):
        y, n = ctx.saved_tensors
        n = n.unsqueeze(-1)
        dot = torch.einsum("...i,...i->...", y, g).unsqueeze(-1)
        gx = (g - y * dot * (n >= ctx.eps).to(g.dtype)) / n.clamp_min(ctx.eps)
        return gx, None
''')),
    Mistake("Normalize", "norm saved without keepdim, the two cases picked by torch.where",
            "Normalize's output has shape (1,) but should have shape ()",
            _normalize('''
        n = norm.unsqueeze(-1)
        projected = (grad_output - y * (y * grad_output).sum(-1, keepdim=True)) / n
        return torch.where(n >= ctx.eps, projected, grad_output / ctx.eps), None
''', forward='''
    def forward(ctx, x, eps):
        norm = x.norm(dim=-1)
        y = x / norm.clamp_min(eps).unsqueeze(-1)
        ctx.save_for_backward(y, norm)
        ctx.eps = eps
        return y
''')),
    Mistake("Normalize", "missing projection term", "missing the projection term", _normalize(
        "        return grad_output / norm.clamp_min(ctx.eps), None\n"),
            named=True, nbgrader=True),
    Mistake("Normalize", "projection on rows below eps too", "below eps", _normalize('''
        radial = (y * grad_output).sum(-1, keepdim=True)
        return (grad_output - y * radial) / norm.clamp_min(ctx.eps), None
'''), named=True),
    Mistake("Normalize", "saves x", "saves its input x", _normalize(_PROJECTION, forward='''
    def forward(ctx, x, eps):
        norm = x.norm(dim=-1, keepdim=True)
        y = x / norm.clamp_min(eps)
        ctx.save_for_backward(y, norm, x)
        ctx.eps = eps
        return y
''').replace("y, norm = ctx.saved_tensors", "y, norm, x = ctx.saved_tensors"), named=True),
    Mistake("Normalize", "builds each row's Jacobian", "Jacobian", _normalize('''
        d = y.shape[-1]
        eye = torch.eye(d, dtype=y.dtype, device=y.device)
        above = (norm >= ctx.eps).unsqueeze(-1)
        jacobian = (eye - above * y.unsqueeze(-1) * y.unsqueeze(-2)) / norm.clamp_min(
            ctx.eps).unsqueeze(-1)
        return (jacobian @ grad_output.unsqueeze(-1)).squeeze(-1), None
'''), named=True),
    Mistake("Normalize", "radial sum without keepdim", "keepdim", _normalize('''
        radial = (y * grad_output).sum(-1)
        above = norm >= ctx.eps
        return (grad_output - y * radial * above) / norm.clamp_min(ctx.eps), None
'''), named=True),
    Mistake("Normalize", "unclamped norm in the division", "below eps", _normalize('''
        radial = (y * grad_output).sum(-1, keepdim=True)
        above = norm >= ctx.eps
        return (grad_output - y * radial * above) / norm, None
''')),
    Mistake("Normalize", "the projection subtracted from grad_output in place, always",
            "Normalize's backward modified grad_output in place: compute a new tensor instead "
            "(an out-of-place op, or write into a fresh tensor) (Function contract, rule 5: "
            "Nothing written", _normalize('''
        radial = (y * grad_output).sum(-1, keepdim=True)
        grad_output.sub_(y * radial * (norm >= ctx.eps))
        return grad_output.div_(norm.clamp_min(ctx.eps)), None
''')),
    Mistake("Normalize", "grad_output's buffer reused once it is large (the grader's own "
            "checks of grad_output use small rows)", "modified grad_output in place on one of",
            _normalize('''
        radial = (y * grad_output).sum(-1, keepdim=True)
        above = norm >= ctx.eps
        if grad_output.numel() > 100:  # saves an allocation on big batches
            return grad_output.sub_(y * radial * above).div_(norm.clamp_min(ctx.eps)), None
        return (grad_output - y * radial * above) / norm.clamp_min(ctx.eps), None
''')),
    # a norm taken in float64 "for accuracy" and saved so: bytes of its own
    Mistake("Normalize", "the norm taken in float64 for accuracy, saved in float64",
            "saves its number per row in float64", _normalize('''
        above = norm >= ctx.eps
        radial = (y * grad_output).sum(-1, keepdim=True)
        return ((grad_output - y * radial * above) / norm.clamp_min(ctx.eps)).to(
            grad_output.dtype), None
''', forward=_F64_NORM.replace("SAVED", "norm")), named=True),
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
]
