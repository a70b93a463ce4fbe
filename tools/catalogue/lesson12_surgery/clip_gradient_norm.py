"""Lesson 12: answers with known verdicts for ClipGradientNorm (identity forward, each row of
grad_output clipped to norm max_norm in backward)."""

from .. import Mistake, Unusual
from .answers import _NORMS, _clip


UNUSUAL = [
    Unusual("ClipGradientNorm", "torch.where", _clip(
        _NORMS + "        scaled = grad_output * (ctx.max_norm / norms)\n"
        "        return torch.where(norms > ctx.max_norm, scaled, grad_output), None\n")),
    # review 54: 'sqrt of the summed squares as the norm' moved to review54.MISTAKES (its
    # float16 squares overflow)
    # review of lesson 12 (fifth)
    Unusual("ClipGradientNorm", "torch.minimum with ones",
            _clip(
        _NORMS + "        scale = torch.minimum(torch.ones_like(norms), ctx.max_norm / norms)\n"
        "        return scale * grad_output, None\n")),
]


MISTAKES = [
    Mistake("ClipGradientNorm", "saves x", "saved input x", _clip(
        "        x, = ctx.saved_tensors  # saved, never needed\n" + _NORMS
        + "        scaled = grad_output * (ctx.max_norm / norms)\n"
        "        return torch.where(norms > ctx.max_norm, scaled, grad_output), None\n",
        forward='''
    @staticmethod
    def forward(ctx, x, max_norm):
        ctx.max_norm = max_norm
        ctx.save_for_backward(x)
        return x.view_as(x)
''')),
    # review 55: an Unusual answer until max_norm 1e300 was graded (g * m overflows)
    Mistake("ClipGradientNorm", "divide by the norm clamped from below",
            'multiplies by max_norm before dividing', _clip(
        "        norms = grad_output.norm(dim=-1, keepdim=True)\n"
        "        return grad_output * ctx.max_norm / norms.clamp(min=ctx.max_norm), None\n",
        forward='''
    @staticmethod
    def forward(ctx, x, max_norm):
        ctx.max_norm = max_norm
        return x.clone()
''')),
    # review 55: an Unusual answer until max_norm 1e-300 was graded (n / m overflows)
    Mistake("ClipGradientNorm", "divided by max(1, norm / max_norm), as a public norm_grad hook",
            'divides by norm / max_norm, which overflows float64',
            _clip("        norm = grad_output.norm(p=2, dim=-1, keepdim=True)\n"
                  "        return grad_output / (norm / ctx.max_norm).clamp(min=1), None\n")),
    # review of lesson 12 (fourth): an Unusual answer until rows of norm below 1e-12 were
    # graded; F.normalize divides by max(norm, 1e-12), so a row of norm 5e-13 is halved
    Mistake("ClipGradientNorm", "F.normalize's clamp at 1e-12",
            "changed a row of norm 5e-13, below max_norm", _clip(
                _NORMS + "        return F.normalize(grad_output, dim=-1) * "
                "norms.clamp(max=ctx.max_norm), None\n")),
    Mistake("ClipGradientNorm", "global norm, as clip_grad_norm_",
            "clips by the norm of the whole gradient", _clip(
                "        total = torch.linalg.vector_norm(grad_output)\n"
                "        return grad_output * (ctx.max_norm / total).clamp(max=1), None\n"),
            named=True, nbgrader=True),
    Mistake("ClipGradientNorm", "factor ignores max_norm", "clips rows at norm 1 whatever max_norm",
            _clip(_NORMS + "        return grad_output * (1 / norms).clamp(max=1), None\n"),
            named=True),
    # review of lesson 12: was told it ignored max_norm (at 1e-4, where clipping at 1, no
    # clipping and this give the same rows)
    Mistake("ClipGradientNorm", "squared norm compared with max_norm",
            "compares each row's squared norm with max_norm", _clip(
                "        squares = (grad_output * grad_output).sum(-1, keepdim=True)\n"
                "        scale = torch.where(squares > ctx.max_norm, "
                "ctx.max_norm / squares.sqrt(), 1.0)\n"
                "        return grad_output * scale, None\n")),
    Mistake("ClipGradientNorm", "each element clamped", "clamps each element", _clip(
        "        return grad_output.clamp(-ctx.max_norm, ctx.max_norm), None\n"), named=True),
    Mistake("ClipGradientNorm", "every row scaled to max_norm", "scales every row to norm max_norm",
            _clip(_NORMS + "        return grad_output * ctx.max_norm / norms, None\n"),
            named=True),
    Mistake("ClipGradientNorm", "scaled in place", "modified grad_output in place", _clip(
        _NORMS + "        return grad_output.mul_((ctx.max_norm / norms).clamp(max=1)), None\n"),
        named=True),
    Mistake("ClipGradientNorm", "nan on a row of zeros", "a row of grad_output is all zeros",
            _clip(_NORMS + "        return grad_output * torch.clamp(norms, max=ctx.max_norm) "
                  "/ norms, None\n"), named=True),
    Mistake("ClipGradientNorm", "columns clipped", "clips columns", _clip(
        "        norms = torch.linalg.vector_norm(grad_output, dim=0, keepdim=True)\n"
        "        return grad_output * (ctx.max_norm / norms).clamp(max=1), None\n")),
    Mistake("ClipGradientNorm", "norm over dim 1, right for 2-D only", "clips columns", _clip(
        "        norms = grad_output.norm(dim=1, keepdim=True)\n"
        "        return grad_output * (ctx.max_norm / norms).clamp(max=1), None\n")),
    Mistake("ClipGradientNorm", "rows through .view", "view size is not compatible", _clip(
        "        rows = grad_output.view(-1, grad_output.shape[-1])\n"
        "        scale = (ctx.max_norm / rows.norm(dim=1, keepdim=True)).clamp(max=1)\n"
        "        return (rows * scale).view(grad_output.shape), None\n")),
    # an Unusual answer until the contract said "no eps" (issue 46): torch.renorm divides by
    # norm + 1e-7, a relative error of 1e-7 / norm that PerSampleClippedLinear already failed
    Mistake("ClipGradientNorm", "renorm over flattened rows (its eps of 1e-7)",
            "with nothing added to the norm", _clip(
                "        rows = grad_output.reshape(-1, grad_output.shape[-1])\n"
                "        return rows.renorm(2, 0, ctx.max_norm).reshape(grad_output.shape), None\n")),
    # review of lesson 12: was told it added an eps; max_norm = 1e-4 rounds in float32
    Mistake("ClipGradientNorm", "max_norm as a float32 tensor", "a float32 constant in float64",
            _clip(_NORMS + "        limit = torch.tensor(ctx.max_norm)\n"
                  "        return grad_output * (limit / norms).clamp(max=1), None\n")),
    Mistake("ClipGradientNorm", "norms computed in float32", "a step in float32 in float64",
            _clip("        norms = grad_output.float().norm(dim=-1, keepdim=True).double()\n"
                  "        return grad_output * (ctx.max_norm / norms).clamp(max=1), None\n")),
    Mistake("ClipGradientNorm", "forward writes into x", "forward modified x in place",
            _clip(_NORMS + "        return grad_output * (ctx.max_norm / norms).clamp(max=1), None\n",
                  '''
    @staticmethod
    def forward(ctx, x, max_norm):
        ctx.max_norm = max_norm
        return x.mul_(1)  # the same values, written into x
''')),
    # review of lesson 12 (fifth)
    Mistake('ClipGradientNorm', 'eps 1e-12 added to the norm',
            'with nothing added to the norm',
            '''class ClipGradientNorm(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, max_norm):
        ctx.max_norm = max_norm
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad_output):
        norms = torch.linalg.vector_norm(grad_output, dim=-1, keepdim=True)
        return grad_output * (ctx.max_norm / (norms + 1e-12)).clamp(max=1), None
'''),
    Mistake('ClipGradientNorm', 'forward returns x itself, torch.where on the rows',
            'gives a row of norm 0, not 1e-300, for a float64 row of norm 5e-150',
            '''class ClipGradientNorm(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, max_norm):
        ctx.max_norm = max_norm
        return x

    @staticmethod
    def backward(ctx, grad_output):
        norms = grad_output.norm(dim=-1, keepdim=True)
        return torch.where(norms > ctx.max_norm, grad_output * ctx.max_norm / norms, grad_output), None
'''),
]
