"""Lesson 12: answers with known verdicts for GradientReversal, ClipGradientNorm and
SoftThreshold."""

from . import Mistake, Unusual

_IDENTITY = '''
    @staticmethod
    def forward(ctx, x, {constant}):
        ctx.{constant} = {constant}
        return x.view_as(x)
'''


def _surgery(name: str, constant: str, backward_body: str, forward: str | None = None) -> str:
    forward = forward or _IDENTITY.format(constant=constant)
    return (f"class {name}(torch.autograd.Function):\n{forward}\n    @staticmethod\n"
            f"    def backward(ctx, grad_output):\n{backward_body}")


def _reversal(backward_body: str, forward: str | None = None) -> str:
    return _surgery("GradientReversal", "alpha", backward_body, forward)


def _clip(backward_body: str, forward: str | None = None) -> str:
    return _surgery("ClipGradientNorm", "max_norm", backward_body, forward)


_NORMS = "        norms = torch.linalg.vector_norm(grad_output, dim=-1, keepdim=True)\n"

_SOFT_FORWARD = '''
    @staticmethod
    def forward(ctx, x, lam):
        ctx.save_for_backward(x, lam)
        return torch.sign(x) * torch.relu(x.abs() - lam)
'''


def _soft(backward_body: str, forward: str = _SOFT_FORWARD) -> str:
    return ("class SoftThreshold(torch.autograd.Function):\n" + forward +
            "\n    @staticmethod\n    def backward(ctx, grad_output):\n" + backward_body)


def _soft_saved(body: str) -> str:
    return _soft("        x, lam = ctx.saved_tensors\n" + body)


