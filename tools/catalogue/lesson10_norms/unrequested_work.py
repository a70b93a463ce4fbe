"""Lesson 10: work done for a gradient nobody asked for, in LayerNormFunction, RMSNormFunction
and GroupNormFunction: x_hat, grad_output * weight or grad_output * x_hat made before (or
without) reading ctx.needs_input_grad, branches for a missing weight or bias that compute
every gradient, and dead reductions beside the needed gradient's work."""

from .. import Mistake, Unusual, edit
from .group_norm import _HEAD, _RIGHT, _TAIL, _gn, _grad_x
from .layer_norm import _LN_CORRECT, _LN_FORWARD, _LN_HEAD, _ln, _ln_grad_x
from .layer_norm_mistakes import WIDE_LAYER_NORM
from .rms_norm_function import _RMS_BACKWARD, _rms

_LN_D = "        D = x.shape[-1]\n"

_LN_NO_WEIGHT_BRANCH = _LN_D + '''        if weight is None:  # plain normalisation: grad_x (and maybe the bias) is all there is
            x_hat = (x - mean) * rstd
            g = grad_output
''' + _LN_CORRECT + '''            grad_bias = grad_output.reshape(-1, D).sum(0) if need_bias else None
            return grad_x if need_x else None, None, grad_bias, None
'''

_LN_RIGHT = _LN_HEAD + '''        if need_x:
            g = grad_output * weight if weight is not None else grad_output
''' + _LN_CORRECT + "        return grad_x, grad_weight, grad_bias, None\n"

_GN_NO_WEIGHT_BRANCH = '''        summed = [0, *range(2, x.dim())]
        if weight is None:  # no affine weight: grad_x is all that is left to do
            x_hat = (x.reshape(N, ctx.num_groups, M) - mean) * rstd
            g = grad_output.reshape(x_hat.shape)
            grad_x = rstd * (g - g.mean(-1, keepdim=True)
                             - x_hat * (g * x_hat).mean(-1, keepdim=True))
            grad_bias = grad_output.sum(summed) if ctx.needs_input_grad[3] else None
            return (grad_x.reshape(x.shape) if ctx.needs_input_grad[0] else None,
                    None, None, grad_bias, None)
'''

_LN_NO_BIAS_BRANCH = _LN_D + '''        if ctx.bias_was_none:  # no bias: x_hat serves both gradients that are left
            x_hat = (x - mean) * rstd
            grad_weight = (grad_output * x_hat).reshape(-1, D).sum(0)
            g = grad_output * weight if weight is not None else grad_output
''' + _LN_CORRECT + '''            return grad_x if need_x else None, grad_weight if need_weight else None, None, None
'''

_WORK = "makes grad_output * x_hat"

_LN = _ln_grad_x(_LN_CORRECT)

_LN_X_HAT = "            x_hat = (x - mean) * rstd\n"

_RMS, _LN_2, _GN = _rms(), _ln_grad_x(_LN_CORRECT), _grad_x(_RIGHT)

_GN_G = ("            g = grad_output * weight.reshape(shape) if weight is not None "
         "else grad_output\n")


UNUSUAL = [
]

