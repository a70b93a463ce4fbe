"""Lesson 08: answers with known verdicts for LogSumExp (forward-mode jvp, vmap, the
setup_context form, a stable forward)."""

from .. import Mistake, Unusual
from .answers import LSE, _edit


UNUSUAL = [
    Unusual("LogSumExp", "torch.logsumexp in forward, torch.softmax in backward and jvp", '''
class LogSumExp(torch.autograd.Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(x, dim):
        return torch.logsumexp(x, dim)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.dim = inputs[1]
        ctx.save_for_backward(inputs[0])
        ctx.save_for_forward(inputs[0])

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return grad_output.unsqueeze(ctx.dim) * torch.softmax(x, ctx.dim), None

    @staticmethod
    def jvp(ctx, x_tangent, dim_tangent):
        x, = ctx.saved_tensors
        return (torch.softmax(x, ctx.dim) * x_tangent).sum(ctx.dim)
'''),
    Unusual("LogSumExp", "a hand-written vmap staticmethod instead of generate_vmap_rule",
            _edit(LSE, ("    generate_vmap_rule = True\n", '''
    @staticmethod
    def vmap(info, in_dims, x, dim):
        x_bdim, _ = in_dims
        x = x.movedim(x_bdim, 0)
        inner = dim + 1 if dim >= 0 else dim
        return LogSumExp.apply(x, inner), 0
'''))),
    Unusual("LogSumExp", "the max subtracted with no guard: nan on an all -inf row, which the "
            "contract (|x| up to 1000) leaves out and the lesson shows ungraded",
            _edit(LSE, ("        m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))\n",
                        ""))),
    Unusual("LogSumExp", "max via x.max(dim).values and keepdim=False arithmetic", '''
class LogSumExp(torch.autograd.Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(x, dim):
        m = x.max(dim).values if x.numel() else x.sum(dim)
        m = m.nan_to_num(0.0, 0.0, 0.0)
        return m + torch.log(torch.sum(torch.exp(x - m.unsqueeze(dim)), dim))

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, ctx.dim = inputs
        ctx.save_for_backward(x, output)
        ctx.save_for_forward(x, output)

    @staticmethod
    def backward(ctx, grad_output):
        x, y = ctx.saved_tensors
        weights = torch.exp(x - y.unsqueeze(ctx.dim))
        return weights * grad_output.unsqueeze(ctx.dim), None

    @staticmethod
    def jvp(ctx, x_tangent, _):
        x, y = ctx.saved_tensors
        return torch.einsum("...,...->...", torch.exp(x - y.unsqueeze(ctx.dim)),
                            x_tangent).sum(ctx.dim)
'''),
    Unusual("LogSumExp", "saves only x; softmax recomputed in backward and jvp", '''
class LogSumExp(torch.autograd.Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(x, dim):
        m = x.amax(dim, keepdim=True).detach()
        m = torch.nan_to_num(m, neginf=0.0, posinf=0.0)
        return torch.log(torch.sum(torch.exp(x - m), dim)) + m.squeeze(dim)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])
        ctx.save_for_forward(inputs[0])
        ctx.dim = inputs[1]

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g.unsqueeze(ctx.dim) * torch.softmax(x, ctx.dim), None

    @staticmethod
    def jvp(ctx, t, _):
        x, = ctx.saved_tensors
        return (torch.softmax(x, ctx.dim) * t).sum(ctx.dim)
'''),
    Unusual("LogSumExp", "the softmax computed in setup_context and saved; dim made non-negative",
            '''
class LogSumExp(torch.autograd.Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(x, dim):
        return torch.logsumexp(x, dim)

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, dim = inputs
        ctx.dim = dim % x.dim()
        p = torch.exp(x - output.unsqueeze(ctx.dim))
        ctx.save_for_backward(p)
        ctx.save_for_forward(p)

    @staticmethod
    def backward(ctx, g):
        p, = ctx.saved_tensors
        return p * g.unsqueeze(ctx.dim), None

    @staticmethod
    def jvp(ctx, t, _):
        p, = ctx.saved_tensors
        return (p * t).sum(ctx.dim)
'''),
    Unusual("LogSumExp", "everything on the last dim with movedim", '''
class LogSumExp(torch.autograd.Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(x, dim):
        z = x.movedim(dim, -1)
        m = z.max(-1).values
        m = torch.where(m.isinf(), torch.zeros_like(m), m)
        return m + torch.log((z - m[..., None]).exp().sum(-1))

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, dim = inputs
        ctx.dim = dim
        ctx.save_for_backward(x, output)
        ctx.save_for_forward(x, output)

    @staticmethod
    def backward(ctx, g):
        x, y = ctx.saved_tensors
        p = (x.movedim(ctx.dim, -1) - y[..., None]).exp()
        return (g[..., None] * p).movedim(-1, ctx.dim), None

    @staticmethod
    def jvp(ctx, t, _):
        x, y = ctx.saved_tensors
        p = (x.movedim(ctx.dim, -1) - y[..., None]).exp()
        return (p * t.movedim(ctx.dim, -1)).sum(-1)
'''),
]


