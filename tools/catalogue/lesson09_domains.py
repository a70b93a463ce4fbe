"""Lesson 09 answers that only the generated domain checks separate (issue 37)."""

from . import Mistake

CUMMAX_IN_FLOAT32 = """
class CumMax(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, dim):
        _, indices = torch.cummax(x.float(), dim)
        ctx.save_for_backward(indices)
        ctx.dim, ctx.shape = dim, x.shape
        return x.gather(dim, indices)

    @staticmethod
    def backward(ctx, grad_output):
        indices, = ctx.saved_tensors
        grad = grad_output.new_zeros(ctx.shape)
        return grad.scatter_add(ctx.dim, indices, grad_output), None
"""

UNUSUAL = []

MISTAKES = [
    Mistake("CumMax", "running maximum found on a float32 copy",
            "your gradient for x is wrong: largest error 2.18 at index (0, 1)", CUMMAX_IN_FLOAT32),
]
