"""Lesson 10: the RMSNorm module's dtypes: half inputs computed in float32 (or float64) and
rounded once, as torch.nn.RMSNorm does, against the slips: a float16 x squared in float16, a
half row rounded twice, outputs left in float32, a half weight detached or cast through
float16, a float32 weight rounded to a half x's dtype, a float64 x computed in a float32
weight's dtype, half inputs sent to F.rms_norm."""

from .. import Mistake, Unusual, edit
from .rms_norm_function import _rms
from .rms_norm_module import _APPLY, _INIT as _RMS_NORM_MODULE_INIT, _WIDE_APPLY, _WIDE_MODULE, _WIDE_MODULE as _RIGHT, _module

_INIT = ('''
class RMSNorm(torch.nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = torch.nn.Parameter(torch.ones(dim))

    def forward(self, x):
''')

_OPMATH = "torch.finfo(torch.promote_types(x.dtype, torch.float32)).eps"

_HALF_IN_FLOAT32 = _rms() + _INIT + f'''        eps = {_OPMATH} if self.eps is None else self.eps
        if x.dtype in (torch.float16, torch.bfloat16):  # as torch: float32 inside
            return RMSNormFunction.apply(x.float(), self.weight.float(), eps).to(x.dtype)
        return RMSNormFunction.apply(x, self.weight, eps)
'''

_U2 = '''from torch import nn

class RMSNormFunction(torch.autograd.Function):
    """rstd from vector_norm; grad_x as rstd*(gh) - x * rstd^3 * <gh, x>/D."""
    @staticmethod
    def forward(ctx, x, weight, eps):
        D = x.shape[-1]
        ms = torch.linalg.vector_norm(x, dim=-1, keepdim=True).square() / D
        rstd = (ms + eps).rsqrt()
        ctx.save_for_backward(x, weight, rstd)
        y = x * rstd
        return y if weight is None else y * weight

    @staticmethod
    def backward(ctx, g):
        x, weight, rstd = ctx.saved_tensors
        nx, nw = ctx.needs_input_grad[:2]
        gx = gw = None
        if nw:
            gw = torch.einsum('...d,...d,...->d', g, x, rstd.squeeze(-1))
        if nx:
            gh = g if weight is None else g * weight
            dot = (gh * x).sum(-1, keepdim=True) / x.shape[-1]
            gx = rstd * gh - x * (rstd ** 3 * dot)
        return gx, gw, None

class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.normalized_shape = (dim,)
        self.eps = eps
        self.register_parameter("weight", nn.Parameter(torch.empty(dim)))
        nn.init.ones_(self.weight)

    def forward(self, x):
        compute = x.dtype if x.dtype in (torch.float32, torch.float64) else torch.float32
        if self.weight.dtype in (torch.float32, torch.float64):
            compute = torch.promote_types(compute, self.weight.dtype)
        eps = self.eps if self.eps is not None else torch.finfo(compute).eps
        out = RMSNormFunction.apply(x.to(compute), self.weight.to(compute), eps)
        return out.to(x.dtype)  # torch.nn.RMSNorm's output takes x's dtype
'''

_HALF_BRANCH = ("        if x.dtype in (torch.float16, torch.bfloat16):  # as torch: in float32\n"
                "            return RMSNormFunction.apply(x.float(), self.weight.float(), "
                "eps).to(x.dtype)\n")


UNUSUAL = [
    Unusual("RMSNorm", "a half x computed in float32 by .float(), the output cast back",
            _HALF_IN_FLOAT32),
    Unusual("RMSNorm", "computed in x's dtype promoted with the weight's, register_parameter "
            "and nn.init.ones_", _U2),
    # more accurate than torch.nn.RMSNorm for float32 inputs; ✎ 3 states no memory rule
    Unusual("RMSNorm", "every input computed in float64, the output cast back", edit(
        _RIGHT, ("RMSNormFunction.apply(x.to(wide), self.weight.to(wide), eps)",
                 "RMSNormFunction.apply(x.double(), self.weight.double(), eps)"))),
    Unusual("RMSNorm", "half inputs computed in float64, rounded once at the end", edit(
        _RIGHT, ("RMSNormFunction.apply(x.to(wide), self.weight.to(wide), eps)",
                 "RMSNormFunction.apply(x.to(torch.float64 if x.dtype in (torch.float16, "
                 "torch.bfloat16) else wide), self.weight.to(torch.float64 if x.dtype in "
                 "(torch.float16, torch.bfloat16) else wide), eps)"))),
    Unusual("RMSNorm", "the weight left uncast for a float64 input", edit(_WIDE_MODULE, (
        _WIDE_APPLY,
        "        w = self.weight if self.weight.dtype == wide or wide == torch.float64 else "
        "self.weight.to(wide)\n        y = RMSNormFunction.apply(x.to(wide), w, eps)\n"))),
]