MISTAKES = [
    Mistake("LayerNormFunction", "bias gradient computed even for bias=None",
            "backward returned a gradient for bias, which is not a tensor",
            edit(WIDE_LAYER_NORM, ("        if ctx.needs_input_grad[2]:\n            gb =",
                                   "        if True:\n            gb ="))),
    # x_hat built on backward's first line: grad_weight's and grad_x's work when only the
    # bias needs a gradient (one more gradient still adds ops, so the op count cannot see it)
    Mistake("LayerNormFunction", "x_hat recomputed when only the bias needs a gradient",
            "makes a full-size tensor from x", '''
class LayerNormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias, eps):
        mean = x.mean(-1, keepdim=True)
        rstd = torch.rsqrt((x - mean).square().mean(-1, keepdim=True) + eps)
        y = (x - mean) * rstd
        if weight is not None:
            y = y * weight
        if bias is not None:
            y = y + bias
        ctx.save_for_backward(x, weight, mean, rstd)
        return y

    @staticmethod
    def backward(ctx, g):
        x, weight, mean, rstd = ctx.saved_tensors
        D = x.shape[-1]
        gx = gw = gb = None
        xh = (x - mean) * rstd  # first line of backward: x_hat, whatever is needed
        if ctx.needs_input_grad[2]:
            gb = g.reshape(-1, D).sum(0)
        if ctx.needs_input_grad[0] or ctx.needs_input_grad[1]:
            if ctx.needs_input_grad[1]:
                gw = (g * xh).reshape(-1, D).sum(0)
            if ctx.needs_input_grad[0]:
                gh = g * weight if weight is not None else g
                gx = rstd * (gh - gh.mean(-1, keepdim=True) - xh * (gh * xh).mean(-1, keepdim=True))
        return gx, gw, gb, None
'''),
    Mistake("GroupNormFunction", "x_hat recomputed when only the bias needs a gradient",
            "makes a full-size tensor from x", '''
class GroupNormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, num_groups, weight, bias, eps):
        N, C = x.shape[:2]
        M = C // num_groups * x[0, 0].numel() if N else C // num_groups * x.shape[2:].numel()
        rows = x.reshape(N, num_groups, M)
        mean = rows.mean(-1, keepdim=True)
        rstd = torch.rsqrt((rows - mean).square().mean(-1, keepdim=True) + eps)
        y = ((rows - mean) * rstd).reshape(x.shape)
        shape = (C,) + (1,) * (x.dim() - 2)
        if weight is not None:
            y = y * weight.reshape(shape)
        if bias is not None:
            y = y + bias.reshape(shape)
        ctx.save_for_backward(x, weight, mean, rstd)
        ctx.num_groups, ctx.M = num_groups, M
        return y

    @staticmethod
    def backward(ctx, g):
        x, weight, mean, rstd = ctx.saved_tensors
        N, C = x.shape[:2]
        shape = (C,) + (1,) * (x.dim() - 2)
        dims = [0, *range(2, x.dim())]
        gx = gw = gb = None
        xh = (x.reshape(N, ctx.num_groups, ctx.M) - mean) * rstd  # x_hat first, always
        if ctx.needs_input_grad[3]:
            gb = g.sum(dims)
        if ctx.needs_input_grad[0] or ctx.needs_input_grad[2]:
            if ctx.needs_input_grad[2]:
                gw = (g * xh.reshape(x.shape)).sum(dims)
            if ctx.needs_input_grad[0]:
                gh = (g * weight.reshape(shape) if weight is not None else g).reshape(xh.shape)
                gx = (rstd * (gh - gh.mean(-1, keepdim=True) - xh * (gh * xh).mean(-1, keepdim=True))).reshape(x.shape)
        return gx, None, gw, gb, None
'''),
    # g_hat = grad_output * weight hoisted above the needs_input_grad test: grad_x's work
    Mistake("LayerNormFunction", "grad_output * weight formed with x frozen",
            "makes a full-size tensor from the weight", '''
class LayerNormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias, eps):
        mean = x.mean(-1, keepdim=True)
        rstd = torch.rsqrt((x - mean).square().mean(-1, keepdim=True) + eps)
        y = (x - mean) * rstd
        if weight is not None:
            y = y * weight
        if bias is not None:
            y = y + bias
        ctx.save_for_backward(x, weight, mean, rstd)
        return y

    @staticmethod
    def backward(ctx, g):
        x, weight, mean, rstd = ctx.saved_tensors
        D = x.shape[-1]
        gx = gw = gb = None
        if ctx.needs_input_grad[2]:
            gb = g.reshape(-1, D).sum(0)
        if ctx.needs_input_grad[0] or ctx.needs_input_grad[1]:
            xh = (x - mean) * rstd
            if ctx.needs_input_grad[1]:
                gw = (g * xh).reshape(-1, D).sum(0)
            gh = g * weight if weight is not None else g  # g_hat, Step 1, hoisted
            if ctx.needs_input_grad[0]:
                gx = rstd * (gh - gh.mean(-1, keepdim=True) - xh * (gh * xh).mean(-1, keepdim=True))
        return gx, gw, gb, None
'''),
    Mistake("RMSNormFunction", "grad_output * weight formed with x frozen",
            "makes a full-size tensor from the weight", _rms(edit(_RMS_BACKWARD, (
                "        if ctx.needs_input_grad[0]:\n"
                "            g = grad_output * weight if weight is not None else grad_output\n",
                "        g = grad_output * weight if weight is not None else grad_output\n"
                "        if ctx.needs_input_grad[0]:\n")))),
    Mistake("LayerNormFunction", "a weight=None branch computes grad_x whatever x needs",
            "does it compute grad_x when ctx.needs_input_grad says x needs none",
            _ln(edit(_LN_RIGHT, (_LN_D, _LN_NO_WEIGHT_BRANCH)))),
    Mistake("GroupNormFunction", "a weight=None branch computes grad_x whatever x needs",
            "those group sums are grad_x's",
            _gn(edit(_HEAD + _RIGHT + _TAIL, ("        summed = [0, *range(2, x.dim())]\n",
                                              _GN_NO_WEIGHT_BRANCH)))),
    Mistake("LayerNormFunction", "a bias=None branch computes grad_x and grad_weight whatever "
            "they need", "does it compute grad_weight when ctx.needs_input_grad says weight needs none",
            _ln(edit(_LN_RIGHT, (_LN_D, _LN_NO_BIAS_BRANCH)), edit(_LN_FORWARD, (
                "        ctx.save_for_backward(", "        ctx.bias_was_none = bias is None\n"
                "        ctx.save_for_backward(")))),
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
    Mistake("LayerNormFunction", "a dead (D,) sum of grad_output beside the conditional grad_bias",
            "computes part of grad_bias", edit(_LN, (
                "        D = x.shape[-1]\n",
                "        D = x.shape[-1]\n        unused = grad_output.reshape(-1, D).sum(0)\n"))),
    Mistake("LayerNormFunction", "a dead einsum for grad_weight whenever x_hat is built",
            "computes part of grad_weight", edit(_LN, (
                _LN_X_HAT,
                _LN_X_HAT + '            unused = torch.einsum("...d,...d->d", grad_output, '
                'x_hat)\n'))),
    Mistake("LayerNormFunction", "a dead float64 weight sum, for float32 inputs only",
            "computes part of grad_weight", edit(_LN, (
                _LN_X_HAT,
                _LN_X_HAT + "            if x.dtype == torch.float32:  # a wider copy, kept aside\n"
                "                unused = torch.einsum(\"...d,...d->d\", grad_output, "
                "x_hat).double()\n"))),
    Mistake("RMSNormFunction", "a dead einsum for grad_weight beside the conditional one",
            "computes part of grad_weight", _rms(edit(_RMS_BACKWARD, (
                "        x_hat = x * rstd\n",
                "        x_hat = x * rstd\n"
                '        unused = torch.einsum("...d,...d->d", grad_output, x_hat)\n')))),
    Mistake("GroupNormFunction", "a dead (C,) sum of grad_output beside the conditional grad_bias",
            "computes part of grad_bias", edit(_grad_x(_RIGHT), (
                "        summed = [0, *range(2, x.dim())]\n",
                "        summed = [0, *range(2, x.dim())]\n"
                "        unused = grad_output.sum(summed)\n"))),
    Mistake("LayerNormFunction", "grad_bias as ones @ rows, computed whatever needs_input_grad "
            "says", "computes part of grad_bias", edit(_ln_grad_x(_LN_CORRECT), (
                "        D = x.shape[-1]\n",
                "        D = x.shape[-1]\n        rows = grad_output.reshape(-1, D)\n"
                "        unused = rows.new_ones(rows.shape[0]) @ rows\n"))),
    Mistake("GroupNormFunction", "grad_output * weight formed before needs_input_grad is read",
            "makes a full-size tensor from the weight", edit(_GN, (
                _GN_G, "            g = g_all\n"), (
                "        grad_x = grad_weight = grad_bias = None\n",
                "        grad_x = grad_weight = grad_bias = None\n" + _GN_G.replace(
                    "            g = ", "        g_all = ")))),
]
