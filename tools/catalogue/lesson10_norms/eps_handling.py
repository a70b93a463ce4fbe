"""Lesson 10: where eps enters: eps as a floor under the variance or mean square, eps left out of
backward's rstd (forward saves the variance, backward rebuilds rsqrt(variance)), and the
RMSNorm module's eps=None, resolved in ways torch.nn.RMSNorm does not (eps=None is no longer
graded: see the package's RETIRED and DROPPED)."""

from .. import Mistake, Unusual, edit
from .group_norm import _FORWARD, _HEAD, _RIGHT, _TAIL, _gn
from .layer_norm import _LN_CORRECT, _LN_FORWARD, _LN_HEAD, _ln
from .rms_norm_function import _RMS_BACKWARD, _RMS_FORWARD, _rms
from .rms_norm_module import _APPLY, _EPS, _INIT as _RMS_NORM_MODULE_INIT, _OPMATH, _module

_INIT = ('''
class RMSNorm(torch.nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = torch.nn.Parameter(torch.ones(dim))

    def forward(self, x):
''')

_GN_RIGHT = _HEAD + _RIGHT + _TAIL

_EPS_LOST = "backward rebuilds rstd without eps"

_LN_RIGHT = _LN_HEAD + '''        if need_x:
            g = grad_output * weight if weight is not None else grad_output
''' + _LN_CORRECT + "        return grad_x, grad_weight, grad_bias, None\n"


UNUSUAL = [
    Unusual("RMSNorm", "eps=None resolved from a tuple of half dtypes, weight cast at the call",
            _rms() + _INIT + '''        eps = self.eps
        if eps is None:  # torch computes float16 and bfloat16 in float32, and adds its eps
            wide = torch.float32 if x.dtype in (torch.float16, torch.bfloat16) else x.dtype
            eps = torch.finfo(wide).eps
        if x.dtype in (torch.float16, torch.bfloat16):  # torch computes these in float32
            return RMSNormFunction.apply(x.float(), self.weight.float(), eps).to(x.dtype)
        return RMSNormFunction.apply(x, self.weight, eps)
'''),
]

MISTAKES = [
    # the lesson's solution until review 54: right for float32 and float64, off by about 1.5
    # (bfloat16) and 0.7 (float16) on rows of mean square near 1e-3
    Mistake("RMSNorm", "eps=None resolved as torch.finfo(x.dtype).eps",
            "resolves eps=None as torch.finfo(x.dtype).eps", _rms() + _INIT +
            "        eps = torch.finfo(x.dtype).eps if self.eps is None else self.eps\n"
            "        return RMSNormFunction.apply(x, self.weight, eps)\n", named=True),
    Mistake("RMSNormFunction", "eps as a floor under the mean square",
            "uses eps as a floor under the mean square", edit(
                _rms(), ("torch.rsqrt(x.square().mean(-1, keepdim=True) + eps)",
                         "torch.rsqrt(x.square().mean(-1, keepdim=True).clamp_min(eps))"))),
    Mistake("GroupNormFunction", "eps as a floor under the variance",
            "uses eps as a floor under the variance", _gn(_GN_RIGHT, edit(
                _FORWARD, ("torch.rsqrt(variance + eps)",
                           "torch.rsqrt(variance.clamp_min(eps))")))),
    Mistake("LayerNormFunction", "backward rebuilds rstd from the variance without eps",
            _EPS_LOST, _ln(edit(_LN_RIGHT, (
                "        x, weight, mean, rstd = ctx.saved_tensors\n",
                "        x, weight, mean, variance = ctx.saved_tensors\n"
                "        rstd = torch.rsqrt(variance)\n")), edit(_LN_FORWARD, (
                    "save_for_backward(x, weight, mean, rstd)",
                    "save_for_backward(x, weight, mean, variance)"))), named=True),
    Mistake("GroupNormFunction", "backward rebuilds rstd from the variance without eps",
            _EPS_LOST, _gn(edit(_HEAD + _RIGHT + _TAIL, (
                "        x, weight, mean, rstd = ctx.saved_tensors\n",
                "        x, weight, mean, variance = ctx.saved_tensors\n"
                "        rstd = torch.rsqrt(variance)\n")), edit(_FORWARD, (
                    "save_for_backward(x, weight, mean, rstd)",
                    "save_for_backward(x, weight, mean, variance)"))), named=True),
    Mistake("RMSNormFunction", "backward rebuilds rstd from the mean square without eps",
            _EPS_LOST, _rms(edit(_RMS_BACKWARD, (
                "        x, weight, rstd = ctx.saved_tensors\n",
                "        x, weight, mean_square = ctx.saved_tensors\n"
                "        rstd = torch.rsqrt(mean_square)\n")), edit(_RMS_FORWARD, (
                    "        rstd = torch.rsqrt(x.square().mean(-1, keepdim=True) + eps)\n",
                    "        mean_square = x.square().mean(-1, keepdim=True)\n"
                    "        rstd = torch.rsqrt(mean_square + eps)\n"), (
                    "save_for_backward(x, weight, rstd)",
                    "save_for_backward(x, weight, mean_square)"))), named=True),
    Mistake("RMSNorm", "eps=None resolved at the first call and kept",
            "resolved once and kept", _module(_RMS_NORM_MODULE_INIT, edit(_APPLY, (_EPS, f'''        if self.eps is None and getattr(self, "_resolved", None) is None:
            self._resolved = {_OPMATH}  # once, at the first call
        eps = self._resolved if self.eps is None else self.eps
''')))),
    Mistake("RMSNorm", "a float64 x computed in the float32 weight's dtype, eps=None from it",
            "every value of RMSNorm's output is exactly a float32 number", _module(_RMS_NORM_MODULE_INIT, edit(
                _APPLY, (
                "        return RMSNormFunction.apply(x, self.weight, eps)\n",
                "        wide = torch.promote_types(self.weight.dtype, torch.float32)\n"
                "        eps = torch.finfo(wide).eps if self.eps is None else self.eps\n"
                "        y = RMSNormFunction.apply(x.to(wide), self.weight.to(wide), eps)\n"
                "        return y.to(torch.promote_types(x.dtype, self.weight.dtype))\n")))),
]
