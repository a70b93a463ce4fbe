"""Lesson 12, review 56: the clipping contracts graded at every configuration they state.
max_norm 1e-300 in float32 rounds to 0, so max_norm / norm is 0 / 0 = nan for a row or sample
of zeros: the lesson's former solutions, (max_norm / norm).clamp(max=1), failed there (now a
where on norm > max_norm); max_norm 1e300 in float32 rounds to inf, where clamp(min=max_norm)
raises; and grad_output * max_norm / norm underflows for a row of norm 5e-150 at 1e-300 (the
probe PerSampleClippedLinear had, now shared). Unusual answers of earlier reviews that these
cases fail are Mistakes in their own modules now, with where-form versions kept as Unusual. A
(N, out, in) stack built in NumPy is seen by what backward allocates outside torch. A factor
computed in float16 for float64 rows was named as float32: the message now names the width its
error shows."""
from .. import Mistake, Unusual, edit
from .review55 import _CLIP, _CLIP_RIGHT, _PS, _PS_RIGHT

def _where(code: str, clamp: str, m: str = "m") -> str:
    """``code`` with its factor (m / norms).clamp(max=1) chosen by a where instead."""
    return edit(code, (clamp, f"torch.where(norms > {m}, {m} / norms, 1.0)"))


_FORMER_CLIP = edit(_CLIP, (_CLIP_RIGHT, "        return grad_output * (m / norms).clamp(max=1), None\n"))
_FLOAT32_GMN = edit(_CLIP, (_CLIP_RIGHT,
    "        if grad_output.dtype == torch.float32:\n"
    "            return torch.where(norms > m, grad_output * m / norms, grad_output), None\n"
    + _CLIP_RIGHT))
_FORMER_PS = edit(_PS, (_PS_RIGHT,
    "            grad_weight = (grad_output * (m / norms).clamp(max=1)[:, None]).T @ x\n"))
_PS_WHERE = edit(_PS, (_PS_RIGHT,
    "            grad_weight = (grad_output * torch.where(norms > m, m / norms, 1.0)[:, None]).T @ x\n"))
# the reviewer's NumPy stack, its factor chosen by a where (right in every other respect)
_NUMPY_STACK = "import numpy as np\n" + edit(_PS_WHERE, (
    "            norms = torch.linalg.vector_norm(grad_output, dim=1) * torch.linalg.vector_norm(x, dim=1)\n",
    "            stack = np.einsum('no,ni->noi', grad_output.detach().double().cpu().numpy(), x.detach().double().cpu().numpy())\n"
    "            norms = torch.from_numpy(np.sqrt((stack ** 2).sum((1, 2)))).to(x)\n"))

_U1 = '''class GradientReversal(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, alpha):
        ctx.alpha = alpha
        return x
    @staticmethod
    def backward(ctx, g):
        return torch.neg(g * ctx.alpha), None
'''
_U2 = '''class PerSampleClippedLinear(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, max_norm):
        ctx.save_for_backward(x, weight); ctx.max_norm = max_norm
        return torch.mm(x, weight.t())
    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        gx = gw = None
        if ctx.needs_input_grad[0]:
            gx = torch.mm(g, w)
        if ctx.needs_input_grad[1]:
            gn = torch.linalg.vector_norm(g, dim=1)
            xn = torch.linalg.vector_norm(x, dim=1)
            s = torch.minimum(ctx.max_norm / gn / xn, torch.ones_like(gn))
            s = torch.where(torch.isnan(s), torch.ones_like(s), s)  # 0-norm sample: factor 1
            r = s.sqrt()[:, None]
            gw = torch.einsum("no,ni->oi", g * r, x * r)
        return gx, gw, None
'''
_U3 = '''class SoftThreshold(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, lam):
        keep = x.abs() > lam
        y = torch.where(keep, x - lam * torch.sign(x), torch.zeros_like(x))
        ctx.save_for_backward(keep, torch.sign(x).to(torch.int8))
        return y
    @staticmethod
    def backward(ctx, g):
        keep, s = ctx.saved_tensors
        gx = torch.where(keep, g, torch.zeros_like(g))
        gl = -(gx * s).sum() if ctx.needs_input_grad[1] else None
        return gx, gl
'''
_U4 = '''class ClipGradientNorm(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, max_norm):
        ctx.max_norm = max_norm
        return x.view_as(x)
    @staticmethod
    def backward(ctx, g):
        a = g.abs().amax(-1, keepdim=True)
        safe = torch.where(a > 0, a, torch.ones_like(a))
        n = safe * torch.linalg.vector_norm(g / safe, dim=-1, keepdim=True)
        return torch.where(n > ctx.max_norm, g * (ctx.max_norm / n), g), None
'''
_ST7 = '''class SoftThreshold(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, lam):
        y = torch.sign(x) * torch.relu(x.abs() - lam)
        ctx.save_for_backward(torch.sign(y).to(torch.int8))
        return y
    @staticmethod
    def backward(ctx, g):
        s, = ctx.saved_tensors
        p = g * (s != 0)
        return p, -(g * s).sum()
'''

UNUSUAL = [
    Unusual('GradientReversal', 'x itself returned, torch.neg of a scaled copy (review 56)', _U1),
    Unusual('PerSampleClippedLinear', 'sqrt of the factor on each side, nan guarded to 1, einsum '
            '(review 56)', _U2),
    Unusual('SoftThreshold', 'a bool mask and an int8 sign saved, forward by where (review 56)', _U3),
    Unusual('SoftThreshold', 'the int8 sign of y alone saved (review 56)', _ST7),
    Unusual('ClipGradientNorm', "LAPACK's max-abs-scaled norm, factor by where (review 56)", _U4),
    Unusual('ClipGradientNorm', 'torch.fmin with ones: nan-ignoring minimum',
            edit(_CLIP, (_CLIP_RIGHT, "        return grad_output * torch.fmin(m / norms, "
                                      "torch.ones_like(norms)), None\n"))),
    Unusual('PerSampleClippedLinear', 'the factor chosen by where, on grad_output', _PS_WHERE),
    Unusual('PerSampleClippedLinear', 'sqrt of the factor on each side, chosen by where',
            edit(_PS, (_PS_RIGHT, "            root = torch.where(norms > m, m / norms, 1.0).sqrt()[:, None]\n"
                                  "            grad_weight = (grad_output * root).T @ (x * root)\n"))),
    Unusual('ClipGradientNorm', "the lesson's former solution, (m / norms).clamp(max=1)",
            _FORMER_CLIP),
    Unusual('PerSampleClippedLinear', "the lesson's former solution, (m / norms).clamp(max=1)",
            _FORMER_PS),
]

MISTAKES = [
    Mistake('ClipGradientNorm', 'grad_output * m / norms inside the where, float32 rows only',
            'gives a row of norm 0, not 1e-30, for a float32 row of norm 5e-19', _FLOAT32_GMN),
    Mistake('ClipGradientNorm', 'the norm computed in float16 for float64 rows (was named as '
            'float32)', 'computes its factor in float16 (or bfloat16) arithmetic',
            edit(_CLIP, ("norms = torch.linalg.vector_norm(grad_output, dim=-1, keepdim=True)",
                         "norms = torch.linalg.vector_norm(grad_output.half(), dim=-1, "
                         "keepdim=True).to(grad_output.dtype)"))),
    Mistake('PerSampleClippedLinear', 'the (N, out, in) stack built in NumPy',
            'allocated', _NUMPY_STACK),
]
