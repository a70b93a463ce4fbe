"""Lesson 08, review 54: a backward (and jvp) that guesses dim from shapes (the first place
x and the output or grad_output differ, else the last), which the cases without equal sizes
could not tell from dim; and the reviewer's correct but unusual answers."""

from .. import Mistake, Unusual
from .answers import LSE, SQUARED_NORM, _edit

_GUESS = ("def _dim(x, out):\n"
          "    for i in range(out.dim()):\n"
          "        if x.shape[i] != out.shape[i]:\n"
          "            return i\n"
          "    return x.dim() - 1\n")

UNUSUAL = [
    Unusual('LogSumExp', 'dim saved as a 0-d int64 tensor in both save lists, weights by torch.softmax, jvp by einsum',
            '# UNUSUAL (correct): dim saved as a 0-d int64 tensor through both save lists; softmax for weights\nimport torch\nclass LogSumExp(torch.autograd.Function):\n    generate_vmap_rule = True\n    @staticmethod\n    def forward(x, dim):\n        m = x.amax(dim, keepdim=True)\n        return (x - m).exp().sum(dim).log() + m.squeeze(dim)\n    @staticmethod\n    def setup_context(ctx, inputs, output):\n        x, dim = inputs\n        ctx.save_for_backward(x, torch.tensor(dim))\n        ctx.save_for_forward(x, torch.tensor(dim))\n    @staticmethod\n    def backward(ctx, grad_output):\n        x, d = ctx.saved_tensors\n        d = int(d)\n        return grad_output.unsqueeze(d) * torch.softmax(x, d), None\n    @staticmethod\n    def jvp(ctx, x_tangent, dim_tangent):\n        x, d = ctx.saved_tensors\n        d = int(d)\n        return torch.einsum("...,...->...", torch.softmax(x, d).movedim(d, -1), x_tangent.movedim(d, -1)).sum(-1)\n'),
    Unusual('LogSumExp', 'forward by torch.logsumexp, p computed once in setup_context and saved',
            '# UNUSUAL (correct per the page): forward via torch.logsumexp, p computed once in setup_context and saved\nimport torch\nclass LogSumExp(torch.autograd.Function):\n    generate_vmap_rule = True\n    @staticmethod\n    def forward(x, dim):\n        return torch.logsumexp(x, dim)\n    @staticmethod\n    def setup_context(ctx, inputs, output):\n        x, dim = inputs\n        ctx.dim = dim\n        p = (x - output.unsqueeze(dim)).exp()\n        ctx.save_for_backward(p)\n        ctx.save_for_forward(p)\n    @staticmethod\n    def backward(ctx, grad_output):\n        p, = ctx.saved_tensors\n        return grad_output.unsqueeze(ctx.dim) * p, None\n    @staticmethod\n    def jvp(ctx, x_tangent, dim_tangent):\n        p, = ctx.saved_tensors\n        return (p * x_tangent).sum(ctx.dim)\n'),
    Unusual('softplus', 'forward logaddexp(z, 0) / beta, only the output saved, slope -expm1(-beta * s)',
            '# UNUSUAL (correct): forward logaddexp(z, 0)/beta; setup_context saves the OUTPUT only; slope -expm1(-beta*s)\nimport torch\ndef softplus(x: torch.Tensor, beta: float) -> torch.Tensor:\n    return torch.logaddexp(beta * x, torch.zeros((), dtype=x.dtype, device=x.device)) / beta\nsoftplus = torch.library.custom_op("autograd_course::softplus", softplus, mutates_args=())\n@softplus.register_fake\ndef _(x, beta):\n    return torch.empty_like(x)\ndef sc(ctx, inputs, output):\n    _, beta = inputs\n    ctx.save_for_backward(output); ctx.beta = beta\ndef bw(ctx, g):\n    s, = ctx.saved_tensors\n    return g * -torch.expm1(-ctx.beta * s), None\nsoftplus.register_autograd(bw, setup_context=sc)\n'),
    Unusual('squared_norm', 'rule moves the batch dim last and computes x.square().sum(d) without the operator, out_dims=-1',
            '# UNUSUAL (correct): batch moved last; negative dim shifted by -1; computed in the rule with plain torch ops (no call of the op)\nimport torch\ndef squared_norm(x: torch.Tensor, dim: int) -> torch.Tensor:\n    return (x * x).sum(dim)\nsquared_norm = torch.library.custom_op("autograd_course::squared_norm", squared_norm, mutates_args=())\n@squared_norm.register_fake\ndef _(x, dim):\n    r = dim % x.dim()\n    return x.new_empty(x.shape[:r] + x.shape[r + 1:])\ndef sc(ctx, inputs, output):\n    x, dim = inputs\n    ctx.save_for_backward(x); ctx.dim = dim\ndef bw(ctx, g):\n    x, = ctx.saved_tensors\n    return 2 * x * g.unsqueeze(ctx.dim), None\nsquared_norm.register_autograd(bw, setup_context=sc)\ndef rule(info, in_dims, x, dim):\n    b, _ = in_dims\n    x = x.movedim(b, -1)\n    d = dim if dim >= 0 else dim - 1\n    return x.square().sum(d), -1\nsquared_norm.register_vmap(rule)\n'),
    Unusual('squared_norm', 'fake written as x.sum(dim) on the fake tensor, forward vector_norm(x) ** 2',
            '# UNUSUAL (correct): fake by running a reduction on the fake tensor; forward by vector_norm**2; backward x.mul(2g)\nimport torch\ndef squared_norm(x: torch.Tensor, dim: int) -> torch.Tensor:\n    return torch.linalg.vector_norm(x, 2, dim) ** 2\nsquared_norm = torch.library.custom_op("autograd_course::squared_norm", squared_norm, mutates_args=())\n@squared_norm.register_fake\ndef _(x, dim):\n    return x.sum(dim)\ndef sc(ctx, inputs, output):\n    x, dim = inputs\n    ctx.save_for_backward(x); ctx.dim = dim\ndef bw(ctx, g):\n    x, = ctx.saved_tensors\n    return x.mul(g.unsqueeze(ctx.dim).mul(2)), None\nsquared_norm.register_autograd(bw, setup_context=sc)\ndef rule(info, in_dims, x, dim):\n    b, _ = in_dims\n    x = x.movedim(b, 0)\n    return squared_norm(x, dim + 1 if dim >= 0 else dim), 0\nsquared_norm.register_vmap(rule)\n'),
]

MISTAKES = [
    Mistake("LogSumExp", "backward and jvp guess dim from shapes, no ctx.dim",
            "LogSumExp's backward guesses dim from shapes",
            _GUESS + _edit(LSE, ("        ctx.dim = dim\n", ""),
                           ("        return grad_output.unsqueeze(ctx.dim) * "
                            "(x - output.unsqueeze(ctx.dim)).exp(), None",
                            "        d = _dim(x, output)\n"
                            "        return grad_output.unsqueeze(d) * "
                            "(x - output.unsqueeze(d)).exp(), None"),
                           ("        return ((x - output.unsqueeze(ctx.dim)).exp() * x_tangent)"
                            ".sum(ctx.dim)",
                            "        d = _dim(x, output)\n"
                            "        return ((x - output.unsqueeze(d)).exp() * x_tangent).sum(d)"))),
    Mistake("squared_norm", "backward guesses dim from x's and grad_output's shapes",
            "squared_norm's backward guesses dim from shapes",
            _GUESS + _edit(SQUARED_NORM,
                           ("    return 2 * x * grad_output.unsqueeze(ctx.dim), None",
                            "    return 2 * x * grad_output.unsqueeze(_dim(x, grad_output)), None"))),
]
