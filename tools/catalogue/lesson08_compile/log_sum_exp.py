"""Lesson 08: answers with known verdicts for LogSumExp (forward-mode jvp, vmap, the
setup_context form, a stable forward)."""

from .. import Mistake, Unusual
from .answers import LSE, _edit


_GUESS = ("def _dim(x, out):\n"
          "    for i in range(out.dim()):\n"
          "        if x.shape[i] != out.shape[i]:\n"
          "            return i\n"
          "    return x.dim() - 1\n")

_LSE_SUM = "        return (x - m).exp().sum(dim).log() + m.squeeze(dim)"

_LSE_MAX = "        m = x.amax(dim, keepdim=True)\n"

_LSE_BWD = ("        return grad_output.unsqueeze(ctx.dim) * (x - output.unsqueeze(ctx.dim)).exp()"
            ", None")


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
    Unusual('LogSumExp', 'dim saved as a 0-d int64 tensor in both save lists, weights by torch.softmax, jvp by einsum',
            '# UNUSUAL (correct): dim saved as a 0-d int64 tensor through both save lists; softmax for weights\nimport torch\nclass LogSumExp(torch.autograd.Function):\n    generate_vmap_rule = True\n    @staticmethod\n    def forward(x, dim):\n        m = x.amax(dim, keepdim=True)\n        return (x - m).exp().sum(dim).log() + m.squeeze(dim)\n    @staticmethod\n    def setup_context(ctx, inputs, output):\n        x, dim = inputs\n        ctx.save_for_backward(x, torch.tensor(dim))\n        ctx.save_for_forward(x, torch.tensor(dim))\n    @staticmethod\n    def backward(ctx, grad_output):\n        x, d = ctx.saved_tensors\n        d = int(d)\n        return grad_output.unsqueeze(d) * torch.softmax(x, d), None\n    @staticmethod\n    def jvp(ctx, x_tangent, dim_tangent):\n        x, d = ctx.saved_tensors\n        d = int(d)\n        return torch.einsum("...,...->...", torch.softmax(x, d).movedim(d, -1), x_tangent.movedim(d, -1)).sum(-1)\n'),
    Unusual("LogSumExp", "max(d).values with dim normalised, log1p(sum - 1)",
            _edit(LSE, (_LSE_MAX, "        d = dim % x.dim()\n"
                        "        m = x.max(d, keepdim=True).values\n"),
                  (_LSE_SUM, "        return torch.log1p((x - m).exp().sum(d) - 1)"
                   " + m.squeeze(d)"))),
    Unusual("LogSumExp", "the shift clamped at -700 (still exact for |x| up to 1000)",
            _edit(LSE, (_LSE_MAX, "        m = x.amax(dim, keepdim=True).clamp(min=-700)\n"))),
    Unusual("LogSumExp", "dim normalised with dim % x.dim() in forward and setup_context "
            "(raises on a 0-d x, which the contract leaves out: x has at least one dimension)",
            _edit(LSE, (_LSE_MAX, "        dim = dim % x.dim()\n" + _LSE_MAX),
                  ("        ctx.dim = dim\n", "        ctx.dim = dim % x.dim()\n"))),
]


