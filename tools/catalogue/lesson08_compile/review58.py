"""Lesson 08, review 58: the reviewer's wrong answers not already here (LogSumExp's softmax or
dim in a module global, a .view after movedim, backward's softmax in float32; softplus switching
on x rather than beta * x, computing and returning float64, a slope from expm1 of the saved
output; squared_norm's batch dim left in place with a negative dim, a fake that slices with a
negative dim, x kept as a ctx attribute) and their unusual answers not already here."""

from .. import Mistake, Unusual
from .answers import LSE, SOFTPLUS, SQUARED_NORM, _edit

_LSE_MAX = "        m = x.amax(dim, keepdim=True)\n"
_LSE_SUM = "        return (x - m).exp().sum(dim).log() + m.squeeze(dim)"
_LSE_BWD = ("        return grad_output.unsqueeze(ctx.dim) * (x - output.unsqueeze(ctx.dim)).exp()"
            ", None")
_SP_VALUE = ("    z = beta * x\n"
             "    return (z.clamp(min=0) + torch.log1p(torch.exp(-z.abs()))) / beta")
_SP_SAVE = "    ctx.save_for_backward(x)"
_SP_SLOPE = ("    x, = ctx.saved_tensors\n"
             "    return grad_output * torch.sigmoid(ctx.beta * x), None")
_SN_RULE = ("    x = x.movedim(x_bdim, 0)\n"
            "    return squared_norm(x, dim + 1 if dim >= 0 else dim), 0")

UNUSUAL = [
    Unusual("LogSumExp", "max(d).values with dim normalised, log1p(sum - 1)",
            _edit(LSE, (_LSE_MAX, "        d = dim % x.dim()\n"
                        "        m = x.max(d, keepdim=True).values\n"),
                  (_LSE_SUM, "        return torch.log1p((x - m).exp().sum(d) - 1)"
                   " + m.squeeze(d)"))),
    Unusual("LogSumExp", "the shift clamped at -700 (still exact for |x| up to 1000)",
            _edit(LSE, (_LSE_MAX, "        m = x.amax(dim, keepdim=True).clamp(min=-700)\n"))),
    Unusual("softplus", "x and the output saved, slope exp(beta x - beta s)",
            _edit(SOFTPLUS, (_SP_SAVE, "    ctx.save_for_backward(x, output)"),
                  (_SP_SLOPE, "    x, s = ctx.saved_tensors\n"
                   "    return grad_output * torch.exp(ctx.beta * x - ctx.beta * s), None"))),
    Unusual("squared_norm", "batch dim moved last, a negative dim less 1, out_dims -1",
            _edit(SQUARED_NORM, (_SN_RULE, "    x = x.movedim(x_bdim, -1)\n"
                                 "    return squared_norm(x, dim if dim >= 0 else dim - 1), -1"))),
]

MISTAKES = [
    Mistake("LogSumExp", "the softmax kept in a module global by setup_context for backward",
            "LogSumExp.forward kept state outside ctx: _P in a module global",
            _edit(LSE, ("        ctx.save_for_backward(x, output)\n",
                        "        global _P\n"
                        "        _P = (x - output.unsqueeze(dim)).exp()\n"),
                  ("        x, output = ctx.saved_tensors\n" + _LSE_BWD,
                   "        return grad_output.unsqueeze(ctx.dim) * _P, None"))),
    Mistake("LogSumExp", "dim kept in a module global by setup_context",
            "right for each call alone but not for two calls in one graph",
            _edit(LSE, ("        ctx.dim = dim\n", "        global _DIM\n        _DIM = dim\n"),
                  (_LSE_BWD, "        return grad_output.unsqueeze(_DIM) * (x - output"
                   ".unsqueeze(_DIM)).exp(), None"),
                  ("        return ((x - output.unsqueeze(ctx.dim)).exp() * x_tangent)"
                   ".sum(ctx.dim)",
                   "        return ((x - output.unsqueeze(_DIM)).exp() * x_tangent).sum(_DIM)"))),
    Mistake("LogSumExp", ".view after movedim (not contiguous for a dim other than the last)",
            "view size is not compatible",
            _edit(LSE, (_LSE_MAX + "        m = torch.where(torch.isfinite(m), m, "
                        "torch.zeros_like(m))\n" + _LSE_SUM,
                        "        xt = x.movedim(dim, -1)\n"
                        "        flat = xt.view(-1, xt.shape[-1])\n"
                        "        m = flat.amax(-1, keepdim=True)\n"
                        "        y = (flat - m).exp().sum(-1).log() + m.squeeze(-1)\n"
                        "        return y.view(xt.shape[:-1])"))),
    Mistake("LogSumExp", "backward's softmax computed in float32",
            "a step in float32",
            _edit(LSE, (_LSE_BWD, "        return grad_output.unsqueeze(ctx.dim) * (x - output"
                        ".unsqueeze(ctx.dim)).float().exp().to(x.dtype), None"))),
    Mistake("softplus", "switch to x where x > 20, not beta * x",
            "softplus's output is wrong in float64",
            _edit(SOFTPLUS, (_SP_VALUE, "    z = beta * x\n"
                             "    return torch.where(x > 20, x, torch.log1p(torch.exp(-z.abs()))"
                             " / beta + x.clamp(min=0))"))),
    Mistake("softplus", "computed in float64 and returned float64, fake float64 too",
            "softplus's output has dtype torch.float64 for torch.float32 inputs",
            _edit(SOFTPLUS, ("    z = beta * x\n", "    z = beta * x.double()\n"),
                  ("    return torch.empty_like(x)",
                   "    return torch.empty_like(x, dtype=torch.float64)"))),
    Mistake("softplus", "slope e / (1 + e), e = expm1(beta s), from the saved output",
            "grad_x contains inf or nan where the true gradient is finite",
            _edit(SOFTPLUS, (_SP_SAVE, "    ctx.save_for_backward(output)"),
                  (_SP_SLOPE, "    s, = ctx.saved_tensors\n"
                   "    e = torch.expm1(ctx.beta * s)\n"
                   "    return grad_output * e / (1 + e), None"))),
    Mistake("squared_norm", "batch dim left in place, a negative dim compared with it",
            "squared_norm's output under vmap has shape",
            _edit(SQUARED_NORM, (_SN_RULE, "    d = dim + 1 if dim >= x_bdim else dim\n"
                                 "    return squared_norm(x, d), x_bdim if d > x_bdim"
                                 " else x_bdim - 1"))),
    Mistake("squared_norm", "the fake slices with dim itself (a negative dim)",
            "squared_norm's fake implementation returns shape",
            _edit(SQUARED_NORM, ("    d = dim % x.dim()\n", "    d = dim\n"))),
    Mistake("squared_norm", "setup_context keeps x as a ctx attribute",
            "squared_norm stores a tensor as ctx.x",
            _edit(SQUARED_NORM, ("    ctx.save_for_backward(x)", "    ctx.x = x"),
                  ("    x, = ctx.saved_tensors\n    return 2 * x",
                   "    x = ctx.x\n    return 2 * x"))),
]
