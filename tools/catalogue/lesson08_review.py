"""Lesson 08: more answers with known verdicts, from a fresh review (probes of the battery with
answers nobody in the lesson wrote). Every softplus or squared_norm entry defines its operator
again: load one entry and grade it before loading the next."""

from . import Mistake, Unusual
from .lesson08 import LSE, SOFTPLUS, _edit
from .lesson08_transfer import SQUARED_NORM

UNUSUAL = [
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
    Unusual("softplus", "torch.where branches; sigmoid(beta x) saved by setup_context", '''
@torch.library.custom_op("autograd_course::softplus", mutates_args=())
def softplus(x: torch.Tensor, beta: float) -> torch.Tensor:
    z = beta * x
    return torch.where(z > 0, z + torch.log1p(torch.exp(-z)), torch.log1p(torch.exp(z))) / beta


@softplus.register_fake
def _(x, beta):
    return x.new_empty(x.shape)


def setup_context(ctx, inputs, output):
    x, beta = inputs
    ctx.save_for_backward(torch.sigmoid(beta * x))


def backward(ctx, grad_output):
    s, = ctx.saved_tensors
    return grad_output * s, None


softplus.register_autograd(backward, setup_context=setup_context)
'''),
    Unusual("softplus", "a NumPy kernel (np.logaddexp), as an operator around outside code", '''
import numpy as np


@torch.library.custom_op("autograd_course::softplus", mutates_args=())
def softplus(x: torch.Tensor, beta: float) -> torch.Tensor:
    out = np.logaddexp(0.0, beta * x.detach().cpu().numpy()) / beta
    return torch.from_numpy(np.asarray(out)).to(device=x.device, dtype=x.dtype)


@softplus.register_fake
def _(x, beta):
    return torch.empty_like(x)


def setup_context(ctx, inputs, output):
    ctx.save_for_backward(inputs[0])
    ctx.beta = inputs[1]


def backward(ctx, grad_output):
    x, = ctx.saved_tensors
    return grad_output / (1 + torch.exp(-ctx.beta * x)), None


softplus.register_autograd(backward, setup_context=setup_context)
'''),
    Unusual("softplus", "logaddexp forward; backward from the output, 1 - exp(-beta y)", '''
@torch.library.custom_op("autograd_course::softplus", mutates_args=())
def softplus(x: torch.Tensor, beta: float) -> torch.Tensor:
    return torch.logaddexp(beta * x, torch.zeros_like(x)) / beta


@softplus.register_fake
def _(x, beta):
    return torch.empty_like(x)


def setup_context(ctx, inputs, output):
    ctx.save_for_backward(output)
    ctx.beta = inputs[1]


def backward(ctx, grad_output):
    y, = ctx.saved_tensors
    return -grad_output * torch.expm1(-ctx.beta * y), None


softplus.register_autograd(backward, setup_context=setup_context)
'''),
    Unusual("squared_norm", "vector_norm squared, 2x saved, a rule that leaves the batch dim "
            "in place", '''
@torch.library.custom_op("autograd_course::squared_norm", mutates_args=())
def squared_norm(x: torch.Tensor, dim: int) -> torch.Tensor:
    return torch.linalg.vector_norm(x, dim=dim) ** 2


@squared_norm.register_fake
def _(x, dim):
    shape = list(x.shape)
    del shape[dim]
    return x.new_empty(shape)


def setup_context(ctx, inputs, output):
    x, dim = inputs
    ctx.save_for_backward(2 * x)
    ctx.dim = dim


def backward(ctx, grad_output):
    twice, = ctx.saved_tensors
    return twice * grad_output.unsqueeze(ctx.dim), None


squared_norm.register_autograd(backward, setup_context=setup_context)


def rule(info, in_dims, x, dim):
    b = in_dims[0]
    d = dim % (x.dim() - 1)
    d = d + 1 if d >= b else d
    return squared_norm(x, d), (b if b < d else b - 1)


squared_norm.register_vmap(rule)
'''),
    Unusual("squared_norm", "a fake from a sum of a fake tensor; backward by expand",
            _edit(SQUARED_NORM, ("    d = dim % x.dim()\n    return x.new_empty(x.shape[:d] + "
                                 "x.shape[d + 1:])", "    return torch.empty_like(x).sum(dim)"),
                  ("return 2 * x * grad_output.unsqueeze(ctx.dim), None",
                   "return (grad_output.unsqueeze(ctx.dim).expand(x.shape) * x).mul(2), None"))),
    Unusual("squared_norm", "a rule that assumes the batch dim is 0 (all the contract asks)",
            _edit(SQUARED_NORM, ("    x = x.movedim(x_bdim, 0)\n", ""))),
]

