"""Lesson 00: backwards that are not the derivation by hand with memory linear in the sizes
(Function contract, rule 3): Jacobians built as matrices, named by backward's peak memory,
and gradients asked of autograd inside backward (torch.autograd.grad, or .backward() on the
forward recomputed in backward), for each of the three exercises."""

from .. import Mistake

MISTAKES = [
    Mistake("Square", "the Jacobian of the flattened x: grad_output @ torch.diag(2 * x)",
            "Square's backward builds a Jacobian as a matrix",
            """
class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 2

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        jacobian = torch.diag(2 * x.reshape(-1))
        return (grad_output.reshape(-1) @ jacobian).reshape(x.shape)
"""),
    Mistake("WeightedSum", "each Jacobian built as w * torch.eye",
            "WeightedSum's backward builds a Jacobian as a matrix",
            """
class WeightedSum(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x1, x2, w1, w2):
        ctx.w1, ctx.w2 = w1, w2
        return w1 * x1 + w2 * x2

    @staticmethod
    def backward(ctx, grad_output):
        g = grad_output.reshape(-1)
        eye = torch.eye(g.numel(), dtype=g.dtype, device=g.device)
        grad_x1 = (g @ (ctx.w1 * eye)).reshape(grad_output.shape)
        grad_x2 = (g @ (ctx.w2 * eye)).reshape(grad_output.shape)
        return grad_x1, grad_x2, None, None
"""),
    Mistake("Outer", "both Jacobians built and summed over the outputs",
            "Outer's backward builds a Jacobian as a matrix",
            """
class Outer(torch.autograd.Function):
    @staticmethod
    def forward(ctx, u, v):
        ctx.save_for_backward(u, v)
        return torch.outer(u, v)

    @staticmethod
    def backward(ctx, grad_output):
        u, v = ctx.saved_tensors
        m, n = u.shape[0], v.shape[0]
        grad_u = grad_v = None
        if ctx.needs_input_grad[0]:  # J_u[i, j, k] = v[j] if i == k
            eye = torch.eye(m, dtype=u.dtype, device=u.device)
            jacobian = eye[:, None, :] * v[None, :, None]
            grad_u = (grad_output[:, :, None] * jacobian).sum((0, 1))
        if ctx.needs_input_grad[1]:  # J_v[i, j, k] = u[i] if j == k
            eye = torch.eye(n, dtype=u.dtype, device=u.device)
            jacobian = u[:, None, None] * eye[None, :, :]
            grad_v = (grad_output[:, :, None] * jacobian).sum((0, 1))
        return grad_u, grad_v
"""),
    Mistake("Outer", "autograd through an imported grad, the output recomputed",
            "Outer.backward calls torch.autograd.grad: write the gradient formula by hand",
            """from torch.autograd import grad

class Outer(torch.autograd.Function):
    @staticmethod
    def forward(ctx, u, v):
        ctx.save_for_backward(u, v)
        return torch.outer(u, v)

    @staticmethod
    def backward(ctx, grad_output):
        u, v = ctx.saved_tensors
        with torch.enable_grad():
            uu = u.detach().requires_grad_(ctx.needs_input_grad[0])
            vv = v.detach().requires_grad_(ctx.needs_input_grad[1])
            wanted = [t for t in (uu, vv) if t.requires_grad]
            got = iter(grad(torch.outer(uu, vv), wanted, grad_output))
        return tuple(next(got) if n else None for n in ctx.needs_input_grad)
"""),
    Mistake("Outer", "autograd through an imported grad, at zeros (outer is linear)",
            "Outer.backward calls torch.autograd.grad: write the gradient formula by hand",
            """from torch.autograd import grad

class Outer(torch.autograd.Function):
    @staticmethod
    def forward(ctx, u, v):
        ctx.save_for_backward(u, v)
        return torch.outer(u, v)

    @staticmethod
    def backward(ctx, grad_output):
        u, v = ctx.saved_tensors
        gu = gv = None
        with torch.enable_grad():
            if ctx.needs_input_grad[0]:
                z = torch.zeros_like(u, requires_grad=True)
                gu, = grad(torch.outer(z, v), z, grad_output)
            if ctx.needs_input_grad[1]:
                z = torch.zeros_like(v, requires_grad=True)
                gv, = grad(torch.outer(u, z), z, grad_output)
        return gu, gv
"""),
    # a review's answers (lesson 00, score 7): both pass every value and gradient check; only
    # the trace of backward shows autograd asked for the derivative
    Mistake("Square", "autograd of x ** 2 recomputed in backward, torch.autograd.grad",
            "Square.backward calls torch.autograd.grad",
            """
class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 2

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        with torch.enable_grad():
            xd = x.detach().requires_grad_()
            g, = torch.autograd.grad(xd ** 2, xd, grad_output)
        return g
"""),
    Mistake("Square", "x ** 2 recomputed in backward and .backward() called on it",
            "Square.backward calls Tensor.backward",
            """
class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 2

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        with torch.enable_grad():
            xd = x.detach().requires_grad_()
            (xd ** 2).backward(grad_output)
        return xd.grad
"""),
    Mistake("WeightedSum", "autograd of the weighted sum at zeros, torch.autograd.grad",
            "WeightedSum.backward calls torch.autograd.grad",
            """
class WeightedSum(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x1, x2, w1, w2):
        ctx.w1, ctx.w2 = w1, w2
        return w1 * x1 + w2 * x2

    @staticmethod
    def backward(ctx, grad_output):
        with torch.enable_grad():
            a = grad_output.new_zeros(grad_output.shape).requires_grad_()
            b = grad_output.new_zeros(grad_output.shape).requires_grad_()
            g1, g2 = torch.autograd.grad(ctx.w1 * a + ctx.w2 * b, (a, b), grad_output)
        return (g1 if ctx.needs_input_grad[0] else None,
                g2 if ctx.needs_input_grad[1] else None, None, None)
"""),
]
