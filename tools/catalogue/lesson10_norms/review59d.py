"""Lesson 10, review 59d: the fourth fresh review's answers. Its wrong answers were all caught;
one (a ones (D,) tensor saved in place of weight=None) was named by a budget message asking about
a full-size tensor, now about the (D,) tensor saved though no weight was given. The others not
yet held in this catalogue are kept here, built as edits of the reviewer's plain answers."""

from .. import Mistake, Unusual, edit

_RMS = """from torch import nn


class RMSNormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, eps):
        rstd = torch.rsqrt(x.square().mean(-1, keepdim=True) + eps)
        y = x * rstd
        if weight is not None:
            y = y * weight
        ctx.save_for_backward(x, weight, rstd)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        x, weight, rstd = ctx.saved_tensors
        gx = gw = None
        x_hat = x * rstd
        if ctx.needs_input_grad[1]:
            gw = (grad_output * x_hat).reshape(-1, x.shape[-1]).sum(0)
        if ctx.needs_input_grad[0]:
            g = grad_output * weight if weight is not None else grad_output
            gx = rstd * (g - x_hat * (g * x_hat).mean(-1, keepdim=True))
        return gx, gw, None


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        wide = torch.promote_types(x.dtype, torch.float32)
        eps = torch.finfo(wide).eps if self.eps is None else self.eps
        y = RMSNormFunction.apply(x.to(wide), self.weight.to(wide), eps)
        return y.to(torch.promote_types(x.dtype, self.weight.dtype))
"""

_LN = """class LayerNormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias, eps):
        mean = x.mean(-1, keepdim=True)
        var = (x - mean).square().mean(-1, keepdim=True)
        rstd = torch.rsqrt(var + eps)
        y = (x - mean) * rstd
        if weight is not None:
            y = y * weight
        if bias is not None:
            y = y + bias
        ctx.save_for_backward(x, weight, mean, rstd)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        x, weight, mean, rstd = ctx.saved_tensors
        D = x.shape[-1]
        gx = gw = gb = None
        if ctx.needs_input_grad[2]:
            gb = grad_output.reshape(-1, D).sum(0)
        if ctx.needs_input_grad[0] or ctx.needs_input_grad[1]:
            x_hat = (x - mean) * rstd
            if ctx.needs_input_grad[1]:
                gw = (grad_output * x_hat).reshape(-1, D).sum(0)
            if ctx.needs_input_grad[0]:
                g = grad_output * weight if weight is not None else grad_output
                gx = rstd * (g - g.mean(-1, keepdim=True)
                             - x_hat * (g * x_hat).mean(-1, keepdim=True))
        return gx, gw, gb, None
"""

_GN = """class GroupNormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, num_groups, weight, bias, eps):
        N, C = x.shape[:2]
        M = C // num_groups * x.shape[2:].numel()
        rows = x.reshape(N, num_groups, M)
        mean = rows.mean(-1, keepdim=True)
        var = (rows - mean).square().mean(-1, keepdim=True)
        rstd = torch.rsqrt(var + eps)
        y = ((rows - mean) * rstd).reshape(x.shape)
        shape = (C,) + (1,) * (x.dim() - 2)
        if weight is not None:
            y = y * weight.reshape(shape)
        if bias is not None:
            y = y + bias.reshape(shape)
        ctx.save_for_backward(x, weight, mean, rstd)
        ctx.num_groups = num_groups
        return y

    @staticmethod
    def backward(ctx, grad_output):
        x, weight, mean, rstd = ctx.saved_tensors
        G = ctx.num_groups
        N, C = x.shape[:2]
        M = C // G * x.shape[2:].numel()
        shape = (C,) + (1,) * (x.dim() - 2)
        dims = [0] + list(range(2, x.dim()))
        gx = gw = gb = None
        if ctx.needs_input_grad[3]:
            gb = grad_output.sum(dims)
        if ctx.needs_input_grad[0] or ctx.needs_input_grad[2]:
            x_hat = (x.reshape(N, G, M) - mean) * rstd
            if ctx.needs_input_grad[2]:
                gw = (grad_output * x_hat.reshape(x.shape)).sum(dims)
            if ctx.needs_input_grad[0]:
                g = grad_output * weight.reshape(shape) if weight is not None else grad_output
                g = g.reshape(N, G, M)
                gx = (rstd * (g - g.mean(-1, keepdim=True)
                              - x_hat * (g * x_hat).mean(-1, keepdim=True))).reshape(x.shape)
        return gx, None, gw, gb, None
"""

