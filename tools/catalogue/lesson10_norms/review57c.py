"""Lesson 10, review 57 (round C): the reviewer's RMSNorm modules that passed both checks: one
that computes a float64 x given to a float32 module in float32 and casts the output back to
float64 (the case was graded at float32's tolerance), and one that computes a bfloat16 row in
bfloat16 (float16 widened to float32, as the overflow needs; the half outputs were graded to a
few roundings, where torch rounds once). Also a module that computes every input in float32,
graded now to float64's precision too. Their RMSNorm answer, correct and unusual: rstd from vector_norm,
and a module that promotes x's dtype with the weight's.
The reviewer's other answers duplicate entries here."""

from .. import Mistake, Unusual, edit
from .rms_norm_module import _APPLY, _EPS, _INIT, _module

_HALF_BRANCH = ("        if x.dtype in (torch.float16, torch.bfloat16):  # as torch: in float32\n"
                "            return RMSNormFunction.apply(x.float(), self.weight.float(), "
                "eps).to(x.dtype)\n")

MISTAKES = [
    Mistake("RMSNorm", "a float64 x computed in the float32 weight's dtype, cast back",
            "a step ran in float32",
            _module(_INIT, edit(_APPLY, ("        return RMSNormFunction.apply(x, self.weight, "
                                         "eps)\n",
                                         "        wide = torch.promote_types(self.weight.dtype, "
                                         "torch.float32)\n"
                                         "        y = RMSNormFunction.apply(x.to(wide), "
                                         "self.weight.to(wide), eps)\n"
                                         "        return y.to(torch.promote_types(x.dtype, "
                                         "self.weight.dtype))\n")))),
    Mistake("RMSNorm", "every input computed in float32, cast back", "a step ran in float32",
            _module(_INIT, edit(_APPLY, ("        return RMSNormFunction.apply(x, self.weight, "
                                         "eps)\n",
                                         "        y = RMSNormFunction.apply(x.float(), "
                                         "self.weight.float(), eps)\n"
                                         "        return y.to(torch.promote_types(x.dtype, "
                                         "self.weight.dtype))\n")))),
    Mistake("RMSNorm", "a bfloat16 row computed in bfloat16, float16 widened",
            "some step of yours ran in bfloat16",
            _module(_INIT, edit(_APPLY, (_HALF_BRANCH, _HALF_BRANCH.replace(
                "(torch.float16, torch.bfloat16)", "(torch.float16,)"))))),
]

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
        return out.to(torch.result_type(x, self.weight))
'''

UNUSUAL = [
    Unusual("RMSNormFunction", "rstd from vector_norm, grad_x as rstd*g - x*rstd^3*<g, x>/D",
            _U2),
    Unusual("RMSNorm", "computed in x's dtype promoted with the weight's, register_parameter "
            "and nn.init.ones_", _U2),
]
