"""Lesson 10: answers that compute in float64 "for accuracy" whatever x's dtype and save a
float64 normalised input for a float32 x, over the saving budget's one full-size tensor in x's
dtype (seen only by the float32 case of the saved check; the review's W6 and W6b)."""

from .. import Mistake


_GN_FLOAT64_COPY = '''
class GroupNormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, num_groups, weight, bias, eps):
        N, C = x.shape[:2]
        gs = C // num_groups * x.shape[2:].numel()
        rows = x.double().reshape(N, num_groups, gs)
        mean = rows.mean(-1, keepdim=True)
        centred = rows - mean
        rstd = torch.rsqrt(centred.square().mean(-1, keepdim=True) + eps)
        x_hat = centred * rstd                     # float64, full size: saved
        per_channel = (C,) + (1,) * (x.dim() - 2)
        y = x_hat.reshape(x.shape).to(x.dtype)
        if weight is not None:
            y = y * weight.reshape(per_channel)
        if bias is not None:
            y = y + bias.reshape(per_channel)
        ctx.save_for_backward(x_hat, weight, rstd)
        ctx.shape, ctx.dtype = x.shape, x.dtype
        return y

    @staticmethod
    def backward(ctx, grad_output):
        x_hat, weight, rstd = ctx.saved_tensors
        shape = ctx.shape
        C = shape[1]
        per_channel = (C,) + (1,) * (len(shape) - 2)
        summed = [0, *range(2, len(shape))]
        gx = gw = gb = None
        if ctx.needs_input_grad[3]:
            gb = grad_output.sum(summed)
        if ctx.needs_input_grad[2]:
            gw = (grad_output.double() * x_hat.reshape(shape)).sum(summed).to(ctx.dtype)
        if ctx.needs_input_grad[0]:
            g = grad_output.double()
            if weight is not None:
                g = g * weight.double().reshape(per_channel)
            g = g.reshape(x_hat.shape)
            gx = rstd * (g - g.mean(-1, keepdim=True) - x_hat * (g * x_hat).mean(-1, keepdim=True))
            gx = gx.reshape(shape).to(ctx.dtype)
        return gx, None, gw, gb, None
'''


_LN_FLOAT64_COPY = '''
class LayerNormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias, eps):
        xd = x.double()
        mean = xd.mean(-1, keepdim=True)
        centred = xd - mean
        rstd = torch.rsqrt(centred.square().mean(-1, keepdim=True) + eps)
        x_hat = centred * rstd
        y = x_hat.to(x.dtype)
        if weight is not None:
            y = y * weight
        if bias is not None:
            y = y + bias
        ctx.save_for_backward(x_hat, weight, rstd)
        ctx.dtype = x.dtype
        return y

    @staticmethod
    def backward(ctx, grad_output):
        x_hat, weight, rstd = ctx.saved_tensors
        D = x_hat.shape[-1]
        gx = gw = gb = None
        if ctx.needs_input_grad[2]:
            gb = grad_output.reshape(-1, D).sum(0)
        if ctx.needs_input_grad[1]:
            gw = (grad_output.double() * x_hat).reshape(-1, D).sum(0).to(ctx.dtype)
        if ctx.needs_input_grad[0]:
            g = grad_output.double()
            if weight is not None:
                g = g * weight.double()
            gx = (rstd * (g - g.mean(-1, keepdim=True) - x_hat * (g * x_hat).mean(-1, keepdim=True))).to(ctx.dtype)
        return gx, gw, gb, None
'''


MISTAKES = [
    Mistake("GroupNormFunction", "a float64 normalised copy saved for a float32 x",
            "saved a torch.float64 full-size tensor", _GN_FLOAT64_COPY),
    Mistake("LayerNormFunction", "a float64 normalised copy saved for a float32 x",
            "saved a torch.float64 full-size tensor", _LN_FLOAT64_COPY),
]
