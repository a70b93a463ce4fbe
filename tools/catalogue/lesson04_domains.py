"""Lesson 04 answers that the generated domain checks decide (issue 37): a beta kept on the
Function class, right for one call at a time and wrong for two calls in one graph."""

from tools.catalogue import Mistake
from tools.catalogue.lesson04 import _swish

UNUSUAL: list = []

MISTAKES = [
    Mistake("SwishFunction", "beta kept on the class, not on ctx",
            "SwishFunction.forward sets SwishFunction.beta: a class attribute is shared by every "
            "call",
            _swish("        x, = ctx.saved_tensors\n        beta = SwishFunction.beta\n"
                   "        s = torch.sigmoid(beta * x)\n        ds = s * (1 - s)\n"
                   "        return grad_output * (s + beta * x * ds), "
                   "(grad_output * x * x * ds).sum()",
                   "        SwishFunction.beta = beta\n        ctx.save_for_backward(x)\n"
                   "        return x * torch.sigmoid(beta * x)")),
]
