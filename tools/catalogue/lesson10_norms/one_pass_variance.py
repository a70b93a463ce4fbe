"""Lesson 10: the variance in one pass, E[x^2] - E[x]^2, shifted or widened: the accurate forms
(a pivot shift, float64 accumulation for a float32 x) and the ones that still cancel (float32
statistics before a float64 pass, a group's one pass shifted by the sample's mean), and
statistics computed in float64 and saved so for a float32 x."""

from .. import Mistake, Unusual, edit
from .group_norm import _FORWARD, _HEAD, _RIGHT, _TAIL, _gn, _grad_x
from .layer_norm import _LN_CORRECT, _LN_FORWARD, _LN_HEAD, _ln, _ln_grad_x
from .rms_norm_function import _rms

_LN_RIGHT = _LN_HEAD + '''        if need_x:
            g = grad_output * weight if weight is not None else grad_output
''' + _LN_CORRECT + "        return grad_x, grad_weight, grad_bias, None\n"

_GN_RIGHT = _HEAD + _RIGHT + _TAIL

_RMS, _LN, _GN = _rms(), _ln_grad_x(_LN_CORRECT), _grad_x(_RIGHT)


UNUSUAL = [
    Unusual("LayerNormFunction", "saves x_hat and rstd, variance of rows shifted by their first "
            "entry, sum_to_size", '''
class LayerNormFunction(torch.autograd.Function):
    """Saves x_hat and rstd (no x, no mean); variance by shifted data; sum_to_size reductions."""

    @staticmethod
    def forward(ctx, x, weight, bias, eps):
        d = x - x[..., :1]                      # shift by each row's first entry
        m = d.mean(-1, keepdim=True)
        var = (d * d).mean(-1, keepdim=True) - m * m   # one pass on shifted data
        rstd = torch.rsqrt(var.clamp_min(0) + eps)
        x_hat = (d - m) * rstd
        y = x_hat
        if weight is not None:
            y = y * weight
        if bias is not None:
            y = y + bias
        ctx.save_for_backward(x_hat, weight, rstd)
        return y

    @staticmethod
    def backward(ctx, g):
        x_hat, weight, rstd = ctx.saved_tensors
        gx = gw = gb = None
        if ctx.needs_input_grad[1]:
            gw = (g * x_hat).sum_to_size(weight.shape)
        if ctx.needs_input_grad[2]:
            gb = g.sum_to_size(x_hat.shape[-1:])
        if ctx.needs_input_grad[0]:
            gh = g if weight is None else g * weight
            gx = rstd * (gh - gh.mean(-1, keepdim=True) - x_hat * (gh * x_hat).mean(-1, keepdim=True))
        return gx, gw, gb, None
'''),
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
    # the variance clause names x's own dtype: float64 squares of float32 numbers near 1e4 are
    # exact to 2^-53, so the cancellation costs nothing a float32 output can show
    Unusual("LayerNormFunction", "one-pass variance accumulated in float64 for a float32 x",
            _ln(_LN_RIGHT, edit(_LN_FORWARD, (
                "        variance, mean = torch.var_mean(x, dim=-1, keepdim=True, correction=0)\n",
                "        if x.dtype == torch.float64:\n"
                "            variance, mean = torch.var_mean(x, dim=-1, keepdim=True, "
                "correction=0)\n"
                "        else:  # one pass, accumulated in float64\n"
                "            wide = x.double()\n"
                "            wide_mean = wide.mean(-1, keepdim=True)\n"
                "            variance = ((wide * wide).mean(-1, keepdim=True) - wide_mean ** 2)"
                ".to(x.dtype)\n"
                "            mean = wide_mean.to(x.dtype)\n")))),
]

MISTAKES = [
    Mistake("GroupNormFunction", "one-pass variance shifted by each sample's mean",
            "rows of far-apart magnitude", _gn(_GN_RIGHT, edit(_FORWARD, (
                "        variance, mean = torch.var_mean(rows, dim=-1, keepdim=True, "
                "correction=0)\n",
                "        mean = rows.mean(-1, keepdim=True)\n"
                "        shifted = rows - rows.mean((1, 2), keepdim=True)  # the sample's mean\n"
                "        variance = (shifted.square().mean(-1, keepdim=True)\n"
                "                    - shifted.mean(-1, keepdim=True) ** 2)\n")))),
    Mistake("LayerNormFunction", "a float32 mean, then a one-pass variance in float64",
            "a precision loss", edit(_LN, (
                "variance, mean = torch.var_mean(x, dim=-1, keepdim=True, correction=0)",
                "mean = x.mean(-1, keepdim=True)\n        variance = torch.clamp_min("
                "x.double().square().mean(-1, keepdim=True) - mean.double().square(), "
                "0).to(x.dtype)"))),
    Mistake("GroupNormFunction", "a one-pass group variance widened to float64",
            "on rows like 1e8 + N(0, 1) in float64", edit(_GN, (
                "variance, mean = torch.var_mean(rows, dim=-1, keepdim=True, correction=0)",
                "mean = rows.mean(-1, keepdim=True)\n        r64 = rows.double(); variance = ("
                "(r64 * r64).mean(-1, keepdim=True) - r64.mean(-1, keepdim=True) ** 2)"
                ".to(x.dtype)"))),
    Mistake("GroupNormFunction", "float64 mean and rstd saved for a float32 x",
            "of one number per group in torch.float64", _gn(_GN_RIGHT, edit(_FORWARD, (
                "torch.var_mean(rows, dim=-1,", "torch.var_mean(rows.double(), dim=-1,"), (
                "        y = ((rows - mean) * rstd).reshape(x.shape)\n",
                "        y = ((rows - mean) * rstd).to(x.dtype).reshape(x.shape)\n")))),
]
