"""Correct solutions to the graded exercises of lessons 00-02, written as the course teaches."""

import torch


class Square(torch.autograd.Function):
    """y = x ** 2."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 2

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return grad_output * 2 * x  # d/dx x**2 = 2x


class WeightedSum(torch.autograd.Function):
    """y = w1 * x1 + w2 * x2 with Python-float weights."""

    @staticmethod
    def forward(ctx, x1, x2, w1, w2):
        ctx.w1, ctx.w2 = w1, w2
        return w1 * x1 + w2 * x2

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * ctx.w1, grad_output * ctx.w2, None, None


class MySigmoid(torch.autograd.Function):
    """A stable sigmoid that saves only its output."""

    @staticmethod
    def forward(ctx, x):
        z = torch.exp(-x.abs())  # at most 1, never overflows
        y = torch.where(x >= 0, 1 / (1 + z), z / (1 + z))
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        return grad_output * y * (1 - y)  # d sigmoid/dx = y (1 - y)


class MyReLU(torch.autograd.Function):
    """y = max(x, 0), never writing into x or grad_output."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return grad_output * (x > 0)


class ScaledSigmoid(torch.autograd.Function):
    """y = scale * sigmoid(x) with a Python-float scale."""

    @staticmethod
    def forward(ctx, x, scale):
        s = torch.sigmoid(x)
        ctx.save_for_backward(s)
        ctx.scale = scale
        return scale * s

    @staticmethod
    def backward(ctx, grad_output):
        s, = ctx.saved_tensors
        return grad_output * ctx.scale * s * (1 - s), None


def _flat(t: torch.Tensor) -> torch.Tensor:
    """View a (*, n) tensor as (rows, n)."""
    return t.reshape(-1, t.shape[-1])


class MyLinearFunction(torch.autograd.Function):
    """y = x @ weight.T + bias for x of shape (*, in), skipping unneeded gradient matmuls."""

    @staticmethod
    def forward(ctx, x, weight, bias=None):
        ctx.save_for_backward(x, weight)
        ctx.has_bias = bias is not None
        y = x @ weight.T
        return y + bias if bias is not None else y

    @staticmethod
    def backward(ctx, grad_output):
        x, weight = ctx.saved_tensors
        grad_x = grad_weight = grad_bias = None
        if ctx.needs_input_grad[0]:
            grad_x = grad_output @ weight  # not weight.T: y = x @ W.T
        if ctx.needs_input_grad[1]:
            grad_weight = _flat(grad_output).T @ _flat(x)
        if ctx.has_bias and ctx.needs_input_grad[2]:
            grad_bias = _flat(grad_output).sum(0)
        return grad_x, grad_weight, grad_bias


class FusedLinearReLU(torch.autograd.Function):
    """y = relu(x @ weight.T + bias), saving a boolean mask instead of the pre-activation."""

    @staticmethod
    def forward(ctx, x, weight, bias=None):
        pre_activation = x @ weight.T
        if bias is not None:
            pre_activation = pre_activation + bias
        mask = pre_activation > 0
        ctx.save_for_backward(x, weight, mask)
        ctx.has_bias = bias is not None
        return pre_activation * mask

    @staticmethod
    def backward(ctx, grad_output):
        x, weight, mask = ctx.saved_tensors
        grad_pre = grad_output * mask
        grad_x = grad_weight = grad_bias = None
        if ctx.needs_input_grad[0]:
            grad_x = grad_pre @ weight
        if ctx.needs_input_grad[1]:
            grad_weight = _flat(grad_pre).T @ _flat(x)
        if ctx.has_bias and ctx.needs_input_grad[2]:
            grad_bias = _flat(grad_pre).sum(0)
        return grad_x, grad_weight, grad_bias


class MyLinearUnreducedGradBias(MyLinearFunction):
    """Returns grad_output itself as grad_bias and lets the engine sum it to bias's shape."""

    @staticmethod
    def backward(ctx, grad_output):
        grad_x, grad_weight, _ = MyLinearFunction.backward(ctx, grad_output)
        return grad_x, grad_weight, grad_output.clone() if ctx.has_bias else None


class FusedLinearReLUFlat(FusedLinearReLU):
    """Flattens x to (rows, in) first and saves that view and a (rows, out) mask."""

    @staticmethod
    def forward(ctx, x, weight, bias=None):
        rows = _flat(x)
        pre_activation = rows @ weight.T
        if bias is not None:
            pre_activation = pre_activation + bias
        mask = pre_activation > 0
        ctx.save_for_backward(rows, weight, mask)
        ctx.has_bias, ctx.x_shape = bias is not None, x.shape
        return (pre_activation * mask).reshape(*x.shape[:-1], weight.shape[0])

    @staticmethod
    def backward(ctx, grad_output):
        rows, weight, mask = ctx.saved_tensors
        grad_pre = _flat(grad_output) * mask
        grad_x = grad_weight = grad_bias = None
        if ctx.needs_input_grad[0]:
            grad_x = (grad_pre @ weight).reshape(ctx.x_shape)
        if ctx.needs_input_grad[1]:
            grad_weight = grad_pre.T @ rows
        if ctx.has_bias and ctx.needs_input_grad[2]:
            grad_bias = grad_pre.sum(0)
        return grad_x, grad_weight, grad_bias


#: Every correct solution by the exercise name the syllabus gives it.
SOLUTIONS = {f.__name__: f for f in (Square, WeightedSum, MySigmoid, MyReLU, ScaledSigmoid,
                                     MyLinearFunction, FusedLinearReLU)}

#: Unusual but correct solutions the grader must accept, with the exercise each solves.
VARIANTS = {MyLinearUnreducedGradBias: "MyLinearFunction", FusedLinearReLUFlat: "FusedLinearReLU"}
