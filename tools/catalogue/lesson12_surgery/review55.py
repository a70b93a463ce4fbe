"""Lesson 12, review 55: the two clipping exercises at both ends of "max_norm any positive
float" (TF's order g * m / max(n, m), which overflows at max_norm 1e300 or 1e30 in float32, and
g / max(n / m, 1), whose n / m overflows at max_norm 1e-300 against rows of norm 5e10), a factor
computed in float32 for float64 rows (named as such, no longer as an eps), and five unusual
answers that pass. The float64 forms of the first two were Unusual entries until now, moved to
the MISTAKES of clip_gradient_norm.py, review53.py and review54b.py; the float32-only forms
here show the float32 ends are graded too; and the int8-code answer with its code divided by
the mask, right on x86 CPUs only by an undefined cast of inf and nan."""
from .. import Mistake, Unusual, edit

# the lesson's BrokenSoftThreshold (review 55's node-by-node form), renamed
_BROKEN_SOFT = '''class SoftThreshold(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, lam):
        ctx.save_for_backward(x, lam)
        return torch.sign(x) * torch.relu(x.abs() - lam)
    @staticmethod
    def backward(ctx, grad_output):
        x, lam = ctx.saved_tensors
        shifted = x.abs() - lam
        grad_shifted = grad_output * torch.sign(x) * torch.relu(shifted) / shifted
        grad_x = grad_shifted * torch.sign(x)
        grad_lam = grad_shifted.sum()
        return grad_x, grad_lam
'''
# sign and mask in one int8 code, built by multiplying
_SOFT_CODE = '''class SoftThreshold(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, lam):
        y = x - torch.clamp(x, -lam, lam)
        code = (torch.sign(x) * (x.abs() > lam)).to(torch.int8)
        ctx.save_for_backward(code)
        return y
    @staticmethod
    def backward(ctx, grad_output):
        code, = ctx.saved_tensors
        gx = grad_output * (code != 0)
        gl = -(grad_output * code).sum() if ctx.needs_input_grad[1] else None
        return (gx if ctx.needs_input_grad[0] else None), gl
'''
_CLIP = '''class ClipGradientNorm(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, max_norm):
        ctx.max_norm = max_norm
        return x.view_as(x)
    @staticmethod
    def backward(ctx, grad_output):
        m = ctx.max_norm
        norms = torch.linalg.vector_norm(grad_output, dim=-1, keepdim=True)
        return torch.where(norms > m, grad_output * (m / norms), grad_output), None
'''
_CLIP_RIGHT = "        return torch.where(norms > m, grad_output * (m / norms), grad_output), None\n"
_CLIP_TF = "        return grad_output * m / torch.clamp(norms, min=m), None\n"
_CLIP_RATIO = "        return grad_output / (norms / m).clamp(min=1), None\n"
_PS = '''class PerSampleClippedLinear(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, max_norm):
        ctx.save_for_backward(x, weight)
        ctx.max_norm = max_norm
        return x @ weight.T
    @staticmethod
    def backward(ctx, grad_output):
        x, weight = ctx.saved_tensors
        m = ctx.max_norm
        grad_x = grad_weight = None
        if ctx.needs_input_grad[0]:
            grad_x = grad_output @ weight
        if ctx.needs_input_grad[1]:
            norms = torch.linalg.vector_norm(grad_output, dim=1) * torch.linalg.vector_norm(x, dim=1)
            grad_weight = (grad_output * (m / norms).clamp(max=1)[:, None]).T @ x
        return grad_x, grad_weight, None
'''
_PS_RIGHT = "            grad_weight = (grad_output * (m / norms).clamp(max=1)[:, None]).T @ x\n"
_PS_TF = "            grad_weight = (grad_output * m / torch.clamp(norms, min=m)[:, None]).T @ x\n"
_PS_RATIO = "            grad_weight = (grad_output / (norms / m).clamp(min=1)[:, None]).T @ x\n"


def _float32_only(line: str, wrong: str, indent: str) -> str:
    """The wrong line for float32 inputs only, the right one otherwise."""
    return (f"{indent}if grad_output.dtype == torch.float32:\n    {wrong}{indent}else:\n"
            f"    {line}")