MISTAKES = [
    Mistake("RMSNorm", "float16 and bfloat16 computed and returned in float32",
            "returns float32, where torch.nn.RMSNorm returns bfloat16", _rms() + _INIT +
            f"        eps = {_OPMATH} if self.eps is None else self.eps\n"
            "        if x.dtype in (torch.float16, torch.bfloat16):  # more accurate in float32\n"
            "            return RMSNormFunction.apply(x.float(), self.weight.float(), eps)\n"
            "        return RMSNormFunction.apply(x, self.weight, eps)\n"),
    # the lesson's solution until review 55: right for float32 and float64, and for half
    # inputs of magnitude about 1; all zeros for float16 rows of |x| near 300
    Mistake("RMSNorm", "a float16 x squared in float16", "squares overflow in float16 past 256",
            _rms() + _INIT + f"        eps = {_OPMATH} if self.eps is None else self.eps\n"
            "        return RMSNormFunction.apply(x, self.weight, eps)\n", named=True),
    # right for float16 (.half() is its identity) and for bfloat16 weights float16 holds, as
    # weights near 1 are: a bfloat16 weight of 1e5 becomes inf, one of 1e-8 becomes 0 (a mutant
    # of the answer above, listed as equivalent until weights beyond float16's range were graded)
    Mistake("RMSNorm", "a half module's weight cast with .half(), a bfloat16 one through float16",
            "its weight passes through float16", edit(_HALF_IN_FLOAT32, (
                "self.weight.float()", "self.weight.half()"))),
    # review 80: the row in float32, as torch, but the weight rounded to x's dtype first
    Mistake("RMSNorm", "a half x computed in float32, the weight first rounded to x's dtype",
            "whose float32 weight was first rounded to bfloat16", edit(_HALF_IN_FLOAT32, (
                "self.weight.float()", "self.weight.to(x.dtype).float()"))),
    Mistake("RMSNorm", "a float64 x computed in the float32 weight's dtype, cast back",
            "a step ran in float32",
            _module(_RMS_NORM_MODULE_INIT, edit(_APPLY, ("        return RMSNormFunction.apply(x, self.weight, "
                                         "eps)\n",
                                         "        wide = torch.promote_types(self.weight.dtype, "
                                         "torch.float32)\n"
                                         "        y = RMSNormFunction.apply(x.to(wide), "
                                         "self.weight.to(wide), eps)\n"
                                         "        return y.to(torch.promote_types(x.dtype, "
                                         "self.weight.dtype))\n")))),
    Mistake("RMSNorm", "every input computed in float32, cast back", "a step ran in float32",
            _module(_RMS_NORM_MODULE_INIT, edit(_APPLY, ("        return RMSNormFunction.apply(x, self.weight, "
                                         "eps)\n",
                                         "        y = RMSNormFunction.apply(x.float(), "
                                         "self.weight.float(), eps)\n"
                                         "        return y.to(torch.promote_types(x.dtype, "
                                         "self.weight.dtype))\n")))),
    Mistake("RMSNorm", "a bfloat16 row computed in bfloat16, float16 widened",
            "some step of yours ran in bfloat16",
            _module(_RMS_NORM_MODULE_INIT, edit(_APPLY, (_HALF_BRANCH, _HALF_BRANCH.replace(
                "(torch.float16, torch.bfloat16)", "(torch.float16,)"))))),
    Mistake("RMSNorm", "a half row normalised in float32, rounded, then scaled by the half weight",
            "some step of yours ran in", _module(_RMS_NORM_MODULE_INIT, edit(_APPLY, (
                "            return RMSNormFunction.apply(x.float(), self.weight.float(), "
                "eps).to(x.dtype)\n",
                "            return RMSNormFunction.apply(x.float(), None, eps).to(x.dtype) "
                "* self.weight\n")))),
    Mistake("RMSNorm", "half inputs sent to F.rms_norm", "does not compute through "
            "RMSNormFunction.apply", _module(_RMS_NORM_MODULE_INIT, edit(_APPLY, (
                _HALF_BRANCH,
                "        if x.dtype in (torch.float16, torch.bfloat16):  # torch's own op\n"
                "            return F.rms_norm(x, x.shape[-1:], self.weight, self.eps)\n")))),
    Mistake("RMSNorm", "a half module's weight detached", "a bfloat16 module: RMSNorm.weight "
            "received no gradient", edit(_RIGHT, (
                "self.weight.to(wide), eps)",
                "(self.weight.detach() if self.weight.dtype in (torch.float16, "
                "torch.bfloat16) else self.weight).to(wide), eps)"))),
]
