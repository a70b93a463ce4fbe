"""Lesson 09's Normalize: backwards that tell a row above eps from one below by another test than
the norm against eps: wrong where the test misplaces rows a relative 1e-3 or more from eps (|y|
with a loose margin, isclose's absolute tolerance at a tiny eps, a float32 norm or eps for
float64 rows, a test that always holds); and, correct, tests that differ from F.normalize's
only within the contract's relative 1e-3 of eps (a tolerance or margin of 1e-6, a float32 copy of
the divisor, the norm rebuilt as |y| x divisor, the textbook (x * x).sum(-1).sqrt(), norm > eps,
the clamped divisor, the squared norm against eps**2), where either side is right."""

from .. import Mistake, Unusual, edit
from .answers import _NORMALIZE_FORWARD, _PROJECTION, _function, _normalize


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
              f"lies between {line} eps, not at eps",
              _NORMALIZE_BY_LENGTH.replace("TEST", test))
      for test, line in (("length > 0.99", "0.985 eps and 0.99"),
                         ("length > 0.5", "0.4 eps and 0.55"))),
    # N5 of review 75: a margin below eps on the norm, the same line as |y| > 0.98, named by
    # where the misplaced rows lie rather than asked about |y|
    Mistake("Normalize", "above eps told by the norm with a margin below eps (n > 0.98 eps)",
            "every row from 0.985 eps up to eps takes the projection of a row above it",
            _normalize(edit(_PROJECTION, ("above = norm >= ctx.eps",
                                          "above = norm > 0.98 * ctx.eps")))),
    # N1 of review 75: both cases computed on every row and mixed by multiplying with a mask:
    # the row of zeros divides by its norm, 0, and 0 x inf (or 0 x nan) is nan
    Mistake("Normalize", "both cases mixed by multiplying with a mask (nan from 0 x inf on a "
            "zero row)", "holds nan or inf on a row of zeros", _normalize('''
        above = (norm >= ctx.eps).to(grad_output.dtype)
        radial = (y * grad_output).sum(-1, keepdim=True)
        return above * (grad_output - y * radial) / norm + (1 - above) * grad_output / ctx.eps, None
''')),
    # learner trial 80 (issue 68): the clamped branch's gradient computed as if unclamped (the
    # derivative of x / norm on every row) read 'does backward ... multiply it by a mask of 0?',
    # though it has no mask; the line now says what was seen and what the other rows prove
    Mistake("Normalize", "every row's gradient computed as if unclamped (x / norm's)",
            "on the other rows below eps it is the derivative of x / norm", _normalize('''
        unit = y * norm.clamp_min(ctx.eps) / norm
        radial = (unit * grad_output).sum(-1, keepdim=True)
        return (grad_output - unit * radial) / norm, None
''')),
    Mistake("Normalize", "projection masked, divided by the norm unclamped",
            "on the other rows below eps it is grad_output / norm, not grad_output / eps",
            _normalize('''
        radial = (y * grad_output).sum(-1, keepdim=True)
        above = norm >= ctx.eps
        return (grad_output - y * radial * above) / norm, None
''')),
    Mistake("Normalize", "norm for the test computed on x.float()",
            "Normalize saves its number per row in float32 for x in float64",
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
    # isclose's atol of 1e-8 calls a row of 1e3 eps equal to eps = 1e-12
    Mistake("Normalize", "above eps told from the divisor with isclose "
            "(~torch.isclose(divisor, torch.full_like(divisor, ctx.eps)))",
            "Normalize's gradient on a row just above eps has no projection term",
            _NORMALIZE_BY_DIVISOR.replace(
                "TEST", "~torch.isclose(divisor, torch.full_like(divisor, ctx.eps))")),
    Mistake("Normalize", "above eps told from the divisor with divisor >= eps (always true)",
            "Normalize's gradient is wrong on rows whose norm is below eps",
            _NORMALIZE_BY_DIVISOR.replace("TEST", "divisor >= ctx.eps")),
    # eps rounded to float32 divides float64 rows below eps by float32(eps)
    Mistake("Normalize", "eps as torch.tensor(eps) in forward and backward",
            "a step in float32", _NORMALIZE_TENSOR_EPS),
]