MISTAKES = [
    Mistake("LogSumExp", "the softmax computed in setup_context and saved; dim made non-negative",
            "LogSumExp's backward cannot be differentiated again", '''
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
''', named=True),
    Mistake('LogSumExp', 'forward by torch.logsumexp, p computed once in setup_context and saved',
            "LogSumExp's backward cannot be differentiated again",
            '# a second derivative through backward is 0: forward via torch.logsumexp, p computed once in setup_context and saved\nimport torch\nclass LogSumExp(torch.autograd.Function):\n    generate_vmap_rule = True\n    @staticmethod\n    def forward(x, dim):\n        return torch.logsumexp(x, dim)\n    @staticmethod\n    def setup_context(ctx, inputs, output):\n        x, dim = inputs\n        ctx.dim = dim\n        p = (x - output.unsqueeze(dim)).exp()\n        ctx.save_for_backward(p)\n        ctx.save_for_forward(p)\n    @staticmethod\n    def backward(ctx, grad_output):\n        p, = ctx.saved_tensors\n        return grad_output.unsqueeze(ctx.dim) * p, None\n    @staticmethod\n    def jvp(ctx, x_tangent, dim_tangent):\n        p, = ctx.saved_tensors\n        return (p * x_tangent).sum(ctx.dim)\n'),
    Mistake("LogSumExp", "backward reads the weights from the saved output detached",
            "LogSumExp's second derivative is wrong",
            _edit(LSE, ("        return grad_output.unsqueeze(ctx.dim) * (x - output.unsqueeze(ctx.dim))",
                        "        return grad_output.unsqueeze(ctx.dim) * (x - output.detach().unsqueeze(ctx.dim))"))),
    Mistake("LogSumExp", "backward's weights computed under torch.no_grad()",
            "LogSumExp's backward cannot be differentiated again",
            _edit(LSE, ("        return grad_output.unsqueeze(ctx.dim) * (x - output.unsqueeze(ctx.dim)).exp(), None",
                        "        with torch.no_grad():\n"
                        "            p = (x - output.unsqueeze(ctx.dim)).exp()\n"
                        "        return grad_output.unsqueeze(ctx.dim) * p, None"))),
    # review 73's W1: jvp multiplies the caller's tangent in place (a raw torch error before)
    Mistake("LogSumExp", "jvp multiplies the tangent in place (x_tangent.mul_(p))",
            "LogSumExp.jvp writes in place (aten::mul_",
            _edit(LSE, ("        return ((x - output.unsqueeze(ctx.dim)).exp() * x_tangent)"
                        ".sum(ctx.dim)",
                        "        return x_tangent.mul_((x - output.unsqueeze(ctx.dim)).exp())"
                        ".sum(ctx.dim)"))),
    # review 73's W4: dim normalised against grad_output's rank (a raw shape error before)
    Mistake("LogSumExp", "backward normalises dim against grad_output's rank, not x's",
            "LogSumExp.backward combines tensors whose shapes do not line up",
            _edit(LSE, (_LSE_BWD,
                        "        d = ctx.dim % max(grad_output.dim(), 1)\n"
                        "        return grad_output.unsqueeze(d) * (x - output.unsqueeze(d)).exp()"
                        ", None"))),
    # review 73's W7: the weights cached in a global keyed by x.data_ptr() (a raw error before)
    Mistake("LogSumExp", "the weights cached in a global keyed by (x.data_ptr(), dim, shape)",
            "LogSumExp.jvp reads a tensor's memory address",
            "_CACHE = {}\n" + _edit(LSE, (
                "        ctx.save_for_backward(x, output)\n        ctx.save_for_forward(x, output)\n",
                "        key = (x.data_ptr(), dim, tuple(x.shape))\n"
                "        if key not in _CACHE:\n"
                "            _CACHE[key] = (x - output.unsqueeze(dim)).exp()\n"
                "        ctx.save_for_backward(x, output, _CACHE[key])\n"
                "        ctx.save_for_forward(x, output, _CACHE[key])\n"),
                ("        x, output = ctx.saved_tensors\n        return grad_output",
                 "        x, output, p = ctx.saved_tensors\n        return grad_output"),
                ("        x, output = ctx.saved_tensors\n        return ((x",
                 "        x, output, p = ctx.saved_tensors\n        return ((x"))),
    # review 76's W1l: the weights cached by backward in a global keyed by (x.data_ptr(), dim);
    # a reused address hands one call's weights to a call of another shape, which grading
    # named "a dim normalised against grad_output's rank" before the state probe ran
    Mistake("LogSumExp", "backward caches the weights in a global keyed by (x.data_ptr(), dim)",
            "state outside ctx",  # the vmap probe's line, or the state probe's after a reused address
            "CACHE = {}\n" + _edit(LSE, (
                "        return grad_output.unsqueeze(ctx.dim) * (x - output.unsqueeze(ctx.dim))"
                ".exp(), None",
                "        key = (x.data_ptr(), ctx.dim)\n"
                "        if key not in CACHE:\n"
                "            CACHE[key] = (x - output.unsqueeze(ctx.dim)).exp()\n"
                "        return grad_output.unsqueeze(ctx.dim) * CACHE[key], None"))),
    # the reviewer's: was told to "check your forward-mode product" (review at bac92e6a)
    Mistake("LogSumExp", "jvp computes the weights in x's own memory (x.sub_(...).exp_())",
            "LogSumExp.jvp wrote into x",
            _edit(LSE, ("        return ((x - output.unsqueeze(ctx.dim)).exp() * x_tangent)"
                        ".sum(ctx.dim)",
                        "        return (x.sub_(output.unsqueeze(ctx.dim)).exp_() * x_tangent)"
                        ".sum(ctx.dim)"))),
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
            "backward returned a tensor of zeros for dim, an input that is not a tensor",
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
    # x.max() with no dim raises on an empty x before any row near -1000 can underflow
    Mistake("LogSumExp", "forward shifted by one max over the whole of x (x.max())",
            "LogSumExp.forward takes one max over the whole of x",
            _edit(LSE, ("        m = x.amax(dim, keepdim=True)", "        m = x.max()"),
                  ("+ m.squeeze(dim)", "+ m"))),
    # an in-place view op on grad_output: its values stay, its shape changes under the caller
    Mistake("LogSumExp", "grad_output.unsqueeze_(dim) in backward (its shape changed in place)",
            "backward changed grad_output's shape in place",
            _edit(LSE, ("return grad_output.unsqueeze(ctx.dim) *",
                        "return grad_output.unsqueeze_(ctx.dim) *"))),
    # forward mode runs jvp right after setup_context, so values cannot show it; the global
    # keeps the last call's input and output alive: the generic one-call check names the global
    Mistake("LogSumExp", "jvp reads x and the output from a global that setup_context fills",
            "LogSumExp.forward kept state outside ctx: _JVP in a module global",
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
    Mistake("LogSumExp", "the softmax kept in a module global by setup_context for backward",
            "LogSumExp.forward kept state outside ctx: _P in a module global",
            _edit(LSE, ("        ctx.save_for_backward(x, output)\n",
                        "        global _P\n"
                        "        _P = (x - output.unsqueeze(dim)).exp()\n"),
                  ("        x, output = ctx.saved_tensors\n" + _LSE_BWD,
                   "        return grad_output.unsqueeze(ctx.dim) * _P, None"))),
    Mistake("LogSumExp", "dim kept in a module global by setup_context",
            "LogSumExp.forward kept state outside ctx: _DIM in a module global",
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
    # the review's (W-L10): right on every input; torch.vmap's functorch error came first
    # until rule 3's check ran before the transforms
    Mistake("LogSumExp", "backward recomputes torch.logsumexp under enable_grad and calls "
            "torch.autograd.grad",
            "LogSumExp.backward calls torch.autograd.grad",
            _edit(LSE, (_LSE_BWD,
                        "        with torch.enable_grad():\n"
                        "            xx = x.detach().requires_grad_()\n"
                        "            g, = torch.autograd.grad(torch.logsumexp(xx, ctx.dim), xx, "
                        "grad_output)\n"
                        "        return g, None"))),
    # the review's (W-L10b): passed both checks before rule 3 was graded generically
    Mistake("LogSumExp", "backward through torch.func.vjp of torch.logsumexp",
            "LogSumExp.backward calls torch.autograd.grad through torch.func",
            _edit(LSE, (_LSE_BWD,
                        "        _, pullback = torch.func.vjp(lambda t: torch.logsumexp(t, "
                        "ctx.dim), x)\n"
                        "        return pullback(grad_output)[0], None"))),
    # the review's (W-L18): right values and gradients, but the output is a view of x, so a
    # write into it writes into the caller's x (torch.logsumexp's output is new memory)
    Mistake("LogSumExp", "x.squeeze(dim) returned where dim has one entry: a view of x",
            "LogSumExp's output shares memory with its input x",
            _edit(LSE, (_LSE_MAX, "        if x.shape[dim] == 1:  # one term: log(exp(x)) = x\n"
                                  "            return x.squeeze(dim)\n" + _LSE_MAX))),
    Mistake("LogSumExp", "backward's softmax computed in float32",
            "a step in float32",
            _edit(LSE, (_LSE_BWD, "        return grad_output.unsqueeze(ctx.dim) * (x - output"
                        ".unsqueeze(ctx.dim)).float().exp().to(x.dtype), None"))),
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
    # review 75's W1e: a softmax cache in a global keyed by (shape, dim, dtype), filled by
    # backward (its first line was "gradient wrong under vmap" before the shared-state probe)
    Mistake("LogSumExp", "the softmax cached across calls in a global keyed by shape, dim, dtype",
            "LogSumExp.forward kept state outside ctx: _cache in a module global",
            "_cache = {}\n" + _edit(LSE, (
                "        ctx.save_for_backward(x, output)\n",
                "        _cache.setdefault((tuple(x.shape), dim, x.dtype), None)\n"
                "        ctx.save_for_backward(x, output)\n"),
                (_LSE_BWD,
                 "        key = (tuple(x.shape), ctx.dim, x.dtype)\n"
                 "        if _cache.get(key) is None:\n"
                 "            _cache[key] = (x - output.unsqueeze(ctx.dim)).exp()\n"
                 "        return grad_output.unsqueeze(ctx.dim) * _cache[key], None"))),
]

# a fresh review (review77, L11): the gradient returned in float64 for a float32 x, which
# autograd casts back without a word (rule 2's dtype)
MISTAKES += [
    Mistake("LogSumExp", "backward computes and returns float64 for a float32 x",
            "LogSumExp.backward returned grad_x in float64 for a float32 x",
            _edit(LSE, ("        return grad_output.unsqueeze(ctx.dim) * (x - output.unsqueeze("
                        "ctx.dim)).exp(), None",
                        "        return grad_output.double().unsqueeze(ctx.dim) * (x.double() - "
                        "output.double().unsqueeze(ctx.dim)).exp(), None"))),
]

# a fresh review (review77b, L12): the tangent returned in float64 for a float32 x; nothing
# casts a tangent back, so torch.func.jvp and forward_ad hand the caller float64
MISTAKES += [
    Mistake("LogSumExp", "jvp computes and returns a float64 tangent for a float32 x",
            "LogSumExp.jvp returned a tangent in float64 for a float32 x",
            _edit(LSE, ("        return ((x - output.unsqueeze(ctx.dim)).exp() * x_tangent)"
                        ".sum(ctx.dim)",
                        "        return ((x.double() - output.double().unsqueeze(ctx.dim)).exp()"
                        " * x_tangent.double()).sum(ctx.dim)"))),
    Mistake("LogSumExp", "jvp returns a float32 tangent for a float64 x",
            "LogSumExp.jvp returned a tangent in float32 for a float64 x",
            _edit(LSE, ("        return ((x - output.unsqueeze(ctx.dim)).exp() * x_tangent)"
                        ".sum(ctx.dim)",
                        "        return ((x - output.unsqueeze(ctx.dim)).exp() * x_tangent)"
                        ".sum(ctx.dim).float()"))),
]

# review s80's W9: the weights recomputed in backward from x.detach(): every saved tensor has
# its graph, so backward itself cut it (the message named forward and setup_context before)
MISTAKES += [
    Mistake("LogSumExp", "backward's weights from torch.softmax(x.detach(), dim)",
            "backward itself cuts the graph (`p = torch.softmax(x.detach(), ctx.dim)`)",
            _edit(LSE, ("        return grad_output.unsqueeze(ctx.dim) * (x - output.unsqueeze("
                        "ctx.dim)).exp(), None",
                        "        p = torch.softmax(x.detach(), ctx.dim)\n"
                        "        return grad_output.unsqueeze(ctx.dim) * p, None"))),
]

# review s80b's L1, L1b, L1c: backward cuts grad_output from the graph, so the second derivative
# with respect to grad_output (gradgradcheck's input 1) is lost. L1b passed both checks before;
# L1 was named by the batched gradcheck's missing vmap rule for detach as a finite-difference
# mismatch; L1c's .data killed the kernel under the batched gradcheck's legacy vmap.
MISTAKES += [
    Mistake("LogSumExp", "backward reads grad_output.detach()",
            "LogSumExp's backward cuts grad_output from the graph",
            _edit(LSE, (_LSE_BWD,
                        "        return grad_output.detach().unsqueeze(ctx.dim) * "
                        "(x - output.unsqueeze(ctx.dim)).exp(), None"))),
    Mistake("LogSumExp", "backward copies grad_output under torch.no_grad()",
            "LogSumExp's backward cuts grad_output from the graph",
            _edit(LSE, (_LSE_BWD,
                        "        with torch.no_grad():\n"
                        "            g = grad_output.unsqueeze(ctx.dim) * 1.0\n"
                        "        return g * (x - output.unsqueeze(ctx.dim)).exp(), None"))),
    Mistake("LogSumExp", "backward reads grad_output.data",
            "LogSumExp's backward cuts grad_output from the graph",
            _edit(LSE, (_LSE_BWD,
                        "        return grad_output.data.unsqueeze(ctx.dim) * "
                        "(x - output.unsqueeze(ctx.dim)).exp(), None"))),
]
