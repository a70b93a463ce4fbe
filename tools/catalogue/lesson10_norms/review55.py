"""Lesson 10, review 55: the reviewer's answers that passed (the lesson's own RMSNorm module
until then, a float16 x squared in float16: its squares overflow past 256, its output is 0)
or whose first line named no mistake (eps left out of backward's rstd, in LayerNorm, RMSNorm
and GroupNorm: forward saves the variance and backward rebuilds rsqrt(variance)), and the
module computing a half x in float32, written another way; the reviewer's other answers
duplicate entries already here."""

from .. import Mistake, Unusual, edit
from .group_norm import _FORWARD, _HEAD, _RIGHT, _TAIL, _gn
from .layer_norm import _LN_CORRECT, _LN_FORWARD, _LN_HEAD, _ln
from .rms_norm_function import _RMS_BACKWARD, _RMS_FORWARD, _rms
from .review54 import _INIT, _OPMATH

_EPS_LOST = "backward rebuilds rstd without eps"

_LN_RIGHT = _LN_HEAD + '''        if need_x:
            g = grad_output * weight if weight is not None else grad_output
''' + _LN_CORRECT + "        return grad_x, grad_weight, grad_bias, None\n"

UNUSUAL = [
    Unusual("RMSNorm", "a half x computed in float32 by .float(), the output cast back",
            _rms() + _INIT + f'''        eps = {_OPMATH} if self.eps is None else self.eps
        if x.dtype in (torch.float16, torch.bfloat16):  # as torch: float32 inside
            return RMSNormFunction.apply(x.float(), self.weight.float(), eps).to(x.dtype)
        return RMSNormFunction.apply(x, self.weight, eps)
'''),
]

MISTAKES = [
    # the lesson's solution until review 55: right for float32 and float64, and for half
    # inputs of magnitude about 1; all zeros for float16 rows of |x| near 300
    Mistake("RMSNorm", "a float16 x squared in float16", "squares overflow in float16 past 256",
            _rms() + _INIT + f"        eps = {_OPMATH} if self.eps is None else self.eps\n"
            "        return RMSNormFunction.apply(x, self.weight, eps)\n", named=True),
    Mistake("LayerNormFunction", "backward rebuilds rstd from the variance without eps",
            _EPS_LOST, _ln(edit(_LN_RIGHT, (
                "        x, weight, mean, rstd = ctx.saved_tensors\n",
                "        x, weight, mean, variance = ctx.saved_tensors\n"
                "        rstd = torch.rsqrt(variance)\n")), edit(_LN_FORWARD, (
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
    Mistake("GroupNormFunction", "backward rebuilds rstd from the variance without eps",
            _EPS_LOST, _gn(edit(_HEAD + _RIGHT + _TAIL, (
                "        x, weight, mean, rstd = ctx.saved_tensors\n",
                "        x, weight, mean, variance = ctx.saved_tensors\n"
                "        rstd = torch.rsqrt(variance)\n")), edit(_FORWARD, (
                    "save_for_backward(x, weight, mean, rstd)",
                    "save_for_backward(x, weight, mean, variance)"))), named=True),
]