MISTAKES = [
    Mistake("RMSNormFunction", "a ones (D,) stand-in saved for weight=None",
            "though it was given no weight", edit(_RMS, (
                "        rstd = torch.rsqrt(",
                "        ctx.had_weight = weight is not None\n"
                "        if weight is None:\n"
                "            weight = x.new_ones(x.shape[-1])\n"
                "        rstd = torch.rsqrt("),
                ("return gx, gw, None", "return gx, (gw if ctx.had_weight else None), None"))),
    Mistake("LayerNormFunction", "row length kept on the class", "a class attribute is shared",
            edit(_LN, ("        ctx.save_for_backward(", "        LayerNormFunction.features = "
                       "x.shape[-1]\n        ctx.save_for_backward("))),
    Mistake("LayerNormFunction", "a float32 mean, then a one-pass variance in float64",
            "a precision loss", edit(_LN, (
                "var = (x - mean).square().mean(-1, keepdim=True)",
                "var = torch.clamp_min(x.double().square().mean(-1, keepdim=True) - "
                "mean.double().square(), 0).to(x.dtype)"))),
    Mistake("GroupNormFunction", "a one-pass group variance widened to float64",
            "on rows like 1e8 + N(0, 1) in float64", edit(_GN, (
                "var = (rows - mean).square().mean(-1, keepdim=True)",
                "r64 = rows.double(); var = ((r64 * r64).mean(-1, keepdim=True) - "
                "r64.mean(-1, keepdim=True) ** 2).to(x.dtype)"))),
    Mistake("GroupNormFunction", "grad_output * weight formed before needs_input_grad is read",
            "makes a full-size tensor from the weight", edit(_GN, (
                "                g = grad_output * weight.reshape(shape) if weight is not None "
                "else grad_output",
                "                g = g_all"), (
                "        gx = gw = gb = None\n",
                "        gx = gw = gb = None\n        g_all = grad_output * weight.reshape(shape) "
                "if weight is not None else grad_output\n"))),
    Mistake("GroupNormFunction", "grad_bias summed through reshape(N, C, -1)",
            "cannot reshape tensor of 0 elements", edit(_GN, (
                "gb = grad_output.sum(dims)", "gb = grad_output.reshape(N, C, -1).sum((0, 2))"))),
]

UNUSUAL = [
    # the reviewer's "wrong" answer: x_hat rebuilt as x * rstd - mean * rstd; its float32 error
    # at a 1e4 offset (9.2e-5) is below F.layer_norm's own (2.5e-4)
    Unusual("LayerNormFunction", "x_hat rebuilt in backward as x * rstd - mean * rstd",
            edit(_LN, ("x_hat = (x - mean) * rstd", "x_hat = x * rstd - mean * rstd"))),
    Unusual("RMSNormFunction", "x.view_as(x) saved", edit(_RMS, (
        "ctx.save_for_backward(x, weight, rstd)", "ctx.save_for_backward(x.view_as(x), weight, "
                                                  "rstd)"))),
    Unusual("RMSNorm", "the weight left uncast for a float64 input", edit(_RMS, (
        "        y = RMSNormFunction.apply(x.to(wide), self.weight.to(wide), eps)",
        "        w = self.weight if self.weight.dtype == wide or wide == torch.float64 else "
        "self.weight.to(wide)\n        y = RMSNormFunction.apply(x.to(wide), w, eps)"))),
    Unusual("RMSNorm", "**kwargs and a non-persistent buffer", edit(_RMS, (
        "    def __init__(self, dim, eps=1e-6):\n        super().__init__()\n",
        "    def __init__(self, dim, eps=1e-6, **_):\n        super().__init__()\n"
        "        self.register_buffer('eps_t', torch.tensor(0.0), persistent=False)\n"))),
]
