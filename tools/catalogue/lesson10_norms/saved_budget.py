"""Lesson 10: answers that compute in float64 "for accuracy" whatever x's dtype and save a
float64 normalised input, or float64 per-row statistics, for a float32 x, over the saving
budget's one full-size tensor in x's dtype and numbers per row in float32 (seen only by the
float32 case of the saved check; the reviews' W6 and W6b, and the later W6 and W8); and a copy
of the weight, which the budget counts where the weight itself is free."""

from .. import Mistake, edit
from .rms_norm_function import _RMS_BACKWARD, _RMS_FORWARD, _rms


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


# the mean square in float64 "for accuracy": its rstd saved in float64 for a float32 x
_RMS_FLOAT64_RSTD = _rms(
    edit(_RMS_BACKWARD, ("x_hat = x * rstd", "x_hat = (x * rstd).to(x.dtype)"),
         ("grad_x = rstd * (g - x_hat * (g * x_hat).mean(-1, keepdim=True))",
          "grad_x = (rstd * (g - x_hat * (g * x_hat).mean(-1, keepdim=True))).to(x.dtype)")),
    edit(_RMS_FORWARD, ("torch.rsqrt(x.square()", "torch.rsqrt(x.double().square()"),
         ("y = x * rstd", "y = (x * rstd).to(x.dtype)")))


_LN_FLOAT64_STATISTICS = '''
class LayerNormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias, eps):
        wide = x.double()
        mean = wide.mean(-1, keepdim=True)
        rstd = torch.rsqrt((wide - mean).square().mean(-1, keepdim=True) + eps)
        y = ((wide - mean) * rstd).to(x.dtype)
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
        if ctx.needs_input_grad[2]:
            gb = grad_output.reshape(-1, D).sum(0)
        if ctx.needs_input_grad[1]:
            gw = (grad_output * x_hat).reshape(-1, D).sum(0).to(x.dtype)
        if ctx.needs_input_grad[0]:
            g = grad_output * weight if weight is not None else grad_output
            gx = (rstd * (g - g.mean(-1, keepdim=True)
                          - x_hat * (g * x_hat).mean(-1, keepdim=True))).to(x.dtype)
        return gx, gw, gb, None
'''


MISTAKES = [
    Mistake("RMSNormFunction", "float64 rstd saved for a float32 x",
            "1 tensor of one number per row in torch.float64", _RMS_FLOAT64_RSTD),
    Mistake("LayerNormFunction", "float64 mean and rstd saved for a float32 x",
            "2 tensors of one number per row in torch.float64", _LN_FLOAT64_STATISTICS),
    Mistake("RMSNormFunction", "a copy of the weight saved", "saved a copy of the weight",
            _rms(forward=edit(_RMS_FORWARD, ("ctx.save_for_backward(x, weight, rstd)",
                                             "ctx.save_for_backward(x, None if weight is None "
                                             "else weight.clone(), rstd)")))),
    Mistake("GroupNormFunction", "a float64 normalised copy saved for a float32 x",
            "saved a torch.float64 full-size tensor", _GN_FLOAT64_COPY),
    Mistake("LayerNormFunction", "a float64 normalised copy saved for a float32 x",
            "saved a torch.float64 full-size tensor", _LN_FLOAT64_COPY),
]
