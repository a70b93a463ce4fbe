"""Lesson 10, review 53: the reviewer's answers that passed (x_hat recomputed when only the bias
needs a gradient, in LayerNormFunction and GroupNormFunction; grad_output * weight formed with
x frozen) or whose first line named another mistake (RMSNorm modules sharing one weight tensor,
blamed on eps; a row length read off x.shape[1], told only that grad_x was wrong), and its two
correct answers written unusually; the reviewer's other answers duplicate entries already
here."""

from .. import Mistake, Unusual, edit
from .rms_norm_function import _RMS_BACKWARD, _rms

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
    Unusual("GroupNormFunction", "unflatten to (N, G, C/G, *), var_mean over several dims, "
            "saves x_hat and rstd", '''
class GroupNormFunction(torch.autograd.Function):
    """torch.var_mean per group; saves x_hat and rstd; per-channel sums by sum_to_size."""

    @staticmethod
    def forward(ctx, x, num_groups, weight, bias, eps):
        N, C = x.shape[:2]
        groups = x.unflatten(1, (num_groups, C // num_groups))   # (N, G, C/G, *)
        dims = tuple(range(2, groups.dim()))
        var, mean = torch.var_mean(groups, dims, correction=0, keepdim=True)
        rstd = torch.rsqrt(var + eps)
        x_hat = ((groups - mean) * rstd).flatten(1, 2)
        per_c = (1, C) + (1,) * (x.dim() - 2)
        y = x_hat
        if weight is not None:
            y = y * weight.reshape(per_c)
        if bias is not None:
            y = y + bias.reshape(per_c)
        ctx.save_for_backward(x_hat, weight, rstd)
        ctx.num_groups = num_groups
        return y

    @staticmethod
    def backward(ctx, g):
        x_hat, weight, rstd = ctx.saved_tensors
        C = x_hat.shape[1]
        per_c = (1, C) + (1,) * (x_hat.dim() - 2)
        gx = gw = gb = None
        if ctx.needs_input_grad[2]:
            gw = (g * x_hat).sum_to_size(per_c).reshape(C)
        if ctx.needs_input_grad[3]:
            gb = g.sum_to_size(per_c).reshape(C)
        if ctx.needs_input_grad[0]:
            gh = g if weight is None else g * weight.reshape(per_c)
            G = ctx.num_groups
            gh = gh.unflatten(1, (G, C // G))
            xh = x_hat.unflatten(1, (G, C // G))
            dims = tuple(range(2, gh.dim()))
            gx = (rstd * (gh - gh.mean(dims, keepdim=True)
                          - xh * (gh * xh).mean(dims, keepdim=True))).flatten(1, 2)
        return gx, None, gw, gb, None
'''),
]

MISTAKES = [
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
    Mistake("RMSNormFunction", "grad_output * weight formed with x frozen",
            "makes a full-size tensor from the weight", _rms(edit(_RMS_BACKWARD, (
                "        if ctx.needs_input_grad[0]:\n"
                "            g = grad_output * weight if weight is not None else grad_output\n",
                "        g = grad_output * weight if weight is not None else grad_output\n"
                "        if ctx.needs_input_grad[0]:\n")))),
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
    # one cached ones tensor wrapped by every module: loading or training one moves them all
    Mistake("RMSNorm", "every RMSNorm(dim) wraps one cached ones tensor",
            "share one weight tensor", _rms() + "\n\n" + '''
from torch import nn

_ONES = {}  # one ones-vector per size, built once


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        # nn.Parameter wraps the cached tensor without copying: every RMSNorm(dim) shares it
        self.weight = nn.Parameter(_ONES.setdefault(dim, torch.ones(dim)))

    def forward(self, x):
        eps = torch.finfo(torch.promote_types(x.dtype, torch.float32)).eps \\
            if self.eps is None else self.eps
        return RMSNormFunction.apply(x, self.weight, eps)
'''),
]
