"""Lesson 10: correct answers written another way than the lesson's: LayerNorm's output as
x * rstd - mean * rstd or as one scale and shift per row, rstd through vector_norm, x saved
through a view (x.detach(), x.view_as(x)), GroupNorm through unflatten and var_mean over several
dims."""

from .. import Mistake, Unusual, edit
from .group_norm import _RIGHT, _grad_x
from .layer_norm import _LN_CORRECT, _LN_FORWARD, _LN_HEAD, _ln, _ln_grad_x
from .rms_norm_function import _RMS_BACKWARD, _RMS_FORWARD, _rms

_LN_RIGHT = _LN_HEAD + '''        if need_x:
            g = grad_output * weight if weight is not None else grad_output
''' + _LN_CORRECT + "        return grad_x, grad_weight, grad_bias, None\n"

_U2 = '''from torch import nn

class RMSNormFunction(torch.autograd.Function):
    """rstd from vector_norm; grad_x as rstd*(gh) - x * rstd^3 * <gh, x>/D."""
    @staticmethod
    def forward(ctx, x, weight, eps):
        D = x.shape[-1]
        ms = torch.linalg.vector_norm(x, dim=-1, keepdim=True).square() / D
        rstd = (ms + eps).rsqrt()
        ctx.save_for_backward(x, weight, rstd)
        y = x * rstd
        return y if weight is None else y * weight

    @staticmethod
    def backward(ctx, g):
        x, weight, rstd = ctx.saved_tensors
        nx, nw = ctx.needs_input_grad[:2]
        gx = gw = None
        if nw:
            gw = torch.einsum('...d,...d,...->d', g, x, rstd.squeeze(-1))
        if nx:
            gh = g if weight is None else g * weight
            dot = (gh * x).sum(-1, keepdim=True) / x.shape[-1]
            gx = rstd * gh - x * (rstd ** 3 * dot)
        return gx, gw, None

class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.normalized_shape = (dim,)
        self.eps = eps
        self.register_parameter("weight", nn.Parameter(torch.empty(dim)))
        nn.init.ones_(self.weight)

    def forward(self, x):
        compute = x.dtype if x.dtype in (torch.float32, torch.float64) else torch.float32
        if self.weight.dtype in (torch.float32, torch.float64):
            compute = torch.promote_types(compute, self.weight.dtype)
        eps = self.eps if self.eps is not None else torch.finfo(compute).eps
        out = RMSNormFunction.apply(x.to(compute), self.weight.to(compute), eps)
        return out.to(torch.result_type(x, self.weight))
'''

_RMS, _LN, _GN = _rms(), _ln_grad_x(_LN_CORRECT), _grad_x(_RIGHT)


UNUSUAL = [
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
    Unusual("LayerNormFunction", "the output as x * rstd - mean * rstd", _ln(
        _LN_RIGHT, edit(_LN_FORWARD, ("y = (x - mean) * rstd", "y = x * rstd - mean * rstd")))),
    Unusual("RMSNormFunction", "rstd from vector_norm, grad_x as rstd*g - x*rstd^3*<g, x>/D",
            _U2),
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
    Unusual("RMSNormFunction", "rstd through vector_norm, x.detach() saved (a view)", _rms(
        _RMS_BACKWARD, edit(_RMS_FORWARD, (
            "torch.rsqrt(x.square().mean(-1, keepdim=True) + eps)",
            "torch.rsqrt(torch.linalg.vector_norm(x, dim=-1, keepdim=True).square() "
            "/ x.shape[-1] + eps)"), ("save_for_backward(x, ", "save_for_backward(x.detach(), ")))),
    # the reviewer's "wrong" answer: x_hat rebuilt as x * rstd - mean * rstd; its float32 error
    # at a 1e4 offset (9.2e-5) is below F.layer_norm's own (2.5e-4)
    Unusual("LayerNormFunction", "x_hat rebuilt in backward as x * rstd - mean * rstd",
            edit(_LN, ("x_hat = (x - mean) * rstd", "x_hat = x * rstd - mean * rstd"))),
    Unusual("RMSNormFunction", "x.view_as(x) saved", edit(_RMS, (
        "ctx.save_for_backward(x, weight, rstd)", "ctx.save_for_backward(x.view_as(x), weight, "
                                                  "rstd)"))),
]

MISTAKES = [
]
