"""Lesson 12: answers with known verdicts for ClipGradientNorm (identity forward, each row of
grad_output clipped to norm max_norm in backward)."""

from .. import Mistake, Unusual, edit
from .answers import (_CLIP, _CLIP_RATIO, _CLIP_RIGHT, _CLIP_TF, _FLOAT32_GMN, _FORMER_CLIP,
                      _NORMS, _U4, _clip, _clip_slack, _float32_only)


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
    Unusual('ClipGradientNorm', 'norms in float64 whatever the dtype, divide first, cast back',
            'class ClipGradientNorm(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x, max_norm):\n        ctx.max_norm = max_norm\n        return x.view_as(x)\n\n    @staticmethod\n    def backward(ctx, grad_output):\n        g = grad_output.double()                       # squares that fit whatever the dtype\n        norms = g.pow(2).sum(-1, keepdim=True).sqrt()\n        out = torch.where(norms > ctx.max_norm, g / norms * ctx.max_norm, g)\n        return out.to(grad_output.dtype), None\n'),
    Unusual('ClipGradientNorm', "norm clamped at the dtype's tiny (below every row the contract covers)",
            "class ClipGradientNorm(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x, max_norm):\n        ctx.max_norm = max_norm\n        return x.view_as(x)\n    @staticmethod\n    def backward(ctx, g):\n        # a guard at the dtype's smallest normal: below every norm the contract covers\n        norms = torch.linalg.vector_norm(g, dim=-1, keepdim=True).clamp(min=torch.finfo(g.dtype).tiny)\n        return g * (ctx.max_norm / norms).clamp(max=1), None\n"),
    # (x itself returned, float32 work for half, returned in float32: a mistake by rule 2's
    # dtype, at the end)
    Unusual('ClipGradientNorm', "LAPACK's max-abs-scaled norm, factor by where (review 56)", _U4),
    Unusual('ClipGradientNorm', 'torch.fmin with ones: nan-ignoring minimum',
            edit(_CLIP, (_CLIP_RIGHT, "        return grad_output * torch.fmin(m / norms, "
                                      "torch.ones_like(norms)), None\n"))),
    Unusual('ClipGradientNorm', "the lesson's former solution, (m / norms).clamp(max=1)",
            _FORMER_CLIP),
    # the clamp lies below max_norm's range, 1e-3 to 1e3 (a MISTAKE while max_norm 1e-13 was graded)
    Unusual('ClipGradientNorm', 'norm clamped at 1e-12, max_norm 1e-13',
            "class ClipGradientNorm(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x, max_norm):\n        ctx.max_norm = max_norm\n        return x.view_as(x)\n    @staticmethod\n    def backward(ctx, grad_output):\n        norms = torch.linalg.vector_norm(grad_output, dim=-1, keepdim=True)\n        # F.normalize's guard against a zero row, then min(1, m / n)\n        scale = (ctx.max_norm / norms.clamp(min=1e-12)).clamp(max=1)\n        return grad_output * scale, None\n"),
    # the clamp lies below max_norm's range (a MISTAKE while max_norm 1e-154 was graded)
    Unusual('ClipGradientNorm', 'norm clamped at 1e-20',
            'class ClipGradientNorm(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x, max_norm):\n        ctx.max_norm = max_norm\n        return x.view_as(x)\n    @staticmethod\n    def backward(ctx, g):\n        norms = torch.linalg.vector_norm(g, dim=-1, keepdim=True).clamp(min=1e-20)\n        return g * (ctx.max_norm / norms).clamp(max=1), None\n'),
    # the clamp lies below max_norm's range (a MISTAKE while max_norm 1e-154 was graded)
    Unusual('ClipGradientNorm', 'norm clamped at float64 eps',
            'class ClipGradientNorm(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x, max_norm):\n        ctx.max_norm = max_norm\n        return x.view_as(x)\n    @staticmethod\n    def backward(ctx, g):\n        norms = torch.linalg.vector_norm(g, dim=-1, keepdim=True)\n        norms = norms.clamp(min=torch.finfo(torch.float64).eps)\n        return torch.where(norms > ctx.max_norm, g * (ctx.max_norm / norms), g), None\n'),
    # float32 holds n / m over max_norm's range (a MISTAKE while max_norm 1e-30 was graded)
    Unusual('ClipGradientNorm', 'g / max(n / m, 1) in float32 only',
            edit(_CLIP, (_CLIP_RIGHT, _float32_only(_CLIP_RIGHT, _CLIP_RATIO, "        ")))),
    # float32 holds g * m over max_norm's range (a MISTAKE while max_norm 1e-30 was graded)
    Unusual('ClipGradientNorm', 'grad_output * m / norms inside the where, float32 rows only',
            _FLOAT32_GMN),
    # review of lesson 12 (seventh): rows as a 2-D view, x at least 1-D (no 0-d x graded since)
    Unusual("ClipGradientNorm", "rows through reshape(-1, d)", _clip(
        "        rows = grad_output.reshape(-1, grad_output.shape[-1])\n"
        "        norms = torch.linalg.vector_norm(rows, dim=1, keepdim=True)\n"
        "        clipped = torch.where(norms > ctx.max_norm, rows / norms * ctx.max_norm, rows)\n"
        "        return clipped.reshape(grad_output.shape), None\n")),
    # review of lesson 12 (seventh): the natural float16 answers, a float16 factor
    Unusual("ClipGradientNorm", "float16 rows' norm accumulated in float32, factor cast back",
            _clip("        wide = grad_output.float() if grad_output.dtype == torch.float16 else grad_output\n"
                  "        norms = torch.linalg.vector_norm(wide, dim=-1, keepdim=True)\n"
                  "        scale = (ctx.max_norm / norms.clamp_min(ctx.max_norm)).to(grad_output.dtype)\n"
                  "        return grad_output * scale, None\n")),
]