MISTAKES = [
    # the review's: the hint names setup_context, the method that set it, not forward
    Mistake("LogSumExp", "dim kept on the class by setup_context (LogSumExp.dim = dim)",
            "LogSumExp.setup_context sets LogSumExp.dim",
            _edit(LSE, ("        ctx.dim = dim\n", "        LogSumExp.dim = dim\n"),
                  ("unsqueeze(ctx.dim) * (x - output.unsqueeze(ctx.dim))",
                   "unsqueeze(LogSumExp.dim) * (x - output.unsqueeze(LogSumExp.dim))"),
                  ("(x - output.unsqueeze(ctx.dim)).exp() * x_tangent).sum(ctx.dim)",
                   "(x - output.unsqueeze(LogSumExp.dim)).exp() * x_tangent).sum(LogSumExp.dim)"))),
    Mistake("LogSumExp", "dim kept on the class by forward (LogSumExp.dim = dim)",
            "LogSumExp.forward sets LogSumExp.dim",
            _edit(LSE, ("        m = x.amax(dim, keepdim=True)\n",
                        "        LogSumExp.dim = dim\n        m = x.amax(dim, keepdim=True)\n"),
                  ("        ctx.dim = dim\n", ""),
                  ("unsqueeze(ctx.dim) * (x - output.unsqueeze(ctx.dim))",
                   "unsqueeze(LogSumExp.dim) * (x - output.unsqueeze(LogSumExp.dim))"),
                  ("(x - output.unsqueeze(ctx.dim)).exp() * x_tangent).sum(ctx.dim)",
                   "(x - output.unsqueeze(LogSumExp.dim)).exp() * x_tangent).sum(LogSumExp.dim)"))),
    Mistake("LogSumExp", "jvp reads ctx.saved_tensors kept only with save_for_backward",
            "LogSumExp.jvp found ctx.saved_tensors empty",
            _edit(LSE, ("        ctx.save_for_forward(x, output)\n", "")),
            named=True, nbgrader=True),
    Mistake("LogSumExp", "jvp without save_for_forward: tensors kept as ctx attributes",
            "LogSumExp keeps a tensor as ctx.x",
            _edit(LSE, ("        ctx.save_for_forward(x, output)\n",
                        "        ctx.x, ctx.output = x, output\n"),
                  ("        x, output = ctx.saved_tensors\n        return ((x",
                   "        x, output = ctx.x, ctx.output\n        return ((x")),
            named=True),
    Mistake("LogSumExp", "no jvp staticmethod", "LogSumExp has no jvp staticmethod",
            LSE[:LSE.index("    @staticmethod\n    def jvp")], named=True),
    Mistake("LogSumExp", "generate_vmap_rule missing", "does not set generate_vmap_rule = True",
            _edit(LSE, ("    generate_vmap_rule = True\n", "")), named=True),
    Mistake("LogSumExp", "forward takes ctx in the setup_context form",
            "LogSumExp.forward takes (ctx, x, dim)",
            _edit(LSE, ("def forward(x, dim)", "def forward(ctx, x, dim)")), named=True),
    Mistake("LogSumExp", "old form: forward(ctx, ...) without setup_context",
            "LogSumExp has no setup_context", '''
class LogSumExp(torch.autograd.Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(ctx, x, dim):
        y = torch.logsumexp(x, dim)
        ctx.dim = dim
        ctx.save_for_backward(x, y)
        ctx.save_for_forward(x, y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        x, y = ctx.saved_tensors
        return grad_output.unsqueeze(ctx.dim) * (x - y.unsqueeze(ctx.dim)).exp(), None

    @staticmethod
    def jvp(ctx, x_tangent, dim_tangent):
        x, y = ctx.saved_tensors
        return ((x - y.unsqueeze(ctx.dim)).exp() * x_tangent).sum(ctx.dim)
''', named=True),
    Mistake("LogSumExp", "unstable log(sum(exp(x)))", "LogSumExp's forward overflows at |x| = 1000",
            _edit(LSE, ("        m = x.amax(dim, keepdim=True)\n"
                        "        m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))\n"
                        "        return (x - m).exp().sum(dim).log() + m.squeeze(dim)",
                        "        return x.exp().sum(dim).log()")),
            named=True),
    Mistake("LogSumExp", "the max of |x| subtracted (the row near -1000 underflows to -inf)",
            "LogSumExp's forward underflows on the row of values near -1000",
            _edit(LSE, ("        m = x.amax(dim, keepdim=True)\n",
                        "        m = x.abs().amax(dim, keepdim=True)\n"))),
    # the review's: a constant that is not the slice's max leaves a positive exponent, which
    # HUGE's slices do not show (mean 333 at (1000, 999, -1000): exp(667) is finite)
    Mistake("LogSumExp", "each slice shifted by its mean: exp(1333) at (1000, -1000, -1000)",
            "LogSumExp's forward shifts by something other than the slice's own max",
            _edit(LSE, ("        m = x.amax(dim, keepdim=True)\n",
                        "        m = x.mean(dim, keepdim=True)\n"))),
    Mistake("LogSumExp", "each slice shifted by its first entry: exp(2000) at (-1000, 1000, 0)",
            "LogSumExp's forward shifts by something other than the slice's own max",
            _edit(LSE, ("        m = x.amax(dim, keepdim=True)\n",
                        "        m = x.narrow(dim, 0, 1)\n"))),
    # the review's: right eagerly, but vmap's generated rule cannot branch on a batched value
    Mistake("LogSumExp", "a Python if on tensor values in forward (if not torch.isfinite(m).all())",
            "LogSumExp has a Python if on tensor values",
            _edit(LSE, ("        m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))\n",
                        "        if not torch.isfinite(m).all():\n"
                        "            m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))\n"))),
    Mistake("LogSumExp", "a gradient returned for dim",
            "backward returned a gradient for dim, which is not a tensor",
            _edit(LSE, ("(x - output.unsqueeze(ctx.dim)).exp(), None",
                        "(x - output.unsqueeze(ctx.dim)).exp(), torch.zeros(())")),
            named=True),
    Mistake("LogSumExp", "jvp through a naive softmax, exp(x) / sum(exp(x))",
            "LogSumExp.jvp gives inf or nan at |x| = 1000",
            _edit(LSE, ("return ((x - output.unsqueeze(ctx.dim)).exp() * x_tangent).sum(ctx.dim)",
                        "p = x.exp() / x.exp().sum(ctx.dim, keepdim=True)\n"
                        "        return (p * x_tangent).sum(ctx.dim)"))),
    Mistake("LogSumExp", "backward through a naive softmax, exp(x) / sum(exp(x))",
            "LogSumExp's backward gives inf or nan at |x| = 1000",
            _edit(LSE, ("* (x - output.unsqueeze(ctx.dim)).exp(), None",
                        "* x.exp() / x.exp().sum(ctx.dim, keepdim=True), None"))),
    Mistake("LogSumExp", "jvp without the softmax weights", "LogSumExp.jvp is wrong",
            _edit(LSE, ("return ((x - output.unsqueeze(ctx.dim)).exp() * x_tangent).sum(ctx.dim)",
                        "return x_tangent.sum(ctx.dim)"))),
    Mistake("LogSumExp", "jvp sums over -1 whatever dim is",
            "LogSumExp.jvp returns a tangent of shape",
            _edit(LSE, ("* x_tangent).sum(ctx.dim)", "* x_tangent).sum(-1)"))),
    Mistake("LogSumExp", "jvp keeps the reduced dim", "LogSumExp.jvp returns a tangent of shape",
            _edit(LSE, ("* x_tangent).sum(ctx.dim)",
                        "* x_tangent).sum(ctx.dim, keepdim=True)"))),
    Mistake("LogSumExp", "backward unsqueezes at -1 instead of ctx.dim",
            "LogSumExp's backward fails for dim=0, which is not the last dimension",
            _edit(LSE, ("return grad_output.unsqueeze(ctx.dim) * (x - output.unsqueeze(ctx.dim))",
                        "return grad_output.unsqueeze(-1) * (x - output.unsqueeze(ctx.dim))")),
            named=True),
    Mistake("LogSumExp", "m.squeeze() squeezes every size-1 dim, not only dim",
            "LogSumExp's output has shape (3, 3) but should have shape (3, 1)",
            _edit(LSE, ("m.squeeze(dim)", "m.squeeze()"))),
    Mistake("LogSumExp", "backward without unsqueeze: grad_output meets x along its last dim",
            "LogSumExp's backward lines grad_output up with the wrong dim",
            _edit(LSE, ("return grad_output.unsqueeze(ctx.dim) * (x", "return grad_output * (x"))),
    Mistake("LogSumExp", "backward takes the softmax over -1 whatever dim is",
            "LogSumExp's backward fails for dim=0, which is not the last dimension",
            _edit(LSE, ("return grad_output.unsqueeze(ctx.dim) * (x - output.unsqueeze(ctx.dim))"
                        ".exp(), None",
                        "return grad_output.unsqueeze(ctx.dim) * torch.softmax(x, -1), None"))),
    # one max for the whole tensor: right on the slice that holds it, and 0 / 0 = nan on a
    # slice whose entries all lie far below it (HUGE's row near -1000)
    Mistake("LogSumExp", "backward's softmax shifted by the whole tensor's max, not each slice's",
            "LogSumExp's backward gives nan on the row of values near -1000",
            _edit(LSE, ("return grad_output.unsqueeze(ctx.dim) * (x - output.unsqueeze(ctx.dim))"
                        ".exp(), None",
                        "e = (x - x.detach().amax()).exp() if x.numel() else x\n"
                        "        return grad_output.unsqueeze(ctx.dim) * e "
                        "/ e.sum(ctx.dim, keepdim=True), None"))),
    Mistake("LogSumExp", "jvp's softmax shifted by the whole tensor's max, not each slice's",
            "LogSumExp.jvp gives nan on the row of values near -1000",
            _edit(LSE, ("return ((x - output.unsqueeze(ctx.dim)).exp() * x_tangent).sum(ctx.dim)",
                        "e = (x - x.amax()).exp() if x.numel() else x\n"
                        "        return (e / e.sum(ctx.dim, keepdim=True) * x_tangent)"
                        ".sum(ctx.dim)"))),
]