UNUSUAL = [
    Unusual("GradientReversal", "a copy, and neg() times alpha", _reversal(
        "        return grad_output.neg() * ctx.alpha, None\n", forward='''
    @staticmethod
    def forward(ctx, x, alpha):
        ctx.alpha = float(alpha)
        return x.clone()
''')),
    Unusual("GradientReversal", "x + 0 and torch.mul", _reversal(
        "        return torch.mul(grad_output, -ctx.alpha), None\n", forward='''
    @staticmethod
    def forward(ctx, x, alpha):
        ctx.alpha = alpha
        return x + 0
''')),
    Unusual("GradientReversal", "alpha in a dict, materialisation off", _reversal(
        "        if grad_output is None:\n            return None, None\n"
        "        return -(ctx.settings['alpha'] * grad_output), None\n", forward='''
    @staticmethod
    def forward(ctx, x, alpha):
        ctx.set_materialize_grads(False)
        ctx.settings = {"alpha": alpha}
        return x.view_as(x)
''')),
    Unusual("GradientReversal", "DANN's ReverseLayerF (fungtion/DANN), forward returning x itself",
            _reversal("        output = grad_output.neg() * ctx.alpha\n        return output, None\n",
                      forward='''
    @staticmethod
    def forward(ctx, x, alpha):
        ctx.alpha = alpha
        return x
''')),
    Unusual("ClipGradientNorm", "divided by max(1, norm / max_norm), as a public norm_grad hook",
            _clip("        norm = grad_output.norm(p=2, dim=-1, keepdim=True)\n"
                  "        return grad_output / (norm / ctx.max_norm).clamp(min=1), None\n")),
    Unusual("ClipGradientNorm", "torch.where", _clip(
        _NORMS + "        scaled = grad_output * (ctx.max_norm / norms)\n"
        "        return torch.where(norms > ctx.max_norm, scaled, grad_output), None\n")),
    Unusual("ClipGradientNorm", "divide by the norm clamped from below", _clip(
        "        norms = grad_output.norm(dim=-1, keepdim=True)\n"
        "        return grad_output * ctx.max_norm / norms.clamp(min=ctx.max_norm), None\n",
        forward='''
    @staticmethod
    def forward(ctx, x, max_norm):
        ctx.max_norm = max_norm
        return x.clone()
''')),
    Unusual("ClipGradientNorm", "torch.minimum with ones", _clip(
        _NORMS + "        scale = torch.minimum(torch.ones_like(norms), ctx.max_norm / norms)\n"
        "        return scale * grad_output, None\n")),
    Unusual("ClipGradientNorm", "renorm over flattened rows", _clip(
        "        rows = grad_output.reshape(-1, grad_output.shape[-1])\n"
        "        return rows.renorm(2, 0, ctx.max_norm).reshape(grad_output.shape), None\n")),
    Unusual("SoftThreshold", "saves the output only", _soft('''        y, = ctx.saved_tensors
        outside = y != 0
        grad_x = grad_output * outside
        return grad_x, -(grad_x * torch.sign(y)).sum()
''', forward='''
    @staticmethod
    def forward(ctx, x, lam):
        y = torch.sign(x) * torch.clamp(x.abs() - lam, min=0)
        ctx.save_for_backward(y)
        return y
''')),
    Unusual("SoftThreshold", "saves x and lam, lam's sum only when needed", _soft_saved(
        "        passed = grad_output * (x.abs() > lam)\n"
        "        grad_lam = None\n        if ctx.needs_input_grad[1]:\n"
        "            grad_lam = -(passed * torch.sign(x)).sum()\n"
        "        return passed, grad_lam\n")),
    Unusual("SoftThreshold", "torch.where pieces", _soft('''        x, lam = ctx.saved_tensors
        above, below = x > lam, x < -lam
        zero = torch.zeros_like(grad_output)
        grad_x = torch.where(above | below, grad_output, zero)
        grad_lam = torch.where(below, grad_output, zero).sum() - \\
            torch.where(above, grad_output, zero).sum()
        return grad_x, grad_lam
''', forward='''
    @staticmethod
    def forward(ctx, x, lam):
        ctx.save_for_backward(x, lam)
        zero = torch.zeros_like(x)
        return torch.where(x > lam, x - lam, torch.where(x < -lam, x + lam, zero))
''')),
    Unusual("SoftThreshold", "a saved signed mask, reshaped to lam", _soft('''        direction, lam = ctx.saved_tensors
        grad_x = grad_output * direction.abs()
        grad_lam = None
        if ctx.needs_input_grad[1]:
            grad_lam = -(grad_output * direction).sum().reshape(lam.shape)
        return grad_x, grad_lam
''', forward='''
    @staticmethod
    def forward(ctx, x, lam):
        direction = torch.sign(x) * (x.abs() > lam)
        ctx.save_for_backward(direction, lam)
        return direction * (x.abs() - lam)
''')),
    Unusual("GradientReversal", "setup_context, forward without ctx", _reversal(
        "        return grad_output * -ctx.alpha, None\n", forward='''
    @staticmethod
    def forward(x, alpha):
        return x[...]

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.alpha = inputs[1]
''')),
    Unusual("ClipGradientNorm", "F.normalize times the clamped norm", _clip(
        _NORMS + "        return F.normalize(grad_output, dim=-1) * norms.clamp(max=ctx.max_norm), "
        "None\n")),
    Unusual("SoftThreshold", "F.softshrink(x, lam.item()) forward, bool mask and int8 sign saved",
            _soft('''        outside, sign = ctx.saved_tensors
        grad_x = grad_output * outside
        return grad_x, -(grad_x * sign).sum()
''', forward='''
    @staticmethod
    def forward(ctx, x, lam):
        ctx.save_for_backward(x.abs() > lam, torch.sign(x).to(torch.int8))
        return F.softshrink(x, lam.item())
''')),
    Unusual("SoftThreshold", "the broken version, its sign fixed and nan_to_num over relu(z) / z",
            _soft_saved("        shifted = x.abs() - lam\n"
                        "        slope = torch.nan_to_num(torch.relu(shifted) / shifted)\n"
                        "        return grad_output * slope, "
                        "-(grad_output * slope * torch.sign(x)).sum()\n")),
]

