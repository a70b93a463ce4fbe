"""Lesson 10: answers with known verdicts for RMSNormFunction and the RMSNorm module built
on it (each RMSNorm entry carries a correct RMSNormFunction, so that it loses only its own
exercise)."""

from .. import Mistake, Unusual

# ---------------------------------------------------------------------------- RMSNormFunction
_RMS_FORWARD = '''
    @staticmethod
    def forward(ctx, x, weight, eps):
        rstd = torch.rsqrt(x.square().mean(-1, keepdim=True) + eps)
        y = x * rstd
        if weight is not None:
            y = y * weight
        ctx.save_for_backward(x, weight, rstd)
        return y
'''

_RMS_BACKWARD = '''
    @staticmethod
    def backward(ctx, grad_output):
        x, weight, rstd = ctx.saved_tensors
        grad_x = grad_weight = None
        x_hat = x * rstd
        if ctx.needs_input_grad[1]:
            grad_weight = (grad_output * x_hat).reshape(-1, x.shape[-1]).sum(0)
        if ctx.needs_input_grad[0]:
            g = grad_output * weight if weight is not None else grad_output
            grad_x = rstd * (g - x_hat * (g * x_hat).mean(-1, keepdim=True))
        return grad_x, grad_weight, None
'''


def _rms(backward: str = _RMS_BACKWARD, forward: str = _RMS_FORWARD) -> str:
    return f"class RMSNormFunction(torch.autograd.Function):\n{forward}\n{backward}"


def _rms_grad_x(line: str) -> str:
    return _rms('''
    @staticmethod
    def backward(ctx, grad_output):
        x, weight, rstd = ctx.saved_tensors
        grad_x = grad_weight = None
        x_hat = x * rstd
        if ctx.needs_input_grad[1]:
            grad_weight = (grad_output * x_hat).reshape(-1, x.shape[-1]).sum(0)
        if ctx.needs_input_grad[0]:
            g = grad_output * weight if weight is not None else grad_output
''' + line + "        return grad_x, grad_weight, None\n")


# ------------------------------------------------------------------------------------ RMSNorm
def _module(init: str, forward: str = "        return RMSNormFunction.apply(x, self.weight, "
                                       "self.eps)\n", head: str = "dim, eps=1e-6") -> str:
    return (_rms() + "\n\nclass RMSNorm(torch.nn.Module):\n"
            f"    def __init__(self, {head}):\n{init}\n    def forward(self, x):\n{forward}")


_INIT = ("        super().__init__()\n        self.eps = eps\n"
         "        self.weight = torch.nn.Parameter(torch.ones(dim))\n")

UNUSUAL = [
    Unusual("RMSNormFunction", "saves the rms, divides by it", _rms('''
    @staticmethod
    def backward(ctx, grad_output):
        x, weight, rms = ctx.saved_tensors
        grad_x = grad_weight = None
        if ctx.needs_input_grad[1]:
            grad_weight = (grad_output * x / rms).reshape(-1, x.shape[-1]).sum(0)
        if ctx.needs_input_grad[0]:
            g = grad_output if weight is None else grad_output * weight
            grad_x = g / rms - x * (g * x).mean(-1, keepdim=True) / rms ** 3
        return grad_x, grad_weight, None
''', '''
    @staticmethod
    def forward(ctx, x, weight, eps):
        rms = torch.sqrt(torch.mean(x * x, dim=-1, keepdim=True) + eps)
        ctx.save_for_backward(x, weight, rms)
        return x / rms * weight if weight is not None else x / rms
''')),
    Unusual("RMSNormFunction", "einsum and a sum over a tuple of leading dims", _rms('''
    @staticmethod
    def backward(ctx, grad_output):
        x, weight, rstd = ctx.saved_tensors
        grad_x = grad_weight = None
        x_hat = x * rstd
        if ctx.needs_input_grad[1]:
            leading = tuple(range(x.dim() - 1))
            product = grad_output * x_hat
            grad_weight = product.sum(dim=leading) if leading else product
        if ctx.needs_input_grad[0]:
            g = grad_output * weight if weight is not None else grad_output
            dot = torch.einsum("...d,...d->...", g, x_hat).unsqueeze(-1) / x.shape[-1]
            grad_x = rstd * (g - x_hat * dot)
        return grad_x, grad_weight, None
''')),
    Unusual("RMSNormFunction", "pow(-0.5) and rstd saved as (...,) without keepdim", _rms('''
    @staticmethod
    def backward(ctx, grad_output):
        x, weight, rstd = ctx.saved_tensors
        r = rstd.unsqueeze(-1)
        grad_weight = grad_x = None
        if ctx.needs_input_grad[0]:
            g = grad_output if weight is None else weight * grad_output
            grad_x = r * g - x * r.pow(3) * (g * x).mean(-1, keepdim=True)
        if ctx.needs_input_grad[1]:
            grad_weight = (grad_output * x * r).flatten(0, -2).sum(0) if x.dim() > 1 \\
                else grad_output * x * r
        return grad_x, grad_weight, None
''', '''
    @staticmethod
    def forward(ctx, x, weight, eps):
        rstd = (x.pow(2).mean(-1) + eps).pow(-0.5)
        ctx.save_for_backward(x, weight, rstd)
        y = x * rstd.unsqueeze(-1)
        return y if weight is None else weight * y
''')),
    Unusual("RMSNorm", "register_parameter and keyword arguments", _module(
        "        super().__init__()\n        self.eps = eps\n"
        "        self.register_parameter('weight', torch.nn.Parameter(torch.ones(dim)))\n",
        "        return RMSNormFunction.apply(x, self.weight, self.eps)\n")),
    Unusual("RMSNorm", "factory kwargs and reset_parameters, as torch's own modules", _module(
        "        super().__init__()\n        self.normalized_shape = (dim,)\n"
        "        self.eps = eps\n"
        "        self.weight = torch.nn.Parameter(torch.empty(dim, device=device, "
        "dtype=dtype))\n        self.reset_parameters()\n\n"
        "    def reset_parameters(self):\n        torch.nn.init.ones_(self.weight)\n\n"
        "    def extra_repr(self):\n        return f'{self.normalized_shape}, eps={self.eps}'\n",
        head="dim, eps=1e-6, device=None, dtype=None")),
    Unusual("RMSNorm", "a module-level function between the module and the Function", _module(
        _INIT, "        return rms_norm(x, self.weight, self.eps)\n") +
        "\n\ndef rms_norm(x, weight, eps):\n    return RMSNormFunction.apply(x, weight, eps)\n"),
]

