"""Lesson 04, review 59 (fourth round): a SwishFunction whose (x, beta) sit in a WeakKeyDictionary
keyed by ctx, popped by the first backward (a second backward of one graph finds nothing) or
read with a subscript; a SwishFunction whose backward computes in float32 for float64 inputs
(named as the float32 step, not as a factor autograd sees differently); a CubeOnce that raises
its own error under create_graph=True instead of carrying @once_differentiable (named as the
missing mark). Unusual: NumpyTanh's inner Function nested in its class body, skipping gradients
by needs_input_grad; an inner Function that computes in float64 for a float32 x."""

from .. import Mistake, Unusual, edit
from .numpy_tanh import CALL, RIGHT, _inner, _tanh
from .review56 import CUBE, SWISH

SIDE_TABLE = ("import weakref\n_SIDE = weakref.WeakKeyDictionary()\n"
              "class SwishFunction(torch.autograd.Function):")
POPPED = edit(SWISH, ("class SwishFunction(torch.autograd.Function):", SIDE_TABLE),
              ("        ctx.save_for_backward(x, beta)\n",
               "        ctx.save_for_backward(x, beta)\n        _SIDE[ctx] = (x, beta)\n"),
              ("        x, beta = ctx.saved_tensors\n",
               "        _ = ctx.saved_tensors\n        x, beta = _SIDE.pop(ctx)\n"))

NESTED = """import numpy as np


class NumpyTanh(torch.autograd.Function):
    class Back(torch.autograd.Function):
        @staticmethod
        def forward(ctx, g, y):
            ctx.save_for_backward(g, y)
            yn = y.detach().numpy()
            return torch.from_numpy(g.detach().numpy() * (1 - yn * yn))

        @staticmethod
        def backward(ctx, grad_b):
            g, y = ctx.saved_tensors
            gb, g, y = grad_b.detach().numpy(), g.detach().numpy(), y.detach().numpy()
            dg = torch.from_numpy(gb * (1 - y * y)) if ctx.needs_input_grad[0] else None
            dy = torch.from_numpy(-2 * gb * g * y) if ctx.needs_input_grad[1] else None
            return dg, dy

    @staticmethod
    def forward(ctx, x):
        y = torch.from_numpy(np.tanh(x.detach().numpy()))
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        return NumpyTanh.Back.apply(grad_output, y)
"""

MISTAKES = [
    Mistake("SwishFunction", "(x, beta) in a WeakKeyDictionary keyed by ctx, popped in backward",
            "first run consumed state it reads", POPPED, named=True),
    Mistake("SwishFunction", "(x, beta) in a WeakKeyDictionary keyed by ctx, read by subscript",
            "reads x and beta from somewhere other than ctx.saved_tensors",
            edit(POPPED, ("_SIDE.pop(ctx)", "_SIDE[ctx]")), named=True),
    Mistake("SwishFunction", "backward computes in float32 for float64 inputs",
            "backward computes in float32 for float64 inputs",
            edit(SWISH, ("        s = torch.sigmoid(beta * x)\n",
                         "        x, beta, grad_output = x.float(), beta.float(), "
                         "grad_output.float()\n        s = torch.sigmoid(beta * x)\n")),
            named=True),
    Mistake("CubeOnce", "raises its own once_differentiable-like error instead of the mark",
            "raising an error yourself is not the mark",
            edit(CUBE, ("    @once_differentiable\n", ""),
                 ("        return grad_output * local",
                  "        if grad_output.requires_grad:\n            raise RuntimeError("
                  "\"trying to differentiate twice a function that was marked with "
                  "@once_differentiable\")\n        return grad_output * local")), named=True),
]

UNUSUAL = [
    Unusual("NumpyTanh", "inner Function nested in the class body, needs_input_grad respected",
            NESTED),
    Unusual("NumpyTanh", "inner Function computes in float64 for a float32 x, returns float64",
            _tanh(CALL, edit(_inner(RIGHT), (
                "        g, y = g.detach().numpy(), y.detach().numpy()\n",
                "        g = g.detach().numpy().astype(np.float64)\n"
                "        y = y.detach().numpy().astype(np.float64)\n")))),
]
