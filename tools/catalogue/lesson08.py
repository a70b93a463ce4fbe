"""Lesson 08 (torch.func and torch.compile): unusual-but-correct answers and named mistakes.

Every softplus entry defines the operator ``autograd_course::softplus`` again: load one entry
and grade it before loading the next (the dispatcher runs the newest definition).
"""

from . import Mistake, Unusual

LSE = '''
class LogSumExp(torch.autograd.Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(x, dim):
        m = x.amax(dim, keepdim=True)
        m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))
        return (x - m).exp().sum(dim).log() + m.squeeze(dim)

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, dim = inputs
        ctx.dim = dim
        ctx.save_for_backward(x, output)
        ctx.save_for_forward(x, output)

    @staticmethod
    def backward(ctx, grad_output):
        x, output = ctx.saved_tensors
        return grad_output.unsqueeze(ctx.dim) * (x - output.unsqueeze(ctx.dim)).exp(), None

    @staticmethod
    def jvp(ctx, x_tangent, dim_tangent):
        x, output = ctx.saved_tensors
        return ((x - output.unsqueeze(ctx.dim)).exp() * x_tangent).sum(ctx.dim)
'''

SOFTPLUS = '''
@torch.library.custom_op("autograd_course::softplus", mutates_args=())
def softplus(x: torch.Tensor, beta: float) -> torch.Tensor:
    z = beta * x
    return (z.clamp(min=0) + torch.log1p(torch.exp(-z.abs()))) / beta


@softplus.register_fake
def _(x, beta):
    return torch.empty_like(x)


def setup_context(ctx, inputs, output):
    x, beta = inputs
    ctx.save_for_backward(x)
    ctx.beta = beta


def backward(ctx, grad_output):
    x, = ctx.saved_tensors
    return grad_output * torch.sigmoid(ctx.beta * x), None


softplus.register_autograd(backward, setup_context=setup_context)
'''


def _edit(base: str, *replacements) -> str:
    """``base`` with each (old, new) replaced once; fails loudly if ``old`` is missing."""
    for old, new in replacements:
        assert old in base, old
        base = base.replace(old, new, 1)
    return base


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
    Unusual("softplus", "function-call registration with torch.library.register_* by name", '''
def _softplus(x: torch.Tensor, beta: float) -> torch.Tensor:
    return torch.logaddexp(beta * x, torch.zeros_like(x)) / beta


softplus = torch.library.custom_op("autograd_course::softplus", _softplus, mutates_args=())
torch.library.register_fake("autograd_course::softplus", lambda x, beta: x.new_empty(x.shape))


def _setup(ctx, inputs, output):
    ctx.save_for_backward(inputs[0])
    ctx.beta = inputs[1]


def _backward(ctx, grad):
    x, = ctx.saved_tensors
    return grad / (1 + torch.exp(-ctx.beta * x)), None


torch.library.register_autograd("autograd_course::softplus", _backward, setup_context=_setup)
'''),
    Unusual("softplus", "the torch.ops handle handed in, saving the output",
            _edit(SOFTPLUS,
                  ("def softplus(x", "def _softplus_op(x"),
                  ("@softplus.register_fake", "@_softplus_op.register_fake"),
                  ("    x, beta = inputs\n    ctx.save_for_backward(x)",
                   "    x, beta = inputs\n    ctx.save_for_backward(output)"),
                  ("    x, = ctx.saved_tensors\n    return grad_output * torch.sigmoid(ctx.beta * x)",
                   "    y, = ctx.saved_tensors\n    return grad_output * -torch.expm1(-ctx.beta * y)"),
                  ("softplus.register_autograd", "_softplus_op.register_autograd"))
            + "\n\nsoftplus = torch.ops.autograd_course.softplus\n"),
    Unusual("softplus", "F.softplus inside the operator and an explicit schema",
            _edit(SOFTPLUS,
                  ('mutates_args=())', 'mutates_args=(),\n'
                   '                         schema="(Tensor x, float beta) -> Tensor")'),
                  ("    z = beta * x\n    return (z.clamp(min=0) + torch.log1p(torch.exp(-z.abs()))) "
                   "/ beta", "    return F.softplus(x, beta=beta, threshold=20.0)"),
                  ("torch.sigmoid(ctx.beta * x)", "torch.special.expit(ctx.beta * x)"))),
    Unusual("softplus", "logaddexp, switching to z itself above z = 20 as F.softplus does",
            _edit(SOFTPLUS, ("    return (z.clamp(min=0) + torch.log1p(torch.exp(-z.abs())))"
                             " / beta",
                             "    small = torch.logaddexp(z.clamp(max=20), torch.zeros_like(z))\n"
                             "    return torch.where(z > 20, z, small) / beta"))),
    Unusual("softplus", "backward checks needs_input_grad, as matvec's does",
            _edit(SOFTPLUS, ("    return grad_output * torch.sigmoid(ctx.beta * x), None",
                             "    wanted = ctx.needs_input_grad[0]\n"
                             "    return (grad_output * torch.sigmoid(ctx.beta * x) if wanted "
                             "else None), None"))),
]