UNUSUAL = [
    Unusual('ClipGradientNorm', 'x itself returned; float32 work for half; grad_output returned',
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
    Unusual('SoftThreshold', 'one int8 code sign(x) * [|x| > lam]; forward x - clamp(x, -lam, lam)',
            _SOFT_CODE),
    Unusual('SoftThreshold', 'F.softshrink(x, lam.item()), y saved',
            '''import torch.nn.functional as F
class SoftThreshold(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, lam):
        y = F.softshrink(x, lam.item())
        ctx.save_for_backward(y)
        return y
    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        gx = torch.where(y != 0, grad_output, torch.zeros_like(grad_output))
        return gx, -(gx * y.sign()).sum()
'''),
    Unusual('PerSampleClippedLinear', 'a loop over outputs, each row a vector-matrix product',
            edit(_PS, (_PS_RIGHT, "            scaled = grad_output * (m / norms).clamp(max=1)[:, None]\n"
                       "            grad_weight = torch.stack([scaled[:, o] @ x for o in range(grad_output.shape[1])]) if grad_output.shape[1] else scaled.T @ x\n"))),
    Unusual('PerSampleClippedLinear', 'norms from the diagonals of two (N, N) Gram matrices',
            edit(_PS, ("            norms = torch.linalg.vector_norm(grad_output, dim=1) * torch.linalg.vector_norm(x, dim=1)\n",
                       "            norms = (grad_output @ grad_output.T).diagonal().sqrt() * (x @ x.T).diagonal().sqrt()\n"))),
]

MISTAKES = [
    # the code divided by the mask: inf inside the threshold, nan at 0, which x86 CPUs happen
    # to cast to int8 as 0: a mutant of the int8-code answer that passed until forward's casts
    # were probed
    Mistake('SoftThreshold', 'int8 code as sign(x) / [|x| > lam]: inf and nan cast to int8',
            'casts inf or nan to int8', edit(_SOFT_CODE, (
                "torch.sign(x) * (x.abs() > lam)", "torch.sign(x) / (x.abs() > lam)"))),
    Mistake('SoftThreshold', "review 55's node-by-node BrokenSoftThreshold with its two lines mended",
            'forward saves x', edit(_BROKEN_SOFT, (
                "        grad_shifted = grad_output * torch.sign(x) * torch.relu(shifted) / shifted\n",
                "        grad_shifted = grad_output * torch.sign(x) * (shifted > 0)\n"), (
                "        grad_lam = grad_shifted.sum()\n", "        grad_lam = -grad_shifted.sum()\n"))),
    Mistake('ClipGradientNorm', "TF's order in float32 only",
            'overflows float32', edit(_CLIP, (_CLIP_RIGHT, _float32_only(_CLIP_RIGHT, _CLIP_TF, "        ")))),
    Mistake('ClipGradientNorm', 'g / max(n / m, 1) in float32 only',
            'divides by norm / max_norm, which overflows float32',
            edit(_CLIP, (_CLIP_RIGHT, _float32_only(_CLIP_RIGHT, _CLIP_RATIO, "        ")))),
    Mistake('ClipGradientNorm', 'factor from a float32 rsqrt for float64 rows',
            'computes its factor in float32 arithmetic', edit(_CLIP, (_CLIP_RIGHT,
                "        scale = (m * torch.rsqrt((grad_output.float() ** 2).sum(-1, keepdim=True))).clamp(max=1)\n"
                "        return grad_output * scale.to(grad_output.dtype), None\n"))),
    Mistake('PerSampleClippedLinear', "TF's order, g * m / max(n, m)",
            'multiplies by max_norm before dividing', edit(_PS, (_PS_RIGHT, _PS_TF))),
    Mistake('PerSampleClippedLinear', "TF's order in float32 only",
            'overflows float32', edit(_PS, (_PS_RIGHT, _float32_only(_PS_RIGHT, _PS_TF, "            ")))),
    Mistake('PerSampleClippedLinear', 'g / max(n / m, 1) in float32 only',
            'divides by norm / max_norm, which overflows float32',
            edit(_PS, (_PS_RIGHT, _float32_only(_PS_RIGHT, _PS_RATIO, "            ")))),
]
