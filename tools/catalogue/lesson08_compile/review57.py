"""Lesson 08, review 57: the reviewer's wrong answers not already here (each caught, each named:
LogSumExp computing in place, in float64, or shifting only a positive max; softplus's beta in a
global, a backward through autograd.grad or aten's softplus_backward, F.softplus's threshold at
15, zero below beta * x = -30; squared_norm's dim in a global, a transpose for a movedim, a
float64 sum, grad_output scaled in place) and their unusual answers not already here."""

from .. import Mistake, Unusual
from .answers import LSE, SOFTPLUS, SQUARED_NORM, _edit

_LSE_SUM = "        return (x - m).exp().sum(dim).log() + m.squeeze(dim)"
_SP_VALUE = ("    z = beta * x\n"
             "    return (z.clamp(min=0) + torch.log1p(torch.exp(-z.abs()))) / beta")
_SP_SLOPE = "    return grad_output * torch.sigmoid(ctx.beta * x), None"
_SN_RULE = "    x = x.movedim(x_bdim, 0)"

UNUSUAL = [
    Unusual("softplus", "forward F.softplus(x, beta) (its switch at 20), the output saved, "
            "slope -expm1(-beta s)",
            _edit(SOFTPLUS, (_SP_VALUE, "    return F.softplus(x, beta=beta)"),
                  ("    ctx.save_for_backward(x)", "    ctx.save_for_backward(output)"),
                  (_SP_SLOPE, "    return grad_output * -torch.expm1(-ctx.beta * x), None"))),
    Unusual("softplus", "forward on x.contiguous(), a contiguous fake x.new_empty(x.shape)",
            _edit(SOFTPLUS, ("    z = beta * x\n", "    z = beta * x.contiguous()\n"),
                  ("    return torch.empty_like(x)", "    return x.new_empty(x.shape)"))),
    Unusual("softplus", "value and slope e^z below beta * x = -12 (within the 1e-5 tolerance)",
            _edit(SOFTPLUS,
                  (_SP_VALUE, "    z = beta * x\n"
                   "    exact = z.clamp(min=0) + torch.log1p(torch.exp(-z.abs()))\n"
                   "    return torch.where(z < -12, torch.exp(z), exact) / beta"),
                  (_SP_SLOPE, "    z = ctx.beta * x\n    return grad_output * torch.where("
                   "z < -12, torch.exp(z), torch.sigmoid(z)), None"))),
]

MISTAKES = [
    Mistake("LogSumExp", "forward computes in place on x (x.sub_(m).exp_())",
            "LogSumExp.forward modified its input x in place",
            _edit(LSE, (_LSE_SUM, "        return x.sub_(m).exp_().sum(dim).log_()"
                                  " + m.squeeze(dim)"))),
    Mistake("LogSumExp", "computed in float64 for a float32 x (forward, backward and jvp)",
            "LogSumExp's output has dtype torch.float64 for torch.float32 inputs",
            _edit(LSE, ("        m = x.amax(dim, keepdim=True)\n",
                        "        x = x.double()\n        m = x.amax(dim, keepdim=True)\n"),
                  ("        return grad_output.unsqueeze(ctx.dim) * (x - output",
                   "        return grad_output.double().unsqueeze(ctx.dim) * (x.double()"
                   " - output"),
                  ("        return ((x - output", "        return ((x.double() - output"))),
    Mistake("LogSumExp", "the max subtracted only where it is positive (clamp(min=0))",
            "subtract that row's own max along dim",
            _edit(LSE, ("        m = x.amax(dim, keepdim=True)\n",
                        "        m = x.amax(dim, keepdim=True).clamp(min=0)\n"))),
    Mistake("softplus", "beta kept in a module global by setup_context",
            "softplus's backward used another call's beta",
            _edit(SOFTPLUS, ("    ctx.beta = beta", "    global _BETA\n    _BETA = beta"),
                  ("torch.sigmoid(ctx.beta * x)", "torch.sigmoid(_BETA * x)"))),
    Mistake("softplus", "backward differentiates F.softplus with torch.autograd.grad",
            "softplus.backward calls torch.autograd.grad",
            _edit(SOFTPLUS, (_SP_SLOPE, "    with torch.enable_grad():\n"
                             "        xx = x.detach().requires_grad_()\n"
                             "        y = F.softplus(xx, beta=ctx.beta)\n"
                             "        g, = torch.autograd.grad(y, xx, grad_output)\n"
                             "    return g, None"))),
    Mistake("softplus", "forward F.softplus with threshold=15",
            "softplus returns x itself from beta * x = 15.25 on",
            _edit(SOFTPLUS, (_SP_VALUE, "    return F.softplus(x, beta=beta, threshold=15.0)"))),
    Mistake("softplus", "backward calls aten's softplus_backward",
            "uses the built-in op softplus_backward",
            _edit(SOFTPLUS, (_SP_SLOPE, "    return torch.ops.aten.softplus_backward("
                             "grad_output, x, ctx.beta, 20.0), None"))),
    Mistake("softplus", "value 0 below beta * x = -30", "softplus loses the left tail",
            _edit(SOFTPLUS, (_SP_VALUE, "    z = beta * x\n"
                             "    exact = z.clamp(min=0) + torch.log1p(torch.exp(-z.abs()))\n"
                             "    return torch.where(z < -30, torch.zeros_like(z), exact)"
                             " / beta"))),
    Mistake("squared_norm", "dim kept in a module global by setup_context",
            "right for each call alone but not for two calls in one graph",
            _edit(SQUARED_NORM, ("    ctx.dim = dim", "    global _DIM\n    _DIM = dim"),
                  ("grad_output.unsqueeze(ctx.dim)", "grad_output.unsqueeze(_DIM)"))),
    Mistake("squared_norm", "the rule swaps the batch dim to the front with transpose(0, b)",
            "squared_norm's batching rule reorders a sample's dims",
            _edit(SQUARED_NORM, (_SN_RULE, "    x = x.transpose(0, x_bdim)"))),
    Mistake("squared_norm", "the rule swaps the batch dim to the end with transpose(b, -1)",
            "squared_norm's batching rule reorders a sample's dims",
            _edit(SQUARED_NORM, (_SN_RULE + "\n    return squared_norm(x, dim + 1 if dim >= 0 "
                                 "else dim), 0",
                                 "    x = x.transpose(x_bdim, -1)\n"
                                 "    return squared_norm(x, dim if dim >= 0 else dim - 1), -1"))),
    Mistake("squared_norm", "the sum accumulated and returned in float64, fake float64 too",
            "squared_norm's output has dtype torch.float64 for torch.float32 inputs",
            _edit(SQUARED_NORM,
                  ("    return (x * x).sum(dim)",
                   "    return (x * x).sum(dim, dtype=torch.float64)"),
                  ("x.shape[d + 1:])", "x.shape[d + 1:], dtype=torch.float64)"),
                  ("    return 2 * x * grad_output.unsqueeze(ctx.dim), None",
                   "    return (2 * x * grad_output.unsqueeze(ctx.dim)).to(x.dtype), None"))),
    Mistake("squared_norm", "backward scales grad_output in place (grad_output.mul_(2))",
            "squared_norm's backward modified grad_output in place",
            _edit(SQUARED_NORM, ("    return 2 * x * grad_output.unsqueeze(ctx.dim), None",
                                 "    return x * grad_output.mul_(2).unsqueeze(ctx.dim), None"))),
]
