"""Lesson 12's answer builders: for GradientReversal and ClipGradientNorm, two Functions whose
forward is the identity, a forward that keeps its constant on ctx and returns a view of x, the
backward body each entry writes, and the row norms ClipGradientNorm clips by; then the answers
other entries are written as edits of (a clipping answer, BrokenSoftThreshold, ...)."""

from .. import edit


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


# answers written as edits of one another (found in review rounds 53 to 56), shared by the
# exercise modules


# the lesson's former BrokenSoftThreshold (review 55's node-by-node form; the debugging
# section now breaks a Swish instead, issue: its mended lines were Exercise 3's backward), renamed
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
        needs_x, needs_lam = ctx.needs_input_grad
        grad_x = grad_lam = None
        if needs_x:
            grad_x = grad_shifted * torch.sign(x)
        if needs_lam:
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


def _clip_slack(factor: str) -> str:
    return edit(_CLIP, (_CLIP_RIGHT, f"        return torch.where(norms > m * {factor}, "
                                     "grad_output * (m / norms), grad_output), None\n"))


def _ps_slack(factor: str) -> str:
    return edit(_PS, (_PS_RIGHT, f"            f = torch.where(norms > m * {factor}, m / norms, "
                                 "torch.ones_like(norms))\n"
                                 "            grad_weight = (grad_output * f[:, None]).T @ x\n"))


def _chunks(k: int) -> str:
    return edit(_PS, (_PS_RIGHT, "            xs = x * (m / norms).clamp(max=1)[:, None]\n"
                                 "            grad_weight = x.new_zeros(weight.shape)\n"
                                 f"            for g_c, x_c in zip(grad_output.split({k}), xs.split({k})):\n"
                                 "                grad_weight = grad_weight + g_c.T @ x_c\n"))


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
        return gx if ctx.needs_input_grad[0] else None, gl
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
        p = g * (s != 0) if ctx.needs_input_grad[0] else None
        return p, -(g * s).sum() if ctx.needs_input_grad[1] else None
'''
