"""Lesson 10: the kinds of answer issue 37 found passing elsewhere (a constant kept on the class,
statistics saved narrower than the input, rows read with the strides of a contiguous tensor, a
module that drops its own eps), each caught by the domain its contract declares."""

from .. import Mistake, edit
from .group_norm import _FORWARD, _HEAD, _RIGHT, _TAIL, _gn
from .layer_norm_mistakes import WIDE_LAYER_NORM
from .rms_norm_function import _RMS_BACKWARD, _RMS_FORWARD, _rms
from .rms_norm_module import _INIT, _module

_WIDE = "        wide = torch.promote_types(x.dtype, torch.float32)\n"

MISTAKES = [
    # eps on the class, read back in backward: right for one call at a time
    Mistake("LayerNormFunction", "eps kept on the class",
            "sets LayerNormFunction.eps: a class attribute", edit(
        WIDE_LAYER_NORM,
        ("        ctx.save_for_backward(x, weight, mean, rstd)\n",
         "        LayerNormFunction.eps = eps\n        ctx.save_for_backward(x, weight, mean)\n"),
        ("        x, weight, mean, rstd = ctx.saved_tensors\n        wide = rstd.dtype\n",
         "        x, weight, mean = ctx.saved_tensors\n        wide = mean.dtype\n"
         "        if ctx.needs_input_grad[0] or ctx.needs_input_grad[1]:\n"
         "            rstd = torch.rsqrt((x.to(wide) - mean).pow(2).mean(-1, keepdim=True)"
         " + LayerNormFunction.eps)\n"))),
    # statistics always in float32: float64 inputs keep a float32 mean and rstd
    Mistake("LayerNormFunction", "float32 statistics saved for float64 inputs",
            "saved a float32 tensor of shape (2, 3, 1) for float64 inputs", edit(
        WIDE_LAYER_NORM, (_WIDE, "        wide = torch.float32\n"))),
    # the rows of x read as if x were contiguous
    Mistake("LayerNormFunction", "rows read with a contiguous tensor's strides",
            "output is wrong: largest error", edit(
        WIDE_LAYER_NORM, ("        xw = x.to(wide)\n",
                          "        D = x.shape[-1]\n"
                          "        xw = x.as_strided((x.numel() // D, D), (D, 1)).to(wide)"
                          ".reshape(x.shape)\n"))),
    Mistake("RMSNormFunction", "float32 rstd saved for float64 inputs",
            "saved a float32 tensor of shape (2, 3, 1) for float64 inputs", _rms(
        forward=_RMS_FORWARD.replace("torch.rsqrt(x.square().mean(-1, keepdim=True) + eps)",
                                     "torch.rsqrt(x.float().square().mean(-1, keepdim=True)"
                                     " + eps)"))),
    Mistake("RMSNormFunction", "eps kept on the class",
            "sets RMSNormFunction.eps: a class attribute", _rms(
        forward=_RMS_FORWARD.replace("        ctx.save_for_backward(x, weight, rstd)\n",
                                     "        RMSNormFunction.eps = eps\n"
                                     "        ctx.save_for_backward(x, weight)\n"),
        backward=_RMS_BACKWARD.replace(
            "        x, weight, rstd = ctx.saved_tensors\n",
            "        x, weight = ctx.saved_tensors\n"
            "        rstd = torch.rsqrt(x.square().mean(-1, keepdim=True) + RMSNormFunction.eps)\n"))),
    Mistake("RMSNormFunction", "rows read with a contiguous tensor's strides",
            "output is wrong: largest error", _rms(
        forward=_RMS_FORWARD.replace(
            "        rstd = torch.rsqrt(x.square().mean(-1, keepdim=True) + eps)\n",
            "        D = x.shape[-1]\n"
            "        rows = x.as_strided((x.numel() // D, D), (D, 1))\n"
            "        rstd = torch.rsqrt(rows.square().mean(-1, keepdim=True) + eps)"
            ".reshape(*x.shape[:-1], 1)\n"))),
    Mistake("RMSNorm", "forward passes eps=1e-6 whatever eps it was built with",
            "does not use the eps it is given", _module(
        _INIT, "        return RMSNormFunction.apply(x, self.weight, 1e-6)\n")),
    Mistake("GroupNormFunction", "num_groups kept on the class",
            "sets GroupNormFunction.num_groups: a class attribute", _gn(
        _HEAD.replace("ctx.num_groups", "GroupNormFunction.num_groups") + _RIGHT + _TAIL,
        _FORWARD.replace("ctx.num_groups = num_groups",
                         "GroupNormFunction.num_groups = num_groups"))),
    Mistake("GroupNormFunction", "float32 rstd saved for float64 inputs",
            "saved a float32 tensor of shape (2, 2, 1) for float64 inputs", _gn(
        _HEAD + _RIGHT + _TAIL,
        _FORWARD.replace("rstd = torch.rsqrt(variance + eps)",
                         "rstd = torch.rsqrt(variance + eps).float()"))),
]
