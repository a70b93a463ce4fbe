"""Lesson 08, review 53: the reviewer's answers that passed (jvp reading x and y from a
global that setup_context fills; a fake that keeps strides only for a 2-D transpose; beta
rounded to float32 in backward; a batching rule that calls the operator on two halves) or whose
first line named another mistake (jvp in float32, a threshold switch at beta * x = 15, out_dims
off by one where a sample's dim is the batch dim's place); the reviewer's other answers
duplicate entries already here."""

from .. import Mistake, Unusual
from .answers import LSE, SOFTPLUS, SQUARED_NORM, _edit

_RULE = ("    x = x.movedim(x_bdim, 0)\n"
         "    return squared_norm(x, dim + 1 if dim >= 0 else dim), 0")

UNUSUAL = [
    Unusual("softplus", "beta made a float64 tensor in backward (torch.tensor with dtype=)",
            _edit(SOFTPLUS, ("torch.sigmoid(ctx.beta * x)",
                             "torch.sigmoid(torch.tensor(ctx.beta, dtype=x.dtype) * x)"))),
]

MISTAKES = [
    # forward mode runs jvp right after setup_context, so values cannot show it; the global
    # keeps the last call's input and output alive
    Mistake("LogSumExp", "jvp reads x and the output from a global that setup_context fills",
            "LogSumExp keeps a call's input and output alive after the call",
            "_JVP = {}\n" + _edit(LSE, ("        ctx.save_for_forward(x, output)",
                                        "        _JVP['x'], _JVP['y'] = x, output"),
                                  ("    def jvp(ctx, x_tangent, dim_tangent):\n"
                                   "        x, output = ctx.saved_tensors",
                                   "    def jvp(ctx, x_tangent, dim_tangent):\n"
                                   "        x, output = _JVP['x'], _JVP['y']"))),
    Mistake("LogSumExp", "jvp's weights computed in float32",
            "LogSumExp.jvp loses digits at |x| = 1000",
            _edit(LSE, ("        return ((x - output.unsqueeze(ctx.dim)).exp() * x_tangent)"
                        ".sum(ctx.dim)",
                        "        p = (x.float() - output.float().unsqueeze(ctx.dim)).exp()\n"
                        "        return (p * x_tangent.float()).sum(ctx.dim).to(x.dtype)"))),
    Mistake("softplus", "a fake that keeps strides only for a 2-D transpose",
            "softplus's fake implementation returns strides (6, 3, 1)",
            _edit(SOFTPLUS, ("    return torch.empty_like(x)",
                             "    if x.dim() == 2 and x.stride() == (1, x.shape[0]):\n"
                             "        return x.new_empty(x.shape[::-1]).t()\n"
                             "    return x.new_empty(x.shape)"))),
    Mistake("softplus", "backward's beta made with torch.tensor(beta): float32",
            "softplus's backward uses beta rounded to float32",
            _edit(SOFTPLUS, ("torch.sigmoid(ctx.beta * x)",
                             "torch.sigmoid(torch.tensor(ctx.beta) * x)"))),
    Mistake("softplus", "forward's beta made with torch.tensor(beta): float32",
            "softplus uses beta rounded to float32",
            _edit(SOFTPLUS, ("    z = beta * x\n", "    z = torch.tensor(beta) * x\n"))),
    Mistake("softplus", "where(z > 15, z, log1p(exp(z))): a switch to z past 15",
            "softplus returns x itself from beta * x = 15.25 on",
            _edit(SOFTPLUS, ("    return (z.clamp(min=0) + torch.log1p(torch.exp(-z.abs()))) / beta",
                             "    return torch.where(z > 15, z, torch.log1p(torch.exp("
                             "z.clamp(max=15)))) / beta"))),
    Mistake("squared_norm", "a rule that calls the operator on two halves of the batch",
            "splits the batch into pieces",
            _edit(SQUARED_NORM, (_RULE, "    x = x.movedim(x_bdim, 0)\n"
                                        "    d = dim + 1 if dim >= 0 else dim\n"
                                        "    h = (x.shape[0] + 1) // 2\n"
                                        "    return torch.cat([squared_norm(x[:h], d), "
                                        "squared_norm(x[h:], d)]), 0"))),
    Mistake("squared_norm", "the batch dim left in place, out_dims counted with <= for <",
            "reduces the right dim but returns the wrong out_dims",
            _edit(SQUARED_NORM, (_RULE, "    d = dim % (x.dim() - 1)\n"
                                        "    inner = d + 1 if d >= x_bdim else d\n"
                                        "    return squared_norm(x, inner), "
                                        "x_bdim - 1 if d <= x_bdim else x_bdim"))),
]
