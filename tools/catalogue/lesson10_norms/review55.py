"""Lesson 10, review 55: the reviewer's answers that passed (the lesson's own RMSNorm module
until then, a float16 x squared in float16: its squares overflow past 256, its output is 0)
or whose first line named no mistake (eps left out of backward's rstd, in LayerNorm, RMSNorm
and GroupNorm: forward saves the variance and backward rebuilds rsqrt(variance)), and the
module computing a half x in float32 and a LayerNormFunction that saves x alone, written
another way; the reviewer's other answers
duplicate entries already here. Also that module with its weight cast by .half(), which a
bfloat16 weight beyond float16's range shows (a mutant once listed as equivalent)."""

from .. import Mistake, Unusual, edit
from .group_norm import _FORWARD, _HEAD, _RIGHT, _TAIL, _gn
from .layer_norm import _LN_CORRECT, _LN_FORWARD, _LN_HEAD, _ln
from .rms_norm_function import _RMS_BACKWARD, _RMS_FORWARD, _rms
from .review54 import _INIT, _OPMATH

_EPS_LOST = "backward rebuilds rstd without eps"

_LN_RIGHT = _LN_HEAD + '''        if need_x:
            g = grad_output * weight if weight is not None else grad_output
''' + _LN_CORRECT + "        return grad_x, grad_weight, grad_bias, None\n"

_HALF_IN_FLOAT32 = _rms() + _INIT + f'''        eps = {_OPMATH} if self.eps is None else self.eps
        if x.dtype in (torch.float16, torch.bfloat16):  # as torch: float32 inside
            return RMSNormFunction.apply(x.float(), self.weight.float(), eps).to(x.dtype)
        return RMSNormFunction.apply(x, self.weight, eps)
'''

UNUSUAL = [
    # no statistics saved at all: a one-pass variance shifted by each row's first entry (its
    # cancellation is bounded by the spread, not the offset), recomputed in backward
    Unusual("LayerNormFunction", "x alone saved, a pivot-shifted one-pass variance recomputed "
            "in backward, einsum for the parameters", '''
# unusual but correct: a *shifted* one-pass variance (pivot = each row's first entry), and
# forward saves only x: backward recomputes mean and rstd itself (eps kept on ctx)
def stats(x, eps):
    s = x - x[..., :1]
    m = s.mean(-1, keepdim=True)
    var = (s * s).mean(-1, keepdim=True) - m * m
    return m + x[..., :1], torch.rsqrt(var.clamp_min(0) + eps)
class LayerNormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias, eps):
        mean, rstd = stats(x, eps)
        y = (x - mean) * rstd
        if weight is not None: y = y * weight
        if bias is not None: y = y + bias
        ctx.save_for_backward(x, weight)
        ctx.eps = eps
        return y
    @staticmethod
    def backward(ctx, go):
        x, weight = ctx.saved_tensors
        D = x.shape[-1]
        sum_rows = lambda t: torch.einsum('...d->d', t)
        gx = gw = gb = None
        if ctx.needs_input_grad[2]:
            gb = sum_rows(go)
        if not (ctx.needs_input_grad[0] or ctx.needs_input_grad[1]):
            return gx, gw, gb, None
        mean, rstd = stats(x, ctx.eps)
        x_hat = (x - mean) * rstd
        if ctx.needs_input_grad[1]:
            gw = sum_rows(go * x_hat)
        if ctx.needs_input_grad[0]:
            g = go * weight if weight is not None else go
            gx = rstd * (g - g.mean(-1, keepdim=True) - x_hat * (g * x_hat).mean(-1, keepdim=True))
        return gx, gw, gb, None
'''),
    Unusual("RMSNorm", "a half x computed in float32 by .float(), the output cast back",
            _HALF_IN_FLOAT32),
]

MISTAKES = [
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
