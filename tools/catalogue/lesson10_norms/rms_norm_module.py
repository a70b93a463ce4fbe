"""Lesson 10: answers with known verdicts for the RMSNorm module built on RMSNormFunction (each
entry carries a correct RMSNormFunction, so that it loses only its own exercise): a weight
Parameter of ones named weight, eps=1e-6 by default and None as torch.nn.RMSNorm means it, a
state_dict torch.nn.RMSNorm can load."""

from .. import Mistake, Unusual, edit
from .rms_norm_function import _rms


# eps=None, torch.nn.RMSNorm's meaning: the eps of the dtype it computes in (float32 for
# float16, bfloat16 and float32 inputs, float64 for float64), known only per call
_OPMATH = "torch.finfo(torch.promote_types(x.dtype, torch.float32)).eps"
_EPS = f"        eps = {_OPMATH} if self.eps is None else self.eps\n"
_APPLY = _EPS + ("        if x.dtype in (torch.float16, torch.bfloat16):  # as torch: in float32\n"
                 "            return RMSNormFunction.apply(x.float(), self.weight.float(), "
                 "eps).to(x.dtype)\n"
                 "        return RMSNormFunction.apply(x, self.weight, eps)\n")


def _module(init: str, forward: str = _APPLY, head: str = "dim, eps=1e-6") -> str:
    return (_rms() + "\n\nclass RMSNorm(torch.nn.Module):\n"
            f"    def __init__(self, {head}):\n{init}\n    def forward(self, x):\n{forward}")


_INIT = ("        super().__init__()\n        self.eps = eps\n"
         "        self.weight = torch.nn.Parameter(torch.ones(dim))\n")

# computed in float32 or wider, cast back to x's dtype (torch.nn.RMSNorm's output dtype,
# whatever the weight's): the module that reviews 59b to 59d's answers edit
_WIDE = ("        wide = torch.promote_types(x.dtype, torch.float32)\n"
         "        eps = torch.finfo(wide).eps if self.eps is None else self.eps\n")
_WIDE_APPLY = "        y = RMSNormFunction.apply(x.to(wide), self.weight.to(wide), eps)\n"
_WIDE_MODULE = _module(_INIT, _WIDE + _WIDE_APPLY + "        return y.to(x.dtype)\n")


UNUSUAL = [
    Unusual("RMSNorm", "register_parameter and keyword arguments", _module(
        "        super().__init__()\n        self.eps = eps\n"
        "        self.register_parameter('weight', torch.nn.Parameter(torch.ones(dim)))\n",
        "        eps = self.eps if self.eps is not None else torch.finfo(\n"
        "            torch.float64 if x.dtype == torch.float64 else torch.float32).eps\n"
        "        if x.dtype in (torch.float16, torch.bfloat16):  # in float32, as torch\n"
        "            y = RMSNormFunction.apply(x.float(), self.weight.float(), eps)\n"
        "            return y.to(x.dtype)\n"
        "        return RMSNormFunction.apply(x, self.weight, eps)\n")),
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
        "\n\ndef rms_norm(x, weight, eps=None):\n"
        f"    eps = {_OPMATH} if eps is None else eps\n"
        "    wide = torch.promote_types(x.dtype, torch.float32)  # torch computes half in float32\n"
        "    y = RMSNormFunction.apply(x.to(wide), weight.to(wide), eps)\n"
        "    return y.type_as(x)  # torch.nn.RMSNorm's output takes x's dtype\n"),
    Unusual('RMSNorm', 'a subclass of torch.nn.RMSNorm', '''
class RMSNormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, eps):
        rstd = torch.rsqrt(x.square().mean(-1, keepdim=True) + eps)
        ctx.save_for_backward(x, weight, rstd)
        y = x * rstd
        return y * weight if weight is not None else y

    @staticmethod
    def backward(ctx, grad_output):
        x, weight, rstd = ctx.saved_tensors
        x_hat = x * rstd
        gw = (grad_output * x_hat).reshape(-1, x.shape[-1]).sum(0) if ctx.needs_input_grad[1] else None
        gx = None
        if ctx.needs_input_grad[0]:
            g = grad_output * weight if weight is not None else grad_output
            gx = rstd * (g - x_hat * (g * x_hat).mean(-1, keepdim=True))
        return gx, gw, None


class RMSNorm(torch.nn.RMSNorm):
    """torch.nn.RMSNorm itself, its forward through the Function."""
    def __init__(self, dim, eps=1e-6):
        super().__init__(dim, eps=eps)

    def forward(self, x):
        # eps=None: the eps of the dtype torch computes in (x's, at least float32)
        wide = x.dtype if x.dtype == torch.float64 else torch.float32
        eps = torch.finfo(wide).eps if self.eps is None else self.eps
        if x.dtype in (torch.float16, torch.bfloat16):  # torch computes these in float32
            return RMSNormFunction.apply(x.float(), self.weight.float(), eps).to(x.dtype)
        return RMSNormFunction.apply(x, self.weight, eps)
'''),
    Unusual('RMSNorm', 'eps as a non-persistent buffer, nn.init.ones_', '''
class RMSNormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, eps):
        rstd = torch.rsqrt(x.square().mean(-1, keepdim=True) + eps)
        ctx.save_for_backward(x, weight, rstd)
        y = x * rstd
        return y * weight if weight is not None else y

    @staticmethod
    def backward(ctx, grad_output):
        x, weight, rstd = ctx.saved_tensors
        x_hat = x * rstd
        gw = (grad_output * x_hat).reshape(-1, x.shape[-1]).sum(0) if ctx.needs_input_grad[1] else None
        gx = None
        if ctx.needs_input_grad[0]:
            g = grad_output * weight if weight is not None else grad_output
            gx = rstd * (g - x_hat * (g * x_hat).mean(-1, keepdim=True))
        return gx, gw, None


class RMSNorm(torch.nn.Module):
    # eps kept as a non-persistent buffer, weight through nn.init
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.empty(dim))
        torch.nn.init.ones_(self.weight)
        self.register_buffer("eps", None if eps is None else
                             torch.tensor(eps, dtype=torch.float64), persistent=False)

    def forward(self, x):
        eps = (torch.finfo(torch.promote_types(x.dtype, torch.float32)).eps
               if self.eps is None else self.eps.item())
        if x.dtype in (torch.float16, torch.bfloat16):  # torch computes these in float32
            return RMSNormFunction.apply(x.float(), self.weight.float(), eps).to(x.dtype)
        return RMSNormFunction.apply(x, self.weight, eps)
'''),
]


