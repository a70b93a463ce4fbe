"""Lesson 00: shapes the Function contract's rule 1 names and rule 2's broadcast gradient. A
backward that squeezes its gradient fails at size-1 dimensions ((3, 1), (1,)); a Python loop
joined by torch.stack fails on an empty input. A gradient of a shape the input broadcasts to
is summed down by autograd and accepted (rule 2; until issue 67 Outer's grader refused it: a
deliberate verdict change)."""

from .. import Mistake, Unusual

UNUSUAL = [
    Unusual("Outer", "grad_u as a (1, m) row, which the engine sums to (m,)",
            """
class Outer(torch.autograd.Function):
    @staticmethod
    def forward(ctx, u, v):
        ctx.save_for_backward(u, v)
        return torch.outer(u, v)

    @staticmethod
    def backward(ctx, grad_output):
        u, v = ctx.saved_tensors
        need_u, need_v = ctx.needs_input_grad
        return ((grad_output @ v)[None] if need_u else None,
                u @ grad_output if need_v else None)
"""),
]

MISTAKES = [
    Mistake("Square", "entries multiplied in a Python loop, torch.stack",
            "with x of shape (0,): stack expects a non-empty TensorList. Every non-empty shape "
            "passed",
            """
class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 2

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        parts = [2 * xi * gi for xi, gi in zip(x.reshape(-1), grad_output.reshape(-1))]
        return torch.stack(parts).reshape(x.shape)
"""),
    Mistake("WeightedSum", "entries weighted in a Python loop, torch.stack",
            "x2 of shape (0,), w1=0.5, w2=-2.0: stack expects a non-empty TensorList. Every "
            "non-empty shape passed",
            """
class WeightedSum(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x1, x2, w1, w2):
        ctx.w1, ctx.w2 = w1, w2
        return w1 * x1 + w2 * x2

    @staticmethod
    def backward(ctx, grad_output):
        flat = grad_output.reshape(-1)
        grad_x1 = torch.stack([ctx.w1 * g for g in flat])
        grad_x2 = torch.stack([ctx.w2 * g for g in flat])
        return (grad_x1.reshape(grad_output.shape), grad_x2.reshape(grad_output.shape), None, None)
"""),
    # issue 69: a squeezed gradient, right wherever no dimension has size 1
    Mistake("Square", "gradient squeezed",
            "grad_x has shape (3,) but x has shape (3, 1)", """
class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 2

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return (2 * x * grad_output).squeeze()
"""),
    Mistake("WeightedSum", "grad_output squeezed",
            "grad_x1 has shape (3,) but x1 has shape (3, 1)", """
class WeightedSum(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x1, x2, w1, w2):
        ctx.w1, ctx.w2 = w1, w2
        return w1 * x1 + w2 * x2

    @staticmethod
    def backward(ctx, grad_output):
        g = grad_output.squeeze()
        return g * ctx.w1, g * ctx.w2, None, None
"""),
]