MISTAKES = [
    Mistake("RMSNormFunction", "no projection term", "misses the projection term",
            _rms_grad_x("            grad_x = rstd * g\n"), named=True),
    Mistake("RMSNormFunction", "LayerNorm's mean term as well", "subtracts a mean term",
            _rms_grad_x("            grad_x = rstd * (g - g.mean(-1, keepdim=True) - x_hat * "
                        "(g * x_hat).mean(-1, keepdim=True))\n"), named=True),
    Mistake("RMSNormFunction", "grad_x ignores the weight", "ignores the weight",
            _rms_grad_x("            g = grad_output\n"
                        "            grad_x = rstd * (g - x_hat * (g * x_hat).mean(-1, "
                        "keepdim=True))\n")),
    Mistake("RMSNormFunction", "weight gradient not summed", "returned grad_weight of shape",
            _rms(_RMS_BACKWARD.replace("(grad_output * x_hat).reshape(-1, x.shape[-1]).sum(0)",
                                       "grad_output * x_hat")), named=True),
    Mistake("RMSNormFunction", "weight gradient computed whatever needs_input_grad says",
            "does as much work when only", _rms(_RMS_BACKWARD.replace(
                "        if ctx.needs_input_grad[1]:\n            grad_weight = ",
                "        full = ").replace(
                "        if ctx.needs_input_grad[0]:",
                "        grad_weight = full if ctx.needs_input_grad[1] else None\n"
                "        if ctx.needs_input_grad[0]:")), named=True, nbgrader=True),
    Mistake("RMSNormFunction", "saves the normalised x too", "saved 2 full-size", _rms(
        _RMS_BACKWARD.replace("x, weight, rstd = ctx.saved_tensors",
                              "x, x_hat, weight, rstd = ctx.saved_tensors")
        .replace("        x_hat = x * rstd\n", ""),
        _RMS_FORWARD.replace("ctx.save_for_backward(x, weight, rstd)",
                             "ctx.save_for_backward(x, x * rstd, weight, rstd)")), named=True),
    Mistake("RMSNormFunction", "eps ignored", "ignores its eps argument", _rms(forward='''
    @staticmethod
    def forward(ctx, x, weight, eps):
        rstd = torch.rsqrt(x.square().mean(-1, keepdim=True) + 1e-6)
        y = x * rstd
        if weight is not None:
            y = y * weight
        ctx.save_for_backward(x, weight, rstd)
        return y
''')),
    Mistake("RMSNorm", "forward calls F.rms_norm", "does not call RMSNormFunction.apply",
            _module(_INIT, "        return F.rms_norm(x, x.shape[-1:], self.weight, self.eps)\n"),
            named=True, nbgrader=True),
    Mistake("RMSNorm", "weight a plain tensor", "its weight is a plain tensor", _module(
        "        super().__init__()\n        self.eps = eps\n"
        "        self.weight = torch.ones(dim)\n"), named=True),
    Mistake("RMSNorm", "parameter named scale", "named weight", _module(
        "        super().__init__()\n        self.eps = eps\n"
        "        self.scale = torch.nn.Parameter(torch.ones(dim))\n",
        "        return RMSNormFunction.apply(x, self.scale, self.eps)\n"), named=True),
    Mistake("RMSNorm", "weight starts random", "does not start as ones", _module(
        "        super().__init__()\n        self.eps = eps\n"
        "        self.weight = torch.nn.Parameter(torch.randn(dim))\n")),
    Mistake("RMSNorm", "eps kept as a buffer", "cannot load torch.nn.RMSNorm's state_dict",
            _module("        super().__init__()\n"
                    "        self.register_buffer('eps', torch.tensor(eps))\n"
                    "        self.weight = torch.nn.Parameter(torch.ones(dim))\n",
                    "        return RMSNormFunction.apply(x, self.weight, self.eps.item())\n"),
            named=True),
    Mistake("RMSNorm", "default eps 1e-5", "does not use eps=1e-6 by default",
            _module(_INIT, head="dim, eps=1e-5"), named=True),
    Mistake("RMSNorm", "weight passed as .data", "received no gradient", _module(
        _INIT, "        return RMSNormFunction.apply(x, self.weight.data, self.eps)\n"),
        named=True),
    Mistake("RMSNorm", "super().__init__() not called", "before calling super().__init__()",
            _module("        self.eps = eps\n"
                    "        self.weight = torch.nn.Parameter(torch.ones(dim))\n")),
]
