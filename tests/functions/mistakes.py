"""Deliberately wrong Functions, each with one mistake the course warns about.

Each class docstring names the mistake; the tests check that grading names it too.
"""

import torch

from .correct import FusedLinearReLU, MyLinearFunction, MyReLU, MySigmoid, Square, _flat


class Stub(torch.autograd.Function):
    """Any exercise's notebook stub, untouched."""

    @staticmethod
    def forward(ctx, *inputs):
        # YOUR CODE HERE
        raise NotImplementedError()

    @staticmethod
    def backward(ctx, grad_output):
        # YOUR CODE HERE
        raise NotImplementedError()


class NotImplementedSquare(torch.autograd.Function):
    """The notebook stub, untouched."""

    @staticmethod
    def forward(ctx, x):
        raise NotImplementedError()

    @staticmethod
    def backward(ctx, grad_output):
        raise NotImplementedError()


class BackwardNotImplementedSquare(Square):
    """Forward written, backward still the stub."""

    @staticmethod
    def backward(ctx, grad_output):
        raise NotImplementedError()


class SquareWrongSign(Square):
    """d/dx x**2 = -2x: the sign is wrong."""

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return -2 * x * grad_output


class SquareScaled(Square):
    """d/dx x**2 = 5x: off by a constant factor 2.5."""

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return 5 * x * grad_output


class SquareZeroGradient(Square):
    """Backward returns zeros: an unfinished backward."""

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return torch.zeros_like(x)


class SquareForgetsGradOutput(Square):
    """Returns the local derivative 2x and forgets the chain rule's grad_output."""

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return 2 * x


class SquareWrongForward(Square):
    """Forward computes x ** 3."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3


class SquareCtxTensor(torch.autograd.Function):
    """Stores x as ctx.x instead of saving it."""

    @staticmethod
    def forward(ctx, x):
        ctx.x = x
        return x ** 2

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * 2 * ctx.x


class WeightedSumTwoGradients(torch.autograd.Function):
    """Returns gradients for x1 and x2 only, forgetting the None for w1 and w2."""

    @staticmethod
    def forward(ctx, x1, x2, w1, w2):
        ctx.w1, ctx.w2 = w1, w2
        return w1 * x1 + w2 * x2

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * ctx.w1, grad_output * ctx.w2


class WeightedSumSwapped(WeightedSumTwoGradients):
    """Swaps the weights: grad_x1 = w2 * grad_output."""

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * ctx.w2, grad_output * ctx.w1, None, None


class MySigmoidSavesInput(torch.autograd.Function):
    """Saves x and recomputes sigmoid(x) in backward."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.sigmoid(x)

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        y = torch.sigmoid(x)
        return grad_output * y * (1 - y)


class MySigmoidUnstable(torch.autograd.Function):
    """exp(x) / (1 + exp(x)): inf / inf = nan for x > 709."""

    @staticmethod
    def forward(ctx, x):
        e = torch.exp(x)
        y = e / (1 + e)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        return grad_output * y * (1 - y)


class MySigmoidCtxAttribute(torch.autograd.Function):
    """Stores the output as ctx.y, out of reach of autograd's version counter."""

    @staticmethod
    def forward(ctx, x):
        y = torch.sigmoid(x)
        ctx.y = y
        return y

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * ctx.y * (1 - ctx.y)


class MySigmoidNestedCtxAttribute(MySigmoidCtxAttribute):
    """Hides the output in a list on ctx."""

    @staticmethod
    def forward(ctx, x):
        y = torch.sigmoid(x)
        ctx.cache = {"saved": [y]}
        return y

    @staticmethod
    def backward(ctx, grad_output):
        y = ctx.cache["saved"][0]
        return grad_output * y * (1 - y)


class MySigmoidReentrant(MySigmoid):
    """Asks autograd for the gradient inside backward instead of writing it."""

    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        with torch.enable_grad():
            x = torch.logit(y).detach().requires_grad_()
            grad_x, = torch.autograd.grad(torch.sigmoid(x), x, grad_output)
        return grad_x


class MySigmoidBuiltinBackward(MySigmoid):
    """Calls the built-in aten.sigmoid_backward."""

    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        return torch.ops.aten.sigmoid_backward(grad_output, y)


class MyReLUMasksGradOutputInPlace(MyReLU):
    """grad_output[x < 0] = 0 writes into a tensor backward does not own."""

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        grad_output[x < 0] = 0
        return grad_output


class MyReLUInPlaceInput(torch.autograd.Function):
    """x.clamp_(min=0) overwrites the caller's tensor (a copy is returned)."""

    @staticmethod
    def forward(ctx, x):
        mask = x > 0
        ctx.save_for_backward(mask)
        return x.clamp_(min=0).clone()

    @staticmethod
    def backward(ctx, grad_output):
        mask, = ctx.saved_tensors
        return grad_output * mask


