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

UNUSUAL = []

MISTAKES = [
    Mistake("MySigmoid", "the output kept on the class (MySigmoid.last_output = y)",
            "MySigmoid saved nothing with ctx.save_for_backward: save the output y",
            SIGMOID_ON_THE_CLASS),
    Mistake("ScaledSigmoid", "scale kept on the class",
            "ScaledSigmoid's gradient is wrong when a second call runs forward before the first", SCALE_ON_THE_CLASS),
]