# tests that differ from F.normalize's only on rows within the contract's relative 1e-3 of eps,
# where either side is right (mistakes while rows one ulp from eps were graded, review 71b)
WITHIN_THE_BAND = [
    *(Unusual("Normalize", f"above eps told from the length of y ({test})",
              _NORMALIZE_BY_LENGTH.replace("TEST", test))
      for test in ("torch.isclose(length, torch.ones_like(length))", "length > 1 - 1e-6")),
    *(Unusual("Normalize", f"above eps told from the divisor with {name} ({test})",
              _NORMALIZE_BY_DIVISOR.replace("TEST", test))
      for name, test in (("a safety margin", "divisor > ctx.eps * (1 + 1e-6)"),
                         ("a float32 copy", "divisor.float() > ctx.eps"))),
    Unusual("Normalize", "above eps told from the norm rebuilt as |y| x divisor",
            _NORMALIZE_BY_DIVISOR.replace(
                "TEST", "torch.linalg.vector_norm(y, dim=-1, keepdim=True) * divisor >= ctx.eps")),
    Unusual("Normalize", "norm as (x * x).sum(-1).sqrt()", _normalize(_PROJECTION, forward='''
    def forward(ctx, x, eps):
        norm = (x * x).sum(-1, keepdim=True).sqrt()
        y = x / norm.clamp_min(eps)
        ctx.save_for_backward(y, norm)
        ctx.eps = eps
        return y
''')),
]

UNUSUAL = WITHIN_THE_BAND + [
    # wrong only on a float32 row whose norm equals eps as float32 holds it (a tie, or below the
    # Python float eps), mistakes until the contract let such a row take either side (review 71)
    Unusual("Normalize", "above eps told by norm > eps (a tie taken as below)",
            _normalize(edit(_PROJECTION, ("above = norm >= ctx.eps", "above = norm > ctx.eps")))),
    Unusual("Normalize", "saves the clamped norm; the branch from the output's length",
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
''')),
    Unusual("Normalize", "saves the clamped divisor; above eps told by divisor > eps",
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
''')),
    Unusual("Normalize", "float32 norm compared with eps in float64 (norm.double() >= eps)",
            _normalize(edit(_PROJECTION, ("above = norm >= ctx.eps",
                                          "above = norm.double() >= ctx.eps")))),
    Unusual("Normalize", "the divisor chosen in float64 too (where(norm.double() >= eps, ...))",
            _normalize('''
        above = norm.double() >= ctx.eps
        eps = torch.tensor(ctx.eps, dtype=torch.float64)
        div = torch.where(above, norm.double(), eps).to(grad_output.dtype)
        return (grad_output - y * (y * grad_output).sum(-1, keepdim=True) * above) / div, None
''', forward='''
    def forward(ctx, x, eps):
        norm = torch.linalg.vector_norm(x, dim=-1, keepdim=True)
        eps64 = torch.tensor(eps, dtype=torch.float64)
        div = torch.where(norm.double() >= eps, norm.double(), eps64).to(x.dtype)
        y = x / div
        ctx.save_for_backward(y, norm)
        ctx.eps = eps
        return y
''')),
    Unusual("Normalize", "the squared norm saved and compared with eps**2 (in float32)",
            edit(_normalize('''
        radial = (y * grad_output).sum(-1, keepdim=True)
        above = sq >= ctx.eps ** 2
        return (grad_output - y * radial * above) / torch.where(above, sq.sqrt(), ctx.eps), None
''', edit(_NORMALIZE_FORWARD, ("ctx.save_for_backward(y, norm)",
                                "ctx.save_for_backward(y, norm * norm)"))),
                 ("y, norm = ctx.saved_tensors", "y, sq = ctx.saved_tensors"))),
]