class MyReLUReturnsInPlaceInput(torch.autograd.Function):
    """Saves x, then returns x.clamp_(min=0): the input itself, overwritten."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.clamp_(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return grad_output * (x > 0)


class MyReLUInPlaceInBackward(MyReLU):
    """Overwrites the saved input in backward: x.clamp_(min=0).sign_()."""

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return grad_output * x.clamp_(min=0).sign_()


class MyReLUCtxMask(torch.autograd.Function):
    """ctx.mask = mask: the version check cannot see it."""

    @staticmethod
    def forward(ctx, x):
        ctx.mask = x > 0
        return x.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * ctx.mask


class MyReLULeaky(MyReLU):
    """Lets the gradient through for x > -10, not x > 0."""

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return grad_output * (x > -10)


class ScaledSigmoidFloatGradient(torch.autograd.Function):
    """Returns a Python float as the 'gradient' of the float scale."""

    @staticmethod
    def forward(ctx, x, scale):
        s = torch.sigmoid(x)
        ctx.save_for_backward(s)
        ctx.scale = scale
        return scale * s

    @staticmethod
    def backward(ctx, grad_output):
        s, = ctx.saved_tensors
        return grad_output * ctx.scale * s * (1 - s), 0.0


class ScaledSigmoidForgetsScale(ScaledSigmoidFloatGradient):
    """Forgets the scale in backward."""

    @staticmethod
    def backward(ctx, grad_output):
        s, = ctx.saved_tensors
        return grad_output * s * (1 - s), None


class MyLinearTransposedGradWeight(MyLinearFunction):
    """grad_weight = x.T @ grad_output has shape (in, out), the transpose of weight's."""

    @staticmethod
    def backward(ctx, grad_output):
        x, weight = ctx.saved_tensors
        grad_bias = _flat(grad_output).sum(0) if ctx.has_bias else None
        return grad_output @ weight, _flat(x).T @ _flat(grad_output), grad_bias


class MyLinearGradXTransposed(MyLinearFunction):
    """grad_x = grad_output @ weight.T: the popular wrong 'fix'."""

    @staticmethod
    def backward(ctx, grad_output):
        x, weight = ctx.saved_tensors
        grad_bias = _flat(grad_output).sum(0) if ctx.has_bias else None
        return grad_output @ weight.T, _flat(grad_output).T @ _flat(x), grad_bias


class MyLinearIgnoresNeedsInputGrad(MyLinearFunction):
    """Computes every gradient whether or not anyone asked for it."""

    @staticmethod
    def backward(ctx, grad_output):
        x, weight = ctx.saved_tensors
        grad_bias = _flat(grad_output).sum(0) if ctx.has_bias else None
        return grad_output @ weight, _flat(grad_output).T @ _flat(x), grad_bias


class MyLinearNo1D(MyLinearFunction):
    """Written for 2-D x only: grad_output.t() @ x fails for 1-D x."""

    @staticmethod
    def backward(ctx, grad_output):
        x, weight = ctx.saved_tensors
        grad_bias = grad_output.sum(0) if ctx.has_bias else None
        return grad_output @ weight, grad_output.t() @ x, grad_bias


class FusedSavesPreActivation(torch.autograd.Function):
    """Saves the float pre-activation instead of a boolean mask."""

    @staticmethod
    def forward(ctx, x, weight, bias=None):
        pre_activation = x @ weight.T
        if bias is not None:
            pre_activation = pre_activation + bias
        ctx.save_for_backward(x, weight, pre_activation)
        ctx.has_bias = bias is not None
        return pre_activation.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        x, weight, pre_activation = ctx.saved_tensors
        grad_pre = grad_output * (pre_activation > 0)
        grad_bias = _flat(grad_pre).sum(0) if ctx.has_bias else None
        return grad_pre @ weight, _flat(grad_pre).T @ _flat(x), grad_bias


class FusedCtxMask(FusedLinearReLU):
    """Keeps the mask as ctx.mask."""

    @staticmethod
    def forward(ctx, x, weight, bias=None):
        pre_activation = x @ weight.T
        if bias is not None:
            pre_activation = pre_activation + bias
        ctx.mask = pre_activation > 0
        ctx.save_for_backward(x, weight, ctx.mask)
        ctx.has_bias = bias is not None
        return pre_activation * ctx.mask


class FusedNoReLUGradient(FusedLinearReLU):
    """Forgets to mask grad_output: the gradient of the linear part only."""

    @staticmethod
    def backward(ctx, grad_output):
        x, weight, _ = ctx.saved_tensors
        grad_bias = _flat(grad_output).sum(0) if ctx.has_bias else None
        return grad_output @ weight, _flat(grad_output).T @ _flat(x), grad_bias


def square_function(x):
    """A plain function, not a torch.autograd.Function."""
    return x ** 2


class MyLinearUnguardedBias(MyLinearFunction):
    """Reads ctx.needs_input_grad[2] even when apply was called without a bias."""

    @staticmethod
    def backward(ctx, grad_output):
        x, weight = ctx.saved_tensors
        grad_bias = _flat(grad_output).sum(0) if ctx.needs_input_grad[2] else None
        return grad_output @ weight, _flat(grad_output).T @ _flat(x), grad_bias


class FusedGradXTransposed(FusedLinearReLU):
    """grad_x = grad_pre @ weight.T in the fused layer."""

    @staticmethod
    def backward(ctx, grad_output):
        x, weight, mask = ctx.saved_tensors
        grad_pre = grad_output * mask
        grad_bias = _flat(grad_pre).sum(0) if ctx.has_bias else None
        return grad_pre @ weight.T, _flat(grad_pre).T @ _flat(x), grad_bias


class ScaledSigmoidDividesByScale(ScaledSigmoidFloatGradient):
    """Saves the output and divides by scale in backward: nan at scale = 0."""

    @staticmethod
    def forward(ctx, x, scale):
        y = scale * torch.sigmoid(x)
        ctx.save_for_backward(y)
        ctx.scale = scale
        return y

    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        sigmoid = y / ctx.scale
        return grad_output * ctx.scale * sigmoid * (1 - sigmoid), None
