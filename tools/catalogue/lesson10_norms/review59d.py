"""Lesson 10, review 59d: the fourth fresh review's answers. Its wrong answers were all caught;
one (a ones (D,) tensor saved in place of weight=None) was named by a budget message asking about
a full-size tensor, now about the (D,) tensor saved though no weight was given. The others not
yet held in this catalogue are kept here, each as an edit of the exercise's base answer."""

from .. import Mistake, Unusual, edit
from .group_norm import _RIGHT, _grad_x
from .layer_norm import _LN_CORRECT, _ln_grad_x
from .rms_norm_function import _rms
from .rms_norm_module import _WIDE_APPLY, _WIDE_MODULE

_RMS, _LN, _GN = _rms(), _ln_grad_x(_LN_CORRECT), _grad_x(_RIGHT)
_GN_G = ("            g = grad_output * weight.reshape(shape) if weight is not None "
         "else grad_output\n")

MISTAKES = [
    Mistake("RMSNormFunction", "a ones (D,) stand-in saved for weight=None",
            "though it was given no weight", edit(_RMS, (
                "        rstd = torch.rsqrt(",
                "        ctx.had_weight = weight is not None\n"
                "        if weight is None:\n"
                "            weight = x.new_ones(x.shape[-1])\n"
                "        rstd = torch.rsqrt("),
                ("return grad_x, grad_weight, None",
                 "return grad_x, (grad_weight if ctx.had_weight else None), None"))),
    Mistake("LayerNormFunction", "row length kept on the class", "a class attribute is shared",
            edit(_LN, ("        ctx.save_for_backward(", "        LayerNormFunction.features = "
                       "x.shape[-1]\n        ctx.save_for_backward("))),
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
    Mistake("GroupNormFunction", "grad_output * weight formed before needs_input_grad is read",
            "makes a full-size tensor from the weight", edit(_GN, (
                _GN_G, "            g = g_all\n"), (
                "        grad_x = grad_weight = grad_bias = None\n",
                "        grad_x = grad_weight = grad_bias = None\n" + _GN_G.replace(
                    "            g = ", "        g_all = ")))),
    Mistake("GroupNormFunction", "grad_bias summed through reshape(N, C, -1)",
            "cannot reshape tensor of 0 elements", edit(_GN, (
                "grad_bias = grad_output.sum(summed)",
                "grad_bias = grad_output.reshape(N, C, -1).sum((0, 2))"))),
]

UNUSUAL = [
    # the reviewer's "wrong" answer: x_hat rebuilt as x * rstd - mean * rstd; its float32 error
    # at a 1e4 offset (9.2e-5) is below F.layer_norm's own (2.5e-4)
    Unusual("LayerNormFunction", "x_hat rebuilt in backward as x * rstd - mean * rstd",
            edit(_LN, ("x_hat = (x - mean) * rstd", "x_hat = x * rstd - mean * rstd"))),
    Unusual("RMSNormFunction", "x.view_as(x) saved", edit(_RMS, (
        "ctx.save_for_backward(x, weight, rstd)", "ctx.save_for_backward(x.view_as(x), weight, "
                                                  "rstd)"))),
    Unusual("RMSNorm", "the weight left uncast for a float64 input", edit(_WIDE_MODULE, (
        _WIDE_APPLY,
        "        w = self.weight if self.weight.dtype == wide or wide == torch.float64 else "
        "self.weight.to(wide)\n        y = RMSNormFunction.apply(x.to(wide), w, eps)\n"))),
    Unusual("RMSNorm", "**kwargs and a non-persistent buffer", edit(_WIDE_MODULE, (
        "    def __init__(self, dim, eps=1e-6):\n        super().__init__()\n",
        "    def __init__(self, dim, eps=1e-6, **_):\n        super().__init__()\n"
        "        self.register_buffer('eps_t', torch.tensor(0.0), persistent=False)\n"))),
]
