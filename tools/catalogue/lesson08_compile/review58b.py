"""Lesson 08, review 58b: the reviewer's wrong answers not already here (a batching rule that
squares the caller's batch in place; LogSumExp's forward shifting x in place and back, its
backward and squared_norm's computing in the saved x) and their unusual answers not already here
(a dim normalised against the batched x; softplus in float64 with a switch past 30)."""

from .. import Mistake, Unusual
from .answers import LSE, SOFTPLUS, SQUARED_NORM, _edit

_SN_RULE = ("    x = x.movedim(x_bdim, 0)\n"
            "    return squared_norm(x, dim + 1 if dim >= 0 else dim), 0")

UNUSUAL = [
    Unusual("squared_norm", "the rule's dim as dim % x.dim() + (dim >= 0) on the batched x",
            _edit(SQUARED_NORM, (_SN_RULE, "    x = x.movedim(x_bdim, 0)\n"
                                 "    return squared_norm(x, dim % x.dim() + (dim >= 0)), 0"))),
    Unusual("softplus", "computed in float64 and cast back, a switch past 30, x and s saved",
            _edit(SOFTPLUS,
                  ("    z = beta * x\n"
                   "    return (z.clamp(min=0) + torch.log1p(torch.exp(-z.abs()))) / beta",
                   "    z = beta * x.double()\n"
                   "    return torch.where(z > 30, z, torch.log1p(torch.exp(z.clamp(max=30))))"
                   ".div(beta).to(x.dtype)"),
                  ("    ctx.save_for_backward(x)", "    ctx.save_for_backward(x, output)"),
                  ("    x, = ctx.saved_tensors\n"
                   "    return grad_output * torch.sigmoid(ctx.beta * x), None",
                   "    x, s = ctx.saved_tensors\n"
                   "    return grad_output * torch.exp(ctx.beta * x - ctx.beta * s), None"))),
]

MISTAKES = [
    Mistake("squared_norm", "the rule squares the caller's batch in place (x.mul_(x))",
            "squared_norm's batching rule modified its input x in place",
            _edit(SQUARED_NORM, (_SN_RULE, "    x = x.movedim(x_bdim, 0)\n"
                                 "    return x.mul_(x).sum(dim + 1 if dim >= 0 else dim), 0"))),
    Mistake("LogSumExp", "forward shifts x in place and shifts it back (x.sub_(m), x.add_(m))",
            "LogSumExp.forward modified its input x in place",
            _edit(LSE, ("        return (x - m).exp().sum(dim).log() + m.squeeze(dim)",
                        "        x.sub_(m)\n"
                        "        out = x.exp().sum(dim).log()\n"
                        "        x.add_(m)\n"
                        "        return out + m.squeeze(dim)"))),
    Mistake("LogSumExp", "backward computes in the saved x (x.sub_(...).exp_().mul_(...))",
            "LogSumExp.backward modified its input x in place",
            _edit(LSE, ("        return grad_output.unsqueeze(ctx.dim) * (x - output.unsqueeze("
                        "ctx.dim)).exp(), None",
                        "        return x.sub_(output.unsqueeze(ctx.dim)).exp_().mul_("
                        "grad_output.unsqueeze(ctx.dim)), None"))),
    Mistake("squared_norm", "backward computes in the saved x (x.mul_(2).mul_(...))",
            "squared_norm.backward modified its input x in place",
            _edit(SQUARED_NORM, ("    return 2 * x * grad_output.unsqueeze(ctx.dim), None",
                                 "    return x.mul_(2).mul_(grad_output.unsqueeze(ctx.dim)), "
                                 "None"))),
]