MISTAKES = [
    # the lesson's solution until the review after issue 69: right wherever x's dtype is at
    # least the weight's; a bfloat16 x in a float32 module (a bfloat16 Linear's output under
    # autocast) comes out float32, where torch.nn.RMSNorm's output takes x's dtype
    Mistake("RMSNorm", "output in the promoted dtype of x and the weight",
            "the output takes x's dtype", edit(_WIDE_MODULE, (
                "        return y.to(x.dtype)\n",
                "        return y.to(torch.promote_types(x.dtype, self.weight.dtype))\n"))),
    # "more precision for the parameter": it loads torch.nn.RMSNorm's state_dict (cast into
    # float64), and every check that calls .to(dtype) first sees nothing wrong
    Mistake("RMSNorm", "weight built in float64", "weight is float64", _module(
        _INIT.replace("torch.ones(dim)", "torch.ones(dim, dtype=torch.float64)"))),
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
    Mistake("RMSNorm", "eps=None resolved in __init__", "which dtype's torch.finfo", _module(
        "        super().__init__()\n"
        "        self.eps = torch.finfo(torch.get_default_dtype()).eps if eps is None else eps\n"
        "        self.weight = torch.nn.Parameter(torch.ones(dim))\n",
        "        return RMSNormFunction.apply(x, self.weight, self.eps)\n")),
    # the review 52's wrong answers: eps=None resolved with `or` (so eps=0.0 is taken for
    # None), taken for the default, and resolved from the weight's dtype
    Mistake("RMSNorm", "eps=0.0 taken for None (self.eps or ...)",
            "RMSNorm(6, eps=0.0) gives another output than torch.nn.RMSNorm(6, eps=0.0)",
            _module(_INIT, "        return RMSNormFunction.apply(x, self.weight, "
                           "self.eps or torch.finfo(x.dtype).eps)\n")),
    Mistake("RMSNorm", "eps=None taken for the default 1e-6", "which dtype's torch.finfo",
            _module(_INIT.replace("self.eps = eps", "self.eps = 1e-6 if eps is None else eps"),
                    "        return RMSNormFunction.apply(x, self.weight, self.eps)\n")),
    Mistake("RMSNorm", "eps=None resolved from the weight's dtype", "which dtype's torch.finfo",
            _module(_INIT, "        eps = torch.finfo(self.weight.dtype).eps if self.eps is None "
                           "else self.eps\n        return RMSNormFunction.apply(x, self.weight, "
                           "eps)\n")),
    Mistake("RMSNorm", "eps=None passed on to the Function", "takes eps=None too", _module(
        _INIT, "        return RMSNormFunction.apply(x, self.weight, self.eps)\n")),
    # the review's W12: float(eps) to make sure eps is a number; the hint quotes the
    # learner's TypeError and line, no signature guessed
    Mistake("RMSNorm", "eps coerced with float() in __init__",
            "RMSNorm(6, eps=None) raised TypeError at `self.eps = float(eps)`", _module(
                _INIT.replace("self.eps = eps", "self.eps = float(eps)"))),
    Mistake("RMSNorm", "default eps 1e-5", "does not use eps=1e-6 by default",
            _module(_INIT, head="dim, eps=1e-5"), named=True),
    Mistake("RMSNorm", "weight passed as .data", "received no gradient", _module(
        _INIT, "        return RMSNormFunction.apply(x, self.weight.data, self.eps)\n"),
        named=True),
    Mistake("RMSNorm", "super().__init__() not called", "before calling super().__init__()",
            _module("        self.eps = eps\n"
                    "        self.weight = torch.nn.Parameter(torch.ones(dim))\n")),
    Mistake('RMSNorm', 'weight created with requires_grad=False', 'does not require grad', '''
class RMSNormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, eps):
        rstd = torch.rsqrt(x.square().mean(-1, keepdim=True) + eps)
        ctx.save_for_backward(x, weight, rstd)
        y = x * rstd
        return y * weight if weight is not None else y

    @staticmethod
    def backward(ctx, grad_output):
        x, weight, rstd = ctx.saved_tensors
        x_hat = x * rstd
        gw = (grad_output * x_hat).reshape(-1, x.shape[-1]).sum(0) if ctx.needs_input_grad[1] else None
        gx = None
        if ctx.needs_input_grad[0]:
            g = grad_output * weight if weight is not None else grad_output
            gx = rstd * (g - x_hat * (g * x_hat).mean(-1, keepdim=True))
        return gx, gw, None


class RMSNorm(torch.nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = torch.nn.Parameter(torch.ones(dim), requires_grad=False)

    def forward(self, x):
        return RMSNormFunction.apply(x, self.weight, self.eps)
'''),
    Mistake('RMSNorm', 'the Function returns None for the weight',
            "fix RMSNormFunction first, then check RMSNorm again (RMSNormFunction's hint: "
            "backward returned None for weight", '''
class RMSNormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, eps):
        rstd = torch.rsqrt(x.square().mean(-1, keepdim=True) + eps)
        ctx.save_for_backward(x, weight, rstd)
        y = x * rstd
        return y * weight if weight is not None else y

    @staticmethod
    def backward(ctx, grad_output):
        x, weight, rstd = ctx.saved_tensors
        x_hat = x * rstd
        gw = (grad_output * x_hat).reshape(-1, x.shape[-1]).sum(0) if ctx.needs_input_grad[1] else None
        gx = None
        if ctx.needs_input_grad[0]:
            g = grad_output * weight if weight is not None else grad_output
            gx = rstd * (g - x_hat * (g * x_hat).mean(-1, keepdim=True))
        return gx, None, None


class RMSNorm(torch.nn.Module):
    # rows flattened before the Function, the parameter cast to x's dtype on the way
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.dim, self.eps = dim, eps
        self.weight = torch.nn.Parameter(torch.ones(dim))

    def forward(self, x):
        out = RMSNormFunction.apply(x.reshape(-1, self.dim), self.weight * 1.0, self.eps)
        return out.reshape(x.shape)
'''),
    Mistake("RMSNorm", "eps the third parameter of __init__",
            "the second positional argument of __init__ must be eps",
            _module(_INIT, head="dim, elementwise_affine=True, eps=1e-6")),
    Mistake("RMSNorm", "forward in float64 whatever x's dtype", "keep the input's dtype",
            _module(_INIT, "        return RMSNormFunction.apply(x.double(), "
                           "self.weight.double(), self.eps)\n")),
    Mistake("RMSNorm", "x cast to the weight's dtype", "should have dtype torch.float64",
            _module(_INIT, "        return RMSNormFunction.apply(x.to(self.weight.dtype), "
                           "self.weight, self.eps)\n")),
    Mistake("RMSNorm", "eps kept on the class", "where does each module keep its eps", _module(
        "        super().__init__()\n        type(self).eps_cls = eps\n"
        "        self.weight = torch.nn.Parameter(torch.ones(dim))\n",
        "        return RMSNormFunction.apply(x, self.weight, type(self).eps_cls)\n")),
    # the module right, the Function it calls wrong: the first line says where the failure is
    Mistake("RMSNorm", "RMSNormFunction without its projection term",
            "fails through the RMSNormFunction it calls", '''
class RMSNormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, eps):
        rstd = torch.rsqrt(x.square().mean(-1, keepdim=True) + eps)
        ctx.save_for_backward(x, weight, rstd)
        y = x * rstd
        return y * weight if weight is not None else y

    @staticmethod
    def backward(ctx, grad_output):
        x, weight, rstd = ctx.saved_tensors
        grad_x = grad_weight = None
        if ctx.needs_input_grad[1]:
            grad_weight = (grad_output * x * rstd).reshape(-1, x.shape[-1]).sum(0)
        if ctx.needs_input_grad[0]:
            g = grad_output * weight if weight is not None else grad_output
            grad_x = rstd * g  # the projection term left out
        return grad_x, grad_weight, None


class RMSNorm(torch.nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = torch.nn.Parameter(torch.ones(dim))

    def forward(self, x):
        wide = torch.promote_types(x.dtype, torch.float32)
        y = RMSNormFunction.apply(x.to(wide), self.weight.to(wide), self.eps)
        return y.to(x.dtype)
'''),
]