MISTAKES = [
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
    Mistake("softplus", "setup_context keeps x as a ctx attribute",
            "softplus's setup_context keeps a tensor as ctx.x",
            _edit(SOFTPLUS, ("    ctx.save_for_backward(x)\n    ctx.beta = beta",
                             "    ctx.x = x\n    ctx.beta = beta"),
                  ("    x, = ctx.saved_tensors\n    return grad_output * torch.sigmoid",
                   "    x = ctx.x\n    return grad_output * torch.sigmoid")),
            named=True, nbgrader=True),
    Mistake("softplus", "the float beta passed to save_for_backward, as matvec saves both inputs",
            "save_for_backward can only save variables",
            _edit(SOFTPLUS, ("ctx.save_for_backward(x)\n    ctx.beta = beta",
                             "ctx.save_for_backward(x, beta)"),
                  ("x, = ctx.saved_tensors", "x, beta = ctx.saved_tensors"),
                  ("torch.sigmoid(ctx.beta * x)", "torch.sigmoid(beta * x)"))),
    Mistake("softplus", "backward returns only grad_x",
            "softplus's backward returns the wrong number of gradients",
            _edit(SOFTPLUS, ("torch.sigmoid(ctx.beta * x), None", "torch.sigmoid(ctx.beta * x)")),
            named=True),
    Mistake("softplus", "a fake implementation with the wrong shape",
            "softplus's fake implementation returns shape",
            _edit(SOFTPLUS, ("return torch.empty_like(x)", "return x.new_empty(x.shape[:-1])")),
            named=True),
    Mistake("softplus", "a fake implementation with the wrong dtype",
            "softplus's fake implementation returns shape",
            _edit(SOFTPLUS, ("return torch.empty_like(x)",
                             "return torch.empty_like(x, dtype=torch.float32)")), named=True),
    Mistake("softplus", "no register_fake", "softplus has no fake implementation",
            _edit(SOFTPLUS, ("@softplus.register_fake\n", "")), named=True),
    Mistake("softplus", "a backward registered without setup_context",
            "softplus's backward was registered without setup_context",
            _edit(SOFTPLUS, ("softplus.register_autograd(backward, setup_context=setup_context)",
                             "softplus.register_autograd(backward)")),
            named=True),
    Mistake("softplus", "no register_autograd", "softplus has no autograd registration",
            _edit(SOFTPLUS, ("softplus.register_autograd(backward, setup_context=setup_context)",
                             "")), named=True),
    Mistake("softplus", "softplus that overflows for large beta * x",
            "softplus overflows for large beta * x",
            _edit(SOFTPLUS, ("    z = beta * x\n    return (z.clamp(min=0) + "
                             "torch.log1p(torch.exp(-z.abs()))) / beta",
                             "    return torch.log1p(torch.exp(beta * x)) / beta")), named=True),
    Mistake("softplus", "the stable form written with log, not log1p: 0.0 at beta * x = -40",
            "softplus loses the left tail: at x = -40 with beta=1.0 it returns 0",
            _edit(SOFTPLUS, ("torch.log1p(torch.exp(-z.abs()))",
                             "torch.log(1 + torch.exp(-z.abs()))")),
            named=True),
    Mistake("softplus", "the operator's setup_context with parameters named (ctx, inp, out)",
            "softplus's setup_context, setup_context, is called with keyword arguments",
            _edit(SOFTPLUS, ("def setup_context(ctx, inputs, output):\n    x, beta = inputs",
                             "def setup_context(ctx, inp, out):\n    x, beta = inp")),
            named=True),
    Mistake("softplus", "a gradient returned for the float beta",
            "softplus's backward returned a gradient for beta",
            _edit(SOFTPLUS, ("torch.sigmoid(ctx.beta * x), None",
                             "torch.sigmoid(ctx.beta * x), (grad_output * x).sum()")),
            named=True),
    Mistake("softplus", "a plain Python function, not a custom operator",
            "softplus never calls the custom operator autograd_course::softplus", '''
def softplus(x, beta):
    return F.softplus(x, beta)
''', named=True),
]
