"""Lesson 00: rule 1's device clause at the shapes rule 1 names (review 79). A tensor made without
``device=`` in a branch for an empty, 0-d or size-1 input lands on the default device, which on a
GPU is not the inputs'; the default-device check runs at each such shape the domain has, not
only at the typical inputs, and names the shape it tried."""

from .. import Mistake

_DEFAULT_DEVICE = "on the default device (torch.{made} without device=)"

MISTAKES = [
    Mistake("Square", "an empty x answered with torch.empty(x.shape, dtype=x.dtype)",
            "Square returned an output " + _DEFAULT_DEVICE.format(made="empty"),
            """
class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        if x.numel() == 0:
            return torch.empty(x.shape, dtype=x.dtype)
        return x ** 2

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return 2 * x * grad_output
"""),
    Mistake("Square", "a 0-d x answered with torch.tensor(x.item() ** 2, dtype=x.dtype)",
            "Square returned an output " + _DEFAULT_DEVICE.format(made="tensor"),
            """
class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        if x.dim() == 0:
            return torch.tensor(x.item() ** 2, dtype=x.dtype)
        return x ** 2

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return 2 * x * grad_output
"""),
    Mistake("WeightedSum", "empty inputs answered with torch.zeros(x1.shape, dtype=x1.dtype)",
            "WeightedSum returned an output " + _DEFAULT_DEVICE.format(made="zeros"),
            """
class WeightedSum(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x1, x2, w1, w2):
        ctx.w1, ctx.w2 = w1, w2
        if x1.numel() == 0:
            return torch.zeros(x1.shape, dtype=x1.dtype)
        return w1 * x1 + w2 * x2

    @staticmethod
    def backward(ctx, grad_output):
        return (grad_output * ctx.w1 if ctx.needs_input_grad[0] else None,
                grad_output * ctx.w2 if ctx.needs_input_grad[1] else None, None, None)
"""),
    Mistake("Outer", "an empty table made with torch.zeros(m, n, dtype=u.dtype)",
            "Outer returned an output " + _DEFAULT_DEVICE.format(made="zeros"),
            """
class Outer(torch.autograd.Function):
    @staticmethod
    def forward(ctx, u, v):
        ctx.save_for_backward(u, v)
        if u.numel() == 0 or v.numel() == 0:
            return torch.zeros(u.shape[0], v.shape[0], dtype=u.dtype)
        return u[:, None] * v[None, :]

    @staticmethod
    def backward(ctx, grad_output):
        u, v = ctx.saved_tensors
        return (grad_output @ v if ctx.needs_input_grad[0] else None,
                u @ grad_output if ctx.needs_input_grad[1] else None)
"""),
    Mistake("Outer", "an empty table's gradients made with torch.zeros(u.shape, dtype=u.dtype)",
            "Outer made a tensor " + _DEFAULT_DEVICE.format(made="zeros") + " and used it",
            """
class Outer(torch.autograd.Function):
    @staticmethod
    def forward(ctx, u, v):
        ctx.save_for_backward(u, v)
        return u[:, None] * v[None, :]

    @staticmethod
    def backward(ctx, grad_output):
        u, v = ctx.saved_tensors
        need_u, need_v = ctx.needs_input_grad
        if grad_output.numel() == 0:
            return (torch.zeros(u.shape, dtype=u.dtype) if need_u else None,
                    torch.zeros(v.shape, dtype=v.dtype) if need_v else None)
        return (grad_output @ v if need_u else None, u @ grad_output if need_v else None)
"""),
    Mistake("Outer", "grad_u for m = 1 built with torch.tensor([...], dtype=u.dtype)",
            "Outer made a tensor " + _DEFAULT_DEVICE.format(made="tensor") + " and used it",
            """
class Outer(torch.autograd.Function):
    @staticmethod
    def forward(ctx, u, v):
        ctx.save_for_backward(u, v)
        return u[:, None] * v[None, :]

    @staticmethod
    def backward(ctx, grad_output):
        u, v = ctx.saved_tensors
        need_u, need_v = ctx.needs_input_grad
        if u.shape[0] == 1:  # a single row: its gradient is one number
            grad_u = (torch.tensor([torch.dot(grad_output[0], v).item()], dtype=u.dtype)
                      if need_u else None)
        else:
            grad_u = grad_output @ v if need_u else None
        return grad_u, (u @ grad_output if need_v else None)
"""),
]
