"""Lesson 10, review 58: the reviewer's three Functions that passed both checks by making
grad_output * x_hat (grad_weight's product) with the weight frozen, unused by the gradients
returned; a GroupNorm whose weight broadcasts as (C, 1) for every rank (a 4-D x fails); the module that rounds a half row twice (normalised in float32, rounded, then
multiplied by the half weight), one unit off torch's on about a quarter of the entries. Their
correct answer new here: LayerNorm's forward as one scale and shift per row, y = x * a + c
(their shifted one-pass LayerNorm and x_hat-saving GroupNorm duplicate review53's)."""

from .. import Mistake, Unusual, edit
from .group_norm import _FORWARD, _HEAD, _RIGHT, _TAIL, _gn
from .layer_norm import _LN_CORRECT, _LN_HEAD, _ln
from .rms_norm_function import _RMS_BACKWARD, _rms
from .rms_norm_module import _APPLY, _INIT, _module

_WORK = "makes grad_output * x_hat"

_LN_RIGHT = _LN_HEAD + '''        if need_x:
            g = grad_output * weight if weight is not None else grad_output
''' + _LN_CORRECT + "        return grad_x, grad_weight, grad_bias, None\n"

MISTAKES = [
    Mistake("LayerNormFunction", "grad_output * x_hat made whenever x_hat is, weight frozen",
            _WORK, _ln(edit(_LN_RIGHT, (
                "            x_hat = (x - mean) * rstd\n",
                "            x_hat = (x - mean) * rstd\n"
                "            go_x_hat = grad_output * x_hat\n"),
                ("(grad_output * x_hat).reshape", "go_x_hat.reshape")))),
    Mistake("RMSNormFunction", "grad_output * x_hat made before needs_input_grad is read",
            _WORK, _rms(edit(_RMS_BACKWARD, (
                "        x_hat = x * rstd\n",
                "        x_hat = x * rstd\n        go_x_hat = grad_output * x_hat\n"),
                ("(grad_output * x_hat).reshape", "go_x_hat.reshape")))),
    Mistake("GroupNormFunction", "grad_output * x_hat made before needs_input_grad is read",
            _WORK, _gn(edit(_HEAD, (
                "        grad_x = grad_weight = grad_bias = None\n",
                "        grad_x = grad_weight = grad_bias = None\n"
                "        if ctx.needs_input_grad[0] or ctx.needs_input_grad[2]:\n"
                "            go_x_hat = grad_output * x_hat.reshape(x.shape)\n"),
                ("(grad_output * x_hat.reshape(x.shape)).sum", "go_x_hat.sum"))
                + _RIGHT + _TAIL)),
    Mistake("GroupNormFunction", "weight reshaped to (C, 1) whatever x's rank",
            "raises for the same x as (2, 4, 2, 3)", _gn(
                _HEAD + _RIGHT + _TAIL, edit(_FORWARD, (
                    "        shape = (C,) + (1,) * (x.dim() - 2)\n",
                    "        shape = (C, 1) if x.dim() > 2 else (C,)\n")))),
    Mistake("RMSNorm", "a half row normalised in float32, rounded, then scaled by the half weight",
            "some step of yours ran in", _module(_INIT, edit(_APPLY, (
                "            return RMSNormFunction.apply(x.float(), self.weight.float(), "
                "eps).to(x.dtype)\n",
                "            return RMSNormFunction.apply(x.float(), None, eps).to(x.dtype) "
                "* self.weight\n")))),
]

UNUSUAL = [
    Unusual("LayerNormFunction", "forward as one scale and shift per row, y = x * a + c",
            _ln(_LN_RIGHT, """
    @staticmethod
    def forward(ctx, x, weight, bias, eps):
        mean = x.mean(-1, keepdim=True)
        rstd = torch.rsqrt(((x - mean) ** 2).mean(-1, keepdim=True) + eps)
        a = rstd if weight is None else rstd * weight
        c = -mean * a
        if bias is not None:
            c = c + bias
        ctx.save_for_backward(x, weight, mean, rstd)
        return x * a + c
""")),
]
