"""Lesson 10: slips in the gradient's formula or its shapes that a first line names: a row length
read off another dim or kept on the class, a row mean of grad_output where grad_output * weight
belongs, the projection divided by sum(x_hat ** 2), a D x D (M x M) Jacobian built in
backward, GroupNorm's weight broadcast as (C, 1) for every rank, rows reshaped with -1 (an
empty batch), grad_bias through reshape(N, C, -1), and a ones tensor saved for weight=None."""

from .. import Mistake, Unusual, edit
from .group_norm import _FORWARD, _HEAD, _RIGHT, _TAIL, _gn, _grad_x
from .layer_norm import _LN_CORRECT, _ln_grad_x
from .rms_norm_function import _RMS_BACKWARD, _rms

_JACOBIAN = ("torch.eye({n}, dtype=x.dtype, device=x.device) - 1.0 / {n}"
             " - x_hat[..., :, None] * x_hat[..., None, :] / {n}")

_RMS, _LN, _GN = _rms(), _ln_grad_x(_LN_CORRECT), _grad_x(_RIGHT)


UNUSUAL = [
]

MISTAKES = [
    # D read off dim 1: right for 2-D x, so only a 3-D case shows it
    Mistake("RMSNormFunction", "row length read off x.shape[1]",
            "yours divides by 3, x.shape[1] here", '''
class RMSNormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, eps):
        rstd = torch.rsqrt(x.square().mean(-1, keepdim=True) + eps)
        x_hat = x * rstd
        ctx.save_for_backward(x, weight, rstd)
        return x_hat * weight if weight is not None else x_hat

    @staticmethod
    def backward(ctx, g):
        x, weight, rstd = ctx.saved_tensors
        D = x.shape[1] if x.dim() > 1 else x.shape[0]
        gx = gw = None
        x_hat = x * rstd
        if ctx.needs_input_grad[1]:
            gw = (g * x_hat).reshape(-1, x.shape[-1]).sum(0)
        if ctx.needs_input_grad[0]:
            gh = g * weight if weight is not None else g
            gx = rstd * (gh - x_hat * (gh * x_hat).sum(-1, keepdim=True) / D)
        return gx, gw, None
'''),
    Mistake("GroupNormFunction", "weight reshaped to (C, 1) whatever x's rank",
            "raises for the same x as (2, 4, 2, 3)", _gn(
                _HEAD + _RIGHT + _TAIL, edit(_FORWARD, (
                    "        shape = (C,) + (1,) * (x.dim() - 2)\n",
                    "        shape = (C, 1) if x.dim() > 2 else (C,)\n")))),
    Mistake("LayerNormFunction", "each row's D x D Jacobian built in backward",
            "a D x D matrix per row", _ln_grad_x(
                "            J = rstd[..., None] * (" + _JACOBIAN.format(n="D") + ")\n"
                "            grad_x = (g[..., None, :] @ J)[..., 0, :]\n")),
    Mistake("GroupNormFunction", "each group's M x M Jacobian built in backward",
            "an M x M matrix per group", _grad_x(
                "            J = rstd[..., None] * (" + _JACOBIAN.format(n="M") + ")\n"
                "            grad_x = (g[..., None, :] @ J)[..., 0, :]\n")),
    Mistake("GroupNormFunction", "backward's rows as reshape(N, num_groups, -1), an empty batch "
            "unhandled", "backward raised RuntimeError", edit(_grad_x(_RIGHT), (
                "            g = g.reshape(x_hat.shape)\n",
                "            g = g.reshape(N, ctx.num_groups, -1)\n"))),
    Mistake("LayerNormFunction", "the mean term's row mean of grad_output, not of "
            "grad_output * weight", "takes the mean term's row mean of grad_output",
            _ln_grad_x(edit(_LN_CORRECT, ("(g - g.mean(", "(g - grad_output.mean(")))),
    Mistake("LayerNormFunction", "the projection divided by sum(x_hat ** 2), not by D",
            "divides the projection term's row sum by the row's sum of x_hat ** 2",
            _ln_grad_x(edit(_LN_CORRECT, (
                "x_hat * (g * x_hat).mean(-1, keepdim=True)",
                "x_hat * (g * x_hat).sum(-1, keepdim=True)"
                " / (x_hat * x_hat).sum(-1, keepdim=True)")))),
    Mistake("RMSNormFunction", "the projection's row mean of grad_output * x_hat, not of "
            "g * x_hat", "takes the projection term's row mean of grad_output",
            _rms(edit(_RMS_BACKWARD, ("x_hat * (g * x_hat).mean(",
                                      "x_hat * (grad_output * x_hat).mean(")))),
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
    Mistake("GroupNormFunction", "grad_bias summed through reshape(N, C, -1)",
            "cannot reshape tensor of 0 elements", edit(_GN, (
                "grad_bias = grad_output.sum(summed)",
                "grad_bias = grad_output.reshape(N, C, -1).sum((0, 2))"))),
]
