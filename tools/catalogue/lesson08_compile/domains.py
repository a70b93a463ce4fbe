"""Lesson 08: the slips only its contracts' generated inputs show (issue 37), each hint naming
what a probe proved: softplus computed in float32 for float64 x, a backward writing into
grad_output, and a LogSumExp shifted by the whole tensor's maximum, which only rows far apart
separate."""

from .. import Mistake, edit
from .answers import SOFTPLUS

LSE_GLOBAL_SHIFT = """
class LogSumExp(torch.autograd.Function):
    @staticmethod
    def forward(x, dim):
        m = x.max() if x.numel() else x.new_zeros(())
        return m + torch.log(torch.exp(x - m).sum(dim))

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, dim = inputs
        ctx.save_for_backward(x, output)
        ctx.save_for_forward(x, output)
        ctx.dim = dim

    @staticmethod
    def backward(ctx, grad_output):
        x, y = ctx.saved_tensors
        return grad_output.unsqueeze(ctx.dim) * torch.exp(x - y.unsqueeze(ctx.dim)), None

    @staticmethod
    def jvp(ctx, x_tangent, _):
        x, y = ctx.saved_tensors
        return (torch.exp(x - y.unsqueeze(ctx.dim)) * x_tangent).sum(ctx.dim)

    generate_vmap_rule = True
"""

MISTAKES = [
    Mistake("softplus", "computed in float32 inside the operator, with log1p",
            "softplus computes in float32 for float64 x: on ordinary x it matches the float64 "
            "value only to a relative", edit(
                SOFTPLUS, ("    z = beta * x\n    return (z.clamp(min=0) + torch.log1p(torch.exp("
                           "-z.abs()))) / beta",
                           "    z = beta * x.float()\n    return ((z.clamp(min=0) + torch.log1p("
                           "torch.exp(-z.abs()))) / beta).to(x.dtype)"))),
    # the reviewer's: was blamed on the fake (review at bac92e6a)
    Mistake("softplus", "forward computed and returned in float64 for every x",
            "softplus returns float64 for an x of float32", edit(
                SOFTPLUS, ("    z = beta * x\n    return (z.clamp(min=0) + torch.log1p(torch.exp("
                           "-z.abs()))) / beta",
                           "    z = beta * x.double()\n    return (z.clamp(min=0) + torch.log1p("
                           "torch.exp(-z.abs()))) / beta"))),
    Mistake("softplus", "backward writes into grad_output",
            "softplus's backward modified grad_output in place", edit(
                SOFTPLUS, ("    return grad_output * torch.sigmoid(ctx.beta * x), None",
                           "    return grad_output.mul_(torch.sigmoid(ctx.beta * x)), None"))),
    Mistake("LogSumExp", "shifted by the whole tensor's maximum",
            "LogSumExp's forward underflows on the row of values near -1000", LSE_GLOBAL_SHIFT),
]
