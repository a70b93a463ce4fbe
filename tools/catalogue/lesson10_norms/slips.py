"""Lesson 10: mistakes from a second, independent review: each one the battery let through
or explained with a cause no probe had proved, before it was fixed."""

from .. import Mistake, edit

# LayerNorm computed in float32 or wider: the base each LayerNorm slip below edits
WIDE_LAYER_NORM = '''
class LayerNormFunction(torch.autograd.Function):
    # statistics and arithmetic in float32 or wider, cast back at the end (the lesson's bf16 advice)
    @staticmethod
    def forward(ctx, x, weight, bias, eps):
        wide = torch.promote_types(x.dtype, torch.float32)
        xw = x.to(wide)
        mean = xw.mean(-1, keepdim=True)
        rstd = torch.rsqrt((xw - mean).pow(2).mean(-1, keepdim=True) + eps)
        y = (xw - mean) * rstd
        if weight is not None:
            y = y * weight.to(wide)
        if bias is not None:
            y = y + bias.to(wide)
        ctx.save_for_backward(x, weight, mean, rstd)
        return y.to(x.dtype)

    @staticmethod
    def backward(ctx, grad_output):
        x, weight, mean, rstd = ctx.saved_tensors
        wide = rstd.dtype
        D = x.shape[-1]
        x_hat = (x.to(wide) - mean) * rstd
        go = grad_output.to(wide)
        gx = gw = gb = None
        if ctx.needs_input_grad[1]:
            gw = (go * x_hat).reshape(-1, D).sum(0).to(weight.dtype)
        if ctx.needs_input_grad[2]:
            gb = go.reshape(-1, D).sum(0).to(x.dtype)
        if ctx.needs_input_grad[0]:
            g = go * weight.to(wide) if weight is not None else go
            gx = (rstd * (g - g.mean(-1, keepdim=True) - x_hat * (g * x_hat).mean(-1, keepdim=True))).to(x.dtype)
        return gx, gw, gb, None
'''

