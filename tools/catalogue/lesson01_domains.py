"""Lesson 01 answers that only the generated domain checks separate (issue 37): state kept on
the class, where one call at a time cannot tell it from ctx."""

from . import Mistake

SIGMOID_ON_THE_CLASS = """
class MySigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        z = torch.exp(-x.abs())
        y = torch.where(x >= 0, 1 / (1 + z), z / (1 + z))
        MySigmoid.last_output = y
        return y

    @staticmethod
    def backward(ctx, grad_output):
        y = MySigmoid.last_output
        return grad_output * y * (1 - y)
"""

SCALE_ON_THE_CLASS = """
class ScaledSigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        z = torch.exp(-x.abs())
        y = torch.where(x >= 0, 1 / (1 + z), z / (1 + z))
        ctx.save_for_backward(y)
        ScaledSigmoid.scale = scale
        return scale * y

    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        return grad_output * ScaledSigmoid.scale * y * (1 - y), None
"""

SCALE_IN_A_GLOBAL = """
_scale = [1.0]


class ScaledSigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        z = torch.exp(-x.abs())
        y = torch.where(x >= 0, 1 / (1 + z), z / (1 + z))
        ctx.save_for_backward(y)
        _scale[0] = scale
        return scale * y

    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        return grad_output * _scale[0] * y * (1 - y), None
"""

UNUSUAL = []

MISTAKES = [
    Mistake("MySigmoid", "the output kept on the class (MySigmoid.last_output = y)",
            "MySigmoid.forward sets MySigmoid.last_output: a class attribute is shared by every call",
            SIGMOID_ON_THE_CLASS),
    Mistake("ScaledSigmoid", "scale kept on the class beside a saved stable sigmoid",
            "ScaledSigmoid.forward sets ScaledSigmoid.scale: a class attribute is shared by every "
            "call", SCALE_ON_THE_CLASS),
    Mistake("ScaledSigmoid", "scale kept in a module global",
            "ScaledSigmoid's backward used another call's scale: with two calls in one graph",
            SCALE_IN_A_GLOBAL),
]
