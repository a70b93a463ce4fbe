"""Lesson 00: tensors written in place that the Function did not create (Function contract,
rule 5): the saved x, grad_output."""

from .. import Mistake

MISTAKES = [
    Mistake("Square", "the saved x doubled in place",
            "Square.backward modified its input x in place",
            """
class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 2

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return grad_output * x.mul_(2)
"""),
    Mistake("WeightedSum", "grad_output scaled in place for grad_x2",
            "WeightedSum's backward modified grad_output in place",
            """
class WeightedSum(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x1, x2, w1, w2):
        ctx.w1, ctx.w2 = w1, w2
        return w1 * x1 + w2 * x2

    @staticmethod
    def backward(ctx, grad_output):
        grad_x1 = grad_output * ctx.w1
        grad_x2 = grad_output
        grad_x2 *= ctx.w2
        return grad_x1, grad_x2, None, None
"""),
]