MISTAKES = [
    Mistake('LayerNormFunction', 'unbiased variance (correction=1)', 'unbiased variance', edit(
        WIDE_LAYER_NORM, ("(xw - mean).pow(2).mean(-1, keepdim=True) + eps",
                          "(xw - mean).pow(2).sum(-1, keepdim=True) / (x.shape[-1] - 1) + eps")),
            named=True),
    Mistake('LayerNormFunction', 'centred in place into the input', 'modified its input x in place',
            edit(WIDE_LAYER_NORM, ("        mean = xw.mean(-1, keepdim=True)\n",
                                   "        mean = xw.mean(-1, keepdim=True)\n"
                                   "        xw = xw.sub_(mean)  # centred in place (into x itself "
                                   "when x is already wide)\n"
                                   "        mean = torch.zeros_like(mean)\n"))),
    Mistake('LayerNormFunction', 'bias gradient computed, then dropped, when only weight needs one',
            'compute nothing of grad_bias', edit(
                WIDE_LAYER_NORM,
                ("        wide = rstd.dtype\n",
                 "        bias_needed = ctx.needs_input_grad[2]\n        wide = rstd.dtype\n"),
                ("        if ctx.needs_input_grad[2]:\n"
                 "            gb = go.reshape(-1, D).sum(0).to(x.dtype)\n",
                 "        if ctx.needs_input_grad[1] or ctx.needs_input_grad[2]:\n"
                 "            gb = go.reshape(-1, D).sum(0).to(x.dtype)\n"
                 "            if not bias_needed:\n                gb = None\n"))),
    Mistake('RMSNormFunction', 'saves x_hat instead of x', 'instead of x', '''
class RMSNormFunction(torch.autograd.Function):
    # float32 or wider inside, per-row rstd of shape (...,) without keepdim
    @staticmethod
    def forward(ctx, x, weight, eps):
        wide = torch.promote_types(x.dtype, torch.float32)
        rstd = torch.rsqrt(x.to(wide).square().mean(-1) + eps)
        y = x.to(wide) * rstd.unsqueeze(-1)
        if weight is not None:
            y = y * weight
        ctx.save_for_backward((x.to(wide) * rstd.unsqueeze(-1)).to(x.dtype), weight, rstd)
        return y.to(x.dtype)

    @staticmethod
    def backward(ctx, grad_output):
        x, weight, rstd = ctx.saved_tensors  # x is x_hat here
        r = rstd.unsqueeze(-1)
        x_hat = x.to(r.dtype)
        go = grad_output.to(r.dtype)
        gx = gw = None
        if ctx.needs_input_grad[1]:
            gw = (go * x_hat).reshape(-1, x.shape[-1]).sum(0).to(weight.dtype)
        if ctx.needs_input_grad[0]:
            g = go if weight is None else go * weight
            gx = (r * (g - x_hat * (g * x_hat).mean(-1, keepdim=True))).to(x.dtype)
        return gx, gw, None
'''),
    Mistake('RMSNorm', 'weight created with requires_grad=False', 'does not require grad', '''
class RMSNormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, eps):
        rstd = torch.rsqrt(x.square().mean(-1, keepdim=True) + eps)
        ctx.save_for_backward(x, weight, rstd)
        y = x * rstd
        return y * weight if weight is not None else y

    @staticmethod
    def backward(ctx, grad_output):
        x, weight, rstd = ctx.saved_tensors
        x_hat = x * rstd
        gw = (grad_output * x_hat).reshape(-1, x.shape[-1]).sum(0) if ctx.needs_input_grad[1] else None
        gx = None
        if ctx.needs_input_grad[0]:
            g = grad_output * weight if weight is not None else grad_output
            gx = rstd * (g - x_hat * (g * x_hat).mean(-1, keepdim=True))
        return gx, gw, None


class RMSNorm(torch.nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = torch.nn.Parameter(torch.ones(dim), requires_grad=False)

    def forward(self, x):
        return RMSNormFunction.apply(x, self.weight, self.eps)
'''),
    Mistake('RMSNorm', 'the Function returns None for the weight', 'backward returns None for it', '''
class RMSNormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, eps):
        rstd = torch.rsqrt(x.square().mean(-1, keepdim=True) + eps)
        ctx.save_for_backward(x, weight, rstd)
        y = x * rstd
        return y * weight if weight is not None else y

    @staticmethod
    def backward(ctx, grad_output):
        x, weight, rstd = ctx.saved_tensors
        x_hat = x * rstd
        gw = (grad_output * x_hat).reshape(-1, x.shape[-1]).sum(0) if ctx.needs_input_grad[1] else None
        gx = None
        if ctx.needs_input_grad[0]:
            g = grad_output * weight if weight is not None else grad_output
            gx = rstd * (g - x_hat * (g * x_hat).mean(-1, keepdim=True))
        return gx, None, None


class RMSNorm(torch.nn.Module):
    # rows flattened before the Function, the parameter cast to x's dtype on the way
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.dim, self.eps = dim, eps
        self.weight = torch.nn.Parameter(torch.ones(dim))

    def forward(self, x):
        out = RMSNormFunction.apply(x.reshape(-1, self.dim), self.weight * 1.0, self.eps)
        return out.reshape(x.shape)
'''),
    Mistake('GroupNormFunction', 'eps hard-coded to 1e-5', 'ignores its eps argument', '''
class GroupNormFunction(torch.autograd.Function):
    # x viewed as (N, G, C/G, positions); reductions over dims (2, 3)
    @staticmethod
    def forward(ctx, x, num_groups, weight, bias, eps):
        N, C = x.shape[:2]
        v = x.reshape(N, num_groups, C // num_groups, -1)
        mean = v.mean((2, 3), keepdim=True)
        rstd = ((v - mean).square().mean((2, 3), keepdim=True) + 1e-5).rsqrt()
        y = (v - mean) * rstd
        if weight is not None:
            y = y * weight.reshape(1, num_groups, C // num_groups, 1)
        if bias is not None:
            y = y + bias.reshape(1, num_groups, C // num_groups, 1)
        ctx.save_for_backward(x, weight, mean, rstd)
        ctx.G = num_groups
        return y.reshape(x.shape)

    @staticmethod
    def backward(ctx, grad_output):
        x, weight, mean, rstd = ctx.saved_tensors
        N, C = x.shape[:2]
        G = ctx.G
        shape4 = (N, G, C // G, -1)
        x_hat = (x.reshape(shape4) - mean) * rstd
        go = grad_output.reshape(shape4)
        gx = gw = gb = None
        if ctx.needs_input_grad[2]:
            gw = (go * x_hat).sum((0, 3)).reshape(C)
        if ctx.needs_input_grad[3]:
            gb = go.sum((0, 3)).reshape(C)
        if ctx.needs_input_grad[0]:
            g = go * weight.reshape(1, G, C // G, 1) if weight is not None else go
            gx = rstd * (g - g.mean((2, 3), keepdim=True) - x_hat * (g * x_hat).mean((2, 3), keepdim=True))
            gx = gx.reshape(x.shape)
        return gx, None, gw, gb, None
'''),
]