MISTAKES = [
    Mistake("GradientReversal", "alpha forgotten",
            "forgets alpha: with alpha=0.5 its gradient for x is grad_output times -1, the same",
            _reversal("        return -grad_output, None\n"), named=True, nbgrader=True),
    Mistake("GradientReversal", "sign forgotten",
            "forgets the sign: with alpha=0.5 its gradient for x is grad_output times 0.5,",
            _reversal("        return ctx.alpha * grad_output, None\n"), named=True),
    Mistake("GradientReversal", "the size of alpha, not alpha",
            "returns grad_output times -0.75, the expected gradient times -1, for alpha=-0.75",
            _reversal("        return -abs(ctx.alpha) * grad_output, None\n")),
    Mistake("GradientReversal", "no reversal at all",
            "passes grad_output through unchanged: with alpha=0.5 its gradient for x is "
            "grad_output times 1,", _reversal("        return grad_output, None\n"), named=True),
    Mistake("GradientReversal", "grad_output left out",
            "ignores grad_output: with alpha=0.5 every element of its gradient for x is -0.5,",
            _reversal("        return torch.full_like(grad_output, -ctx.alpha), None\n")),
    Mistake("GradientReversal", "grad_output negated in place", "modified grad_output in place",
            _reversal("        return grad_output.mul_(-ctx.alpha), None\n"), named=True),
    Mistake("GradientReversal", "a gradient for alpha", "return None for alpha",
            _reversal("        return -ctx.alpha * grad_output, -grad_output.sum()\n"),
            named=True),
    Mistake("GradientReversal", "negative alpha dropped", "returns 0 for alpha=-0.75", _reversal(
        "        return -ctx.alpha * grad_output, None\n", forward='''
    @staticmethod
    def forward(ctx, x, alpha):
        ctx.alpha = max(alpha, 0.0)
        return x.view_as(x)
''')),
    Mistake("GradientReversal", "alpha kept as a tensor on ctx", "keeps a tensor on ctx (ctx.alpha)",
            _reversal("        return -ctx.alpha * grad_output, None\n", forward='''
    @staticmethod
    def forward(ctx, x, alpha):
        ctx.alpha = torch.tensor(alpha, dtype=x.dtype, device=x.device)
        return x.view_as(x)
''')),
    Mistake("GradientReversal", "saves x", "saved input x", _reversal(
        "        x, = ctx.saved_tensors\n        return -ctx.alpha * grad_output, None\n",
        forward='''
    @staticmethod
    def forward(ctx, x, alpha):
        ctx.alpha = alpha
        ctx.save_for_backward(x)
        return x.view_as(x)
'''), named=True),
    Mistake("ClipGradientNorm", "global norm, as clip_grad_norm_",
            "clips by the norm of the whole gradient", _clip(
                "        total = torch.linalg.vector_norm(grad_output)\n"
                "        return grad_output * (ctx.max_norm / total).clamp(max=1), None\n"),
            named=True, nbgrader=True),
    Mistake("ClipGradientNorm", "factor ignores max_norm", "clips rows at norm 1 whatever max_norm",
            _clip(_NORMS + "        return grad_output * (1 / norms).clamp(max=1), None\n"),
            named=True),
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
    Mistake("SoftThreshold", "lam's gradient gated on needs_input_grad[0]",
            "entry 1 belongs to lam", _soft_saved(
                "        passed = grad_output * (x.abs() > lam)\n"
                "        grad_lam = -(passed * torch.sign(x)).sum() if ctx.needs_input_grad[0] "
                "else None\n        return passed, grad_lam\n")),
    Mistake("SoftThreshold", "gradient 1 at |x| == lam", "is not 0 at |x| == lam", _soft_saved(
        "        passed = grad_output * (x.abs() >= lam)\n"
        "        return passed, -(passed * torch.sign(x)).sum()\n"), named=True, nbgrader=True),
    Mistake("SoftThreshold", "lam's gradient alone counts the kink",
            "gradient for lam counts the entries at |x| == lam", _soft_saved(
                "        passed = grad_output * (x.abs() > lam)\n"
                "        return passed, -(grad_output * torch.sign(x) * (x.abs() >= lam)).sum()\n")),
    Mistake("SoftThreshold", "lam's gradient with the wrong sign",
            "gradient for lam has the wrong sign", _soft_saved(
                "        passed = grad_output * (x.abs() > lam)\n"
                "        return passed, (passed * torch.sign(x)).sum()\n"),
            named=True),
    Mistake("SoftThreshold", "lam's gradient not summed", "sum it to lam's shape", _soft_saved(
        "        passed = grad_output * (x.abs() > lam)\n"
        "        return passed, -passed * torch.sign(x)\n"), named=True),
    Mistake("SoftThreshold", "lam's gradient averaged", "gradient for lam is 1/", _soft_saved(
        "        passed = grad_output * (x.abs() > lam)\n"
        "        return passed, -(passed * torch.sign(x)).mean()\n")),
    Mistake("SoftThreshold", "lam's gradient summed to shape (1,)", "return a 0-d tensor",
            _soft_saved("        passed = grad_output * (x.abs() > lam)\n"
                        "        return passed, -(passed * torch.sign(x)).sum().reshape(1)\n")),
    Mistake("SoftThreshold", "relu(z) / z as the slope", "nan at |x| == lam", _soft_saved(
        "        shifted = x.abs() - lam\n        slope = torch.relu(shifted) / shifted\n"
        "        return grad_output * slope, -(grad_output * slope * torch.sign(x)).sum()\n"),
        named=True),
    Mistake("SoftThreshold", "grad_output masked in place", "modified grad_output in place",
            _soft_saved("        passed = grad_output.mul_(x.abs() > lam)\n"
                        "        return passed, -(passed * torch.sign(x)).sum()\n"), named=True),
    Mistake("SoftThreshold", "lam kept on ctx", "stores a tensor as ctx.lam", _soft('''        x, = ctx.saved_tensors
        passed = grad_output * (x.abs() > ctx.lam)
        return passed, -(passed * torch.sign(x)).sum()
''', forward='''
    @staticmethod
    def forward(ctx, x, lam):
        ctx.save_for_backward(x)
        ctx.lam = lam
        return torch.sign(x) * torch.relu(x.abs() - lam)
'''), named=True),
    Mistake("GradientReversal", "alpha kept on the class (issue 37)",
            "GradientReversal.forward sets GradientReversal.alpha: a class attribute is shared",
            _reversal("        return -GradientReversal.alpha * grad_output, None\n", forward='''
    @staticmethod
    def forward(ctx, x, alpha):
        GradientReversal.alpha = alpha
        return x.view_as(x)
''')),
    Mistake("ClipGradientNorm", "max_norm kept on the class (issue 37)",
            "ClipGradientNorm.forward sets ClipGradientNorm.max_norm: a class attribute is shared",
            _clip(_NORMS + "        scale = (ClipGradientNorm.max_norm / norms).clamp(max=1)\n"
                  "        return grad_output * scale, None\n", forward='''
    @staticmethod
    def forward(ctx, x, max_norm):
        ClipGradientNorm.max_norm = max_norm
        return x.view_as(x)
''')),
    Mistake("SoftThreshold", "lam's gradient without sign(x) (issue 37)",
            "gradient for lam is -4, -1 for each entry outside the threshold, where the right "
            "value is -2", _soft_saved(
                "        passed = grad_output * (x.abs() > lam)\n"
                "        return passed, -passed.sum()\n")),
    Mistake("SoftThreshold", "lam's gradient without the mask (issue 37)",
            "gradient for lam is -1, -sum(sign(x)) over every entry, where the right value is -2",
            _soft_saved(
                "        passed = grad_output * (x.abs() > lam)\n"
                "        return passed, -(grad_output * torch.sign(x)).sum()\n")),
    Mistake("SoftThreshold", "autograd inside backward", "write the gradient formula by hand",
            _soft_saved('''        with torch.enable_grad():
            x, lam = x.detach().requires_grad_(), lam.detach().requires_grad_()
            y = torch.sign(x) * torch.relu(x.abs() - lam)
            return torch.autograd.grad(y, (x, lam), grad_output)
'''), named=True),
]