MISTAKES = [
    # review 75 (CG_W7): Unusual answers until a float16 row of 1024 entries of 5e-4 and 2e-5
    # was graded at max_norm 1e-3: g * m never overflows where torch.where uses it, but it falls
    # far below float16's normal numbers (2e-8 rounds to 0), and the clipped row's norm is off 5%
    Mistake("ClipGradientNorm", "torch.where, multiplying by max_norm before dividing",
            "below float16's normal numbers, where it keeps a few bits",
            _clip(_NORMS + "        return torch.where(norms > ctx.max_norm, "
                  "grad_output * ctx.max_norm / norms, grad_output), None\n")),
    Mistake('ClipGradientNorm', 'forward returns x itself, torch.where on the rows, g * m / norms',
            "below float16's normal numbers, where it keeps a few bits",
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
    # an Unusual answer until a float16 row of 1024 entries of 3e-4 was graded (review of
    # lesson 12, seventh): its squares, 9e-8, lose their digits summed in float16
    Mistake('ClipGradientNorm', 'squares summed in float16', 'where are they summed',
            'class ClipGradientNorm(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x, max_norm):\n        ctx.max_norm = max_norm\n        return x.view_as(x)\n\n    @staticmethod\n    def backward(ctx, grad_output):\n        norms = (grad_output * grad_output).sum(-1, keepdim=True).sqrt()\n        return grad_output * (ctx.max_norm / norms).clamp(max=1), None\n'),
    # review of lesson 12 (seventh): passed with a 13% error on each entry of that row, the
    # tolerance then a share of the row's norm
    Mistake("ClipGradientNorm", "squares summed in float16, m / norm.clamp_min(m)",
            "where are they summed", _clip(
                "        norms = (grad_output * grad_output).sum(-1, keepdim=True).sqrt()\n"
                "        return grad_output * (ctx.max_norm / norms.clamp_min(ctx.max_norm)), None\n")),
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
            'divides by norm / max_norm, which overflows float16',
            _clip("        norm = grad_output.norm(p=2, dim=-1, keepdim=True)\n"
                  "        return grad_output / (norm / ctx.max_norm).clamp(min=1), None\n")),
    # review of lesson 12 (fourth): an Unusual answer until rows of norm below 1e-12 were
    # graded; F.normalize divides by max(norm, 1e-12), so a row of norm 5e-13 is halved
    Mistake("ClipGradientNorm", "F.normalize's clamp at 1e-12",
            "changed a float64 row of norm 5e-13, below max_norm", _clip(
                _NORMS + "        return F.normalize(grad_output, dim=-1) * "
                "norms.clamp(max=ctx.max_norm), None\n")),
    # review 70: passed while unclipped rows were compared to a tolerance; g / m * m rounds,
    # in float16 at m = 1e3 by 1% (g / 1e3 below the normal numbers)
    Mistake("ClipGradientNorm", "divided by the norm clamped at max_norm, then times max_norm",
            "changed a float64 row of norm 1.4, below max_norm=3",
            _clip(_NORMS + "        return grad_output / norms.clamp(min=ctx.max_norm) * ctx.max_norm, None\n")),
    Mistake("ClipGradientNorm", "g / m * m for float16 rows only",
            "changed a float16 row of norm 0.0023, below max_norm=1000",
            _clip(_NORMS + "        if grad_output.dtype != torch.float16:\n"
                  "            return torch.where(norms > ctx.max_norm, grad_output / norms * ctx.max_norm, grad_output), None\n"
                  "        return grad_output / norms.clamp(min=ctx.max_norm) * ctx.max_norm, None\n")),
    # an Unusual answer until unclipped rows were graded bit for bit (review 70): g * m / m rounds
    Mistake('ClipGradientNorm', "TF's order in float32 only", "changed a float32 row of norm 1.4",
            edit(_CLIP, (_CLIP_RIGHT, _float32_only(_CLIP_RIGHT, _CLIP_TF, "        ")))),
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
    Mistake("ClipGradientNorm", "norms computed in float32",
            "computes its factor in float32 arithmetic",
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
    # review 55: an Unusual answer until max_norm 1e-300 was graded (n / m overflows)
    Mistake('ClipGradientNorm', 'divides by clamp(norm / max_norm, min=1)',
            'divides by norm / max_norm, which overflows float16',
            'class ClipGradientNorm(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x, max_norm):\n        ctx.max_norm = max_norm\n        return x.clone()\n    @staticmethod\n    def backward(ctx, grad_output):\n        over = torch.linalg.vector_norm(grad_output, dim=-1, keepdim=True) / ctx.max_norm\n        return grad_output / over.clamp(min=1), None\n'),
    # review 55: an Unusual answer until max_norm 1e-300 was graded (n / m overflows)
    Mistake('ClipGradientNorm', 'rows flattened, divided by n / max_norm, float16 norms in float64',
            'divides by norm / max_norm, which overflows float16',
            'class ClipGradientNorm(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x, max_norm):\n        ctx.max_norm = max_norm\n        return x.clone()\n    @staticmethod\n    def backward(ctx, g):\n        rows = g.reshape(-1, g.shape[-1])\n        n = rows.double().pow(2).sum(-1, keepdim=True).sqrt().to(g.dtype) if g.dtype == torch.float16 else torch.linalg.vector_norm(rows, dim=-1, keepdim=True)\n        out = torch.where(n > ctx.max_norm, rows / (n / ctx.max_norm), rows)\n        return out.reshape(g.shape), None\n'),
    Mistake('ClipGradientNorm', 'factor from a float32 rsqrt for float64 rows',
            'computes its factor in float32 arithmetic', edit(_CLIP, (_CLIP_RIGHT,
                "        scale = (m * torch.rsqrt((grad_output.float() ** 2).sum(-1, keepdim=True))).clamp(max=1)\n"
                "        return grad_output * scale.to(grad_output.dtype), None\n"))),
    Mistake('ClipGradientNorm', 'a relative slack of 1e-3 on the threshold',
            'unclipped (max_norm=1, float64): a slack on the threshold', _clip_slack('1.001')),
    Mistake('ClipGradientNorm', 'a relative slack of 1e-2 on the threshold',
            'a slack on the threshold', _clip_slack('1.01')),
    Mistake('ClipGradientNorm', 'a relative slack of 0.1 on the threshold (was: shared state)',
            'a slack on the threshold', _clip_slack('1.1')),
    Mistake('ClipGradientNorm', 'a slack of 1e-4 on the threshold, float32 rows only',
            'max_norm unclipped (max_norm=1, float32): a slack on the threshold',
            edit(_CLIP, (_CLIP_RIGHT, "        slack = 1.0001 if grad_output.dtype == torch.float32 else 1.0\n"
                                      "        return torch.where(norms > m * slack, grad_output * (m / norms), grad_output), None\n"))),
    Mistake('ClipGradientNorm', 'the norm computed in float16 for float64 rows (was named as '
            'float32)', 'computes its factor in float16 (or bfloat16) arithmetic',
            edit(_CLIP, ("norms = torch.linalg.vector_norm(grad_output, dim=-1, keepdim=True)",
                         "norms = torch.linalg.vector_norm(grad_output.half(), dim=-1, "
                         "keepdim=True).to(grad_output.dtype)"))),
]

# correct until max_norms float16 rounds were graded (fresh review of lesson 12 at a38cbc94):
# in float16 max_norm rounds inside the clamp (0.3 -> 0.2998), so a row below max_norm gets the
# factor 0.3 / 0.2998, not 1
MISTAKES.append(Mistake(
    "ClipGradientNorm", "vector_norm in the rows' dtype, m / norm.clamp_min(m)",
    "changed a float16 row of norm 0.1, below max_norm=0.3",
    _clip(_NORMS + "        return grad_output * (ctx.max_norm / norms.clamp_min(ctx.max_norm)), None\n")))

# fresh review of lesson 12 at 751adb19 (CG_W4): "rows are samples" read as dim 0, each sample's
# whole slice clipped; its first line was "your gradient for x is wrong", naming nothing
MISTAKES.append(Mistake(
    "ClipGradientNorm", "each sample's slice (dim 0) clipped", "clips each slice along dim 0",
    _clip("        if grad_output.dim() < 2:\n"
          "            norms = grad_output.norm(dim=-1, keepdim=True)\n"
          "        else:\n"
          "            norms = torch.linalg.vector_norm(grad_output.flatten(1), dim=1)"
          ".reshape((-1,) + (1,) * (grad_output.dim() - 1))\n"
          "        return torch.where(norms > ctx.max_norm, grad_output / norms * ctx.max_norm, "
          "grad_output), None\n")))


# Rule 2's dtype: the clipped gradient returned in its float32 work dtype for a float16 x, which
# autograd casts back without a word. Catalogued as correct (unusual) until that clause was
# graded for every exercise (autograder.returned_dtypes): now a mistake.
MISTAKES += [
    Mistake('ClipGradientNorm', 'x itself returned; float32 work for half; grad_output returned',
            "ClipGradientNorm.backward returned grad_x in float32 for a float16 x: autograd casts "
            "it back without a word",
            '''class ClipGradientNorm(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, max_norm):
        ctx.max_norm = max_norm
        return x
    @staticmethod
    def backward(ctx, grad_output):
        g = grad_output.float() if grad_output.dtype in (torch.float16, torch.bfloat16) else grad_output
        norms = g.norm(dim=-1, keepdim=True)
        if not bool((norms > ctx.max_norm).any()):
            return grad_output, None
        return g * torch.where(norms > ctx.max_norm, ctx.max_norm / norms, torch.ones_like(norms)), None
'''),
]
