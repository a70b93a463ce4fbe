"""Lesson 04 Functions the tests grade: a SwishFunction that supports double backward, a
CubeOnce marked @once_differentiable, and each mistake the lesson warns about (the class
docstring names it)."""

import torch
from torch.autograd.function import once_differentiable


class SwishFunction(torch.autograd.Function):
    """y = x * sigmoid(beta * x); saves the inputs and recomputes the sigmoid in backward."""

    @staticmethod
    def forward(ctx, x, beta):
        ctx.save_for_backward(x, beta)
        return x * torch.sigmoid(beta * x)

    @staticmethod
    def backward(ctx, grad_output):
        x, beta = ctx.saved_tensors
        s = torch.sigmoid(beta * x)  # recomputed here, so autograd can record it
        ds = s * (1 - s)  # d sigmoid(z)/dz
        grad_x = grad_output * (s + beta * x * ds) if ctx.needs_input_grad[0] else None
        grad_beta = (grad_output * x * x * ds).sum() if ctx.needs_input_grad[1] else None
        return grad_x, grad_beta


class CubeOnce(torch.autograd.Function):
    """y = x ** 3, with a backward that refuses to be differentiated."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return grad_output * 3 * x ** 2


SOLUTIONS = {"SwishFunction": SwishFunction, "CubeOnce": CubeOnce}


def _swish_grads(grad_output, x, beta, s):
    ds = s * (1 - s)
    return grad_output * (s + beta * x * ds), (grad_output * x * x * ds).sum()


class SwishWithSigmoidOutput(torch.autograd.Function):
    """The other fix: returns the intermediate sigmoid(beta * x) as a second output, so saving
    it saves an output, and backward takes a gradient for it too."""

    @staticmethod
    def forward(ctx, x, beta):
        s = torch.sigmoid(beta * x)
        ctx.save_for_backward(x, beta, s)
        return x * s, s

    @staticmethod
    def backward(ctx, grad_y, grad_s):
        x, beta, s = ctx.saved_tensors
        ds = s * (1 - s)
        grad_x, grad_beta = _swish_grads(grad_y, x, beta, s)
        return grad_x + grad_s * beta * ds, grad_beta + (grad_s * x * ds).sum()


class SwishViaSigmoidOutput(torch.autograd.Function):
    """A Function wrapper graded as SwishFunction: only the first output of
    SwishWithSigmoidOutput."""

    @staticmethod
    def forward(ctx, x, beta):
        raise AssertionError("use SwishViaSigmoidOutput.apply")

    @staticmethod
    def backward(ctx, grad_output):
        raise AssertionError("use SwishViaSigmoidOutput.apply")

    @staticmethod
    def apply(x, beta):
        return SwishWithSigmoidOutput.apply(x, beta)[0]


class SwishSavesSigmoid(torch.autograd.Function):
    """Saves the intermediate sigmoid(beta * x): right first derivatives, wrong second ones."""

    @staticmethod
    def forward(ctx, x, beta):
        s = torch.sigmoid(beta * x)
        ctx.save_for_backward(x, beta, s)
        return x * s

    @staticmethod
    def backward(ctx, grad_output):
        x, beta, s = ctx.saved_tensors
        return _swish_grads(grad_output, x, beta, s)


class SwishDetaches(SwishFunction):
    """Detaches the saved tensors in backward."""

    @staticmethod
    def backward(ctx, grad_output):
        x, beta = (t.detach() for t in ctx.saved_tensors)
        return _swish_grads(grad_output, x, beta, torch.sigmoid(beta * x))


class SwishNoGrad(SwishFunction):
    """Computes backward under torch.no_grad()."""

    @staticmethod
    def backward(ctx, grad_output):
        with torch.no_grad():
            x, beta = ctx.saved_tensors
            return _swish_grads(grad_output, x, beta, torch.sigmoid(beta * x))


class SwishOnceDifferentiable(SwishFunction):
    """Marks a differentiable backward @once_differentiable."""

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        x, beta = ctx.saved_tensors
        return _swish_grads(grad_output, x, beta, torch.sigmoid(beta * x))


class SwishNoBetaGradient(SwishFunction):
    """Returns None for beta, which requires grad."""

    @staticmethod
    def backward(ctx, grad_output):
        x, beta = ctx.saved_tensors
        grad_x, _ = _swish_grads(grad_output, x, beta, torch.sigmoid(beta * x))
        return grad_x, None


class SwishBetaItem(torch.autograd.Function):
    """Keeps beta as a Python number (beta.item()): double backward loses d/d beta."""

    @staticmethod
    def forward(ctx, x, beta):
        ctx.save_for_backward(x)
        ctx.beta = beta.item()
        return x * torch.sigmoid(beta * x)

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return _swish_grads(grad_output, x, ctx.beta, torch.sigmoid(ctx.beta * x))


class SwishCtxTensors(torch.autograd.Function):
    """Stores x and beta as ctx attributes instead of saving them."""

    @staticmethod
    def forward(ctx, x, beta):
        ctx.x, ctx.beta = x, beta
        return x * torch.sigmoid(beta * x)

    @staticmethod
    def backward(ctx, grad_output):
        return _swish_grads(grad_output, ctx.x, ctx.beta, torch.sigmoid(ctx.beta * ctx.x))


class SwishWrongBetaGradient(SwishFunction):
    """grad_beta = sum(grad_output * x * ds): misses a factor x."""

    @staticmethod
    def backward(ctx, grad_output):
        x, beta = ctx.saved_tensors
        s = torch.sigmoid(beta * x)
        ds = s * (1 - s)
        return grad_output * (s + beta * x * ds), (grad_output * x * ds).sum()


class CubeDifferentiable(CubeOnce):
    """Forgets @once_differentiable: a second backward goes through."""

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return grad_output * 3 * x ** 2


class CubeDetaches(CubeOnce):
    """Detaches its result instead of marking backward @once_differentiable."""

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return (grad_output * 3 * x ** 2).detach()


class CubeOnceWrongGradient(CubeOnce):
    """d/dx x**3 = 3x: forgets the square."""

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return grad_output * 3 * x


class CubeOnceCtxTensor(torch.autograd.Function):
    """Stores x on ctx instead of saving it."""

    @staticmethod
    def forward(ctx, x):
        ctx.x = x
        return x ** 3

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        return grad_output * 3 * ctx.x ** 2