MISTAKES = [
    Mistake("LogSumExp", "m.squeeze() squeezes every size-1 dim, not only dim",
            "LogSumExp's output has shape (3, 3) but should have shape (3, 1)",
            _edit(LSE, ("m.squeeze(dim)", "m.squeeze()"))),
    Mistake("softplus", "forward writes into x (x.mul_(beta)) with mutates_args=()",
            "softplus wrote into its input x",
            _edit(SOFTPLUS, ("    z = beta * x\n", "    z = x.mul_(beta)\n")), named=True),
    Mistake("LogSumExp", "backward without unsqueeze: grad_output meets x along its last dim",
            "LogSumExp's backward lines grad_output up with the wrong dim",
            _edit(LSE, ("return grad_output.unsqueeze(ctx.dim) * (x", "return grad_output * (x"))),
    Mistake("softplus", "backward times beta (the factors beta did not cancel)",
            "softplus's gradient is beta times too large at every x",
            _edit(SOFTPLUS, ("torch.sigmoid(ctx.beta * x)",
                             "ctx.beta * torch.sigmoid(ctx.beta * x)"))),
    Mistake("softplus", "backward over beta (the chain rule's inner beta forgotten)",
            "softplus's gradient is beta times too small at every x",
            _edit(SOFTPLUS, ("torch.sigmoid(ctx.beta * x)",
                             "torch.sigmoid(ctx.beta * x) / ctx.beta"))),
    Mistake("softplus", "forward without its final division by beta",
            "softplus's output with beta=0.5 is beta times the right value at every x",
            _edit(SOFTPLUS, ("torch.log1p(torch.exp(-z.abs()))) / beta",
                             "torch.log1p(torch.exp(-z.abs())))"))),
    Mistake("softplus", "forward divided by beta twice",
            "softplus's output with beta=0.5 is 1/beta times the right value at every x",
            _edit(SOFTPLUS, ("torch.log1p(torch.exp(-z.abs()))) / beta",
                             "torch.log1p(torch.exp(-z.abs()))) / beta / beta"))),
    Mistake("softplus", "backward sigmoid(x): beta forgotten inside the sigmoid",
            "softplus's gradient is the slope for beta = 1 at every x",
            _edit(SOFTPLUS, ("torch.sigmoid(ctx.beta * x)", "torch.sigmoid(x)"))),
    Mistake("squared_norm", "the rule adds 1 to every dim, negative ones too",
            "squared_norm's output under vmap has shape",
            _edit(SQUARED_NORM, ("dim + 1 if dim >= 0 else dim", "dim + 1"))),
    Mistake("squared_norm", "backward without the factor 2",
            "your gradient for x is off by a constant factor 0.5",
            _edit(SQUARED_NORM, ("return 2 * x * grad_output", "return x * grad_output"))),
    Mistake("LogSumExp", "backward takes the softmax over -1 whatever dim is",
            "LogSumExp's backward fails for dim=0, which is not the last dimension",
            _edit(LSE, ("return grad_output.unsqueeze(ctx.dim) * (x - output.unsqueeze(ctx.dim))"
                        ".exp(), None",
                        "return grad_output.unsqueeze(ctx.dim) * torch.softmax(x, -1), None"))),
]
