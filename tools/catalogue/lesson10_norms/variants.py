"""Lesson 10: correct answers from a second, independent review, written another way than
the lesson's (saved tensors, dtypes, module plumbing)."""

from .. import Unusual

UNUSUAL = [
    Unusual('LayerNormFunction', 'saves x and rstd only, the mean recomputed in backward', '''
class LayerNormFunction(torch.autograd.Function):
    # saves x and rstd only; the mean is recomputed in backward
    @staticmethod
    def forward(ctx, x, weight, bias, eps):
        c = x - x.mean(-1, keepdim=True)
        rstd = (c.square().mean(-1, keepdim=True) + eps) ** -0.5
        y = c * rstd
        if weight is not None:
            y = y * weight
        if bias is not None:
            y = y + bias
        ctx.save_for_backward(x, weight, rstd)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        x, weight, rstd = ctx.saved_tensors
        x_hat = (x - x.mean(-1, keepdim=True)) * rstd
        D = x.shape[-1]
        out = [None, None, None, None]
        if ctx.needs_input_grad[1]:
            out[1] = torch.einsum("...d,...d->d", grad_output, x_hat)
        if ctx.needs_input_grad[2]:
            out[2] = torch.einsum("...d->d", grad_output)
        if ctx.needs_input_grad[0]:
            g = grad_output if weight is None else grad_output * weight
            s1 = g.sum(-1, keepdim=True)
            s2 = (g * x_hat).sum(-1, keepdim=True)
            out[0] = rstd / D * (D * g - s1 - x_hat * s2)
        return tuple(out)
'''),
    Unusual('LayerNormFunction', 'one-pass variance accumulated in float64', '''
class LayerNormFunction(torch.autograd.Function):
    # one-pass E[x^2]-E[x]^2, but accumulated in float64: accurate for float32 rows like 1e4+N(0,1)
    @staticmethod
    def forward(ctx, x, weight, bias, eps):
        xd = x.double()
        mean = xd.mean(-1, keepdim=True)
        var = (xd * xd).mean(-1, keepdim=True) - mean * mean
        rstd = torch.rsqrt(var.clamp(min=0) + eps)
        mean, rstd = mean.to(x.dtype), rstd.to(x.dtype)
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
        x_hat = (x - mean) * rstd
        D = x.shape[-1]
        gx = gw = gb = None
        if ctx.needs_input_grad[1]:
            gw = (grad_output * x_hat).reshape(-1, D).sum(0)
        if ctx.needs_input_grad[2]:
            gb = grad_output.reshape(-1, D).sum(0)
        if ctx.needs_input_grad[0]:
            g = grad_output * weight if weight is not None else grad_output
            gx = rstd * (g - g.mean(-1, keepdim=True) - x_hat * (g * x_hat).mean(-1, keepdim=True))
        return gx, gw, gb, None
'''),
    Unusual('RMSNormFunction', 'F.rms_norm in forward, rstd computed beside it', '''
class RMSNormFunction(torch.autograd.Function):
    # forward by F.rms_norm itself (no graph inside forward), rstd computed beside it
    @staticmethod
    def forward(ctx, x, weight, eps):
        rstd = x.pow(2).mean(-1, keepdim=True).add(eps).rsqrt()
        ctx.save_for_backward(x, weight, rstd)
        return F.rms_norm(x, x.shape[-1:], weight, eps)

    @staticmethod
    def backward(ctx, grad_output):
        x, weight, rstd = ctx.saved_tensors
        need_x, need_w, _ = ctx.needs_input_grad
        x_hat = x * rstd
        gx = gw = None
        if need_w:
            gw = torch.einsum("...i,...i->i", grad_output, x_hat)
        if need_x:
            g = grad_output * weight if weight is not None else grad_output
            dot = torch.einsum("...i,...i->...", g, x_hat)[..., None] / x.shape[-1]
            gx = (g - x_hat * dot) * rstd
        return gx, gw, None
'''),
    Unusual('RMSNorm', 'a subclass of torch.nn.RMSNorm', '''
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


class RMSNorm(torch.nn.RMSNorm):
    """torch.nn.RMSNorm itself, its forward through the Function."""
    def __init__(self, dim, eps=1e-6):
        super().__init__(dim, eps=eps)

    def forward(self, x):
        return RMSNormFunction.apply(x, self.weight, self.eps)
'''),
    Unusual('RMSNorm', 'eps as a non-persistent buffer, nn.init.ones_', '''
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
    # eps kept as a non-persistent buffer, weight through nn.init
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.empty(dim))
        torch.nn.init.ones_(self.weight)
        self.register_buffer("eps", torch.tensor(eps, dtype=torch.float64), persistent=False)

    def forward(self, x):
        return RMSNormFunction.apply(x, self.weight, self.eps.item())
'''),
    Unusual('GroupNormFunction', 'a row helper, x_hat and rstd saved', '''
def _row_norm_backward(g, x_hat, rstd):
    """LayerNorm's input gradient on rows (last dim), no weight."""
    return rstd * (g - g.mean(-1, keepdim=True) - x_hat * (g * x_hat).mean(-1, keepdim=True))


class GroupNormFunction(torch.autograd.Function):
    # a row helper reused, saving x_hat (normalised, before the affine) and rstd only
    @staticmethod
    def forward(ctx, x, num_groups, weight, bias, eps):
        N = x.shape[0]
        rows = x.reshape(N * num_groups, -1)
        var, mean = torch.var_mean(rows, 1, correction=0, keepdim=True)
        rstd = torch.rsqrt(var + eps)
        x_hat = ((rows - mean) * rstd).reshape(x.shape)
        ctx.save_for_backward(x_hat, weight, rstd)
        ctx.num_groups = num_groups
        shape = [1, -1] + [1] * (x.dim() - 2)
        y = x_hat
        if weight is not None:
            y = y * weight.view(shape)
        if bias is not None:
            y = y + bias.view(shape)
        return y.clone() if y is x_hat else y

    @staticmethod
    def backward(ctx, grad_output):
        x_hat, weight, rstd = ctx.saved_tensors
        dims = [0] + list(range(2, x_hat.dim()))
        shape = [1, -1] + [1] * (x_hat.dim() - 2)
        gx = gw = gb = None
        if ctx.needs_input_grad[2]:
            gw = torch.sum(grad_output * x_hat, dims)
        if ctx.needs_input_grad[3]:
            gb = torch.sum(grad_output, dims)
        if ctx.needs_input_grad[0]:
            g = grad_output if weight is None else grad_output * weight.view(shape)
            rows = (x_hat.shape[0] * ctx.num_groups, -1)
            gx = _row_norm_backward(g.reshape(rows), x_hat.reshape(rows), rstd).reshape(x_hat.shape)
        return gx, None, gw, gb, None
'''),
]
