"""Lesson 03 Functions the tests grade: the straight-through estimators done right, and each
mistake the lesson warns about (the class docstring names it)."""

import torch


class SignSTE(torch.autograd.Function):
    """sign(x) forward, identity backward."""

    @staticmethod
    def forward(ctx, x):
        return torch.sign(x)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output  # pretend d sign/dx = 1


class SignClippedSTE(torch.autograd.Function):
    """sign(x) forward, grad_output * (|x| <= 1) backward."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.sign(x)

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return grad_output * (x.abs() <= 1)  # the derivative of hardtanh


class RoundSTE(torch.autograd.Function):
    """round(x) forward (half to even), identity backward."""

    @staticmethod
    def forward(ctx, x):
        return torch.round(x)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output


SOLUTIONS = {"SignSTE": SignSTE, "SignClippedSTE": SignClippedSTE, "RoundSTE": RoundSTE}


class NotImplementedSignSTE(torch.autograd.Function):
    """The notebook stub, untouched."""

    @staticmethod
    def forward(ctx, x):
        raise NotImplementedError()

    @staticmethod
    def backward(ctx, grad_output):
        raise NotImplementedError()


class SignSTEZeroGradient(SignSTE):
    """Returns the true derivative of sign, zero, which is what an STE replaces."""

    @staticmethod
    def backward(ctx, grad_output):
        return torch.zeros_like(grad_output)


class SignSTEOnes(SignSTE):
    """Returns the surrogate derivative 1 and forgets to multiply by grad_output."""

    @staticmethod
    def backward(ctx, grad_output):
        return torch.ones_like(grad_output)


class SignSTEClipped(SignClippedSTE):
    """SignSTE that clips: the other exercise's estimator."""


class SignSTEZeroGoesUp(SignSTE):
    """where(x >= 0, 1, -1): sends 0 to 1 although sign(0) = 0."""

    @staticmethod
    def forward(ctx, x):
        return torch.where(x >= 0, 1.0, -1.0).to(x.dtype)


class SignSTETanh(SignSTE):
    """A smooth look-alike in forward: tanh(100 x) is not sign(x)."""

    @staticmethod
    def forward(ctx, x):
        return torch.tanh(100 * x)


class SignSTEDetachTrickInForward(SignSTE):
    """The y_hard - y_soft.detach() + y_soft trick inside forward with y_soft = x. Autograd is
    off there, so it is only arithmetic, and at |x| = 1e17 it rounds sign(x) to 0."""

    @staticmethod
    def forward(ctx, x):
        y_soft = x
        y_hard = torch.sign(x)
        return y_hard - y_soft.detach() + y_soft


class SignSTEInteger(SignSTE):
    """Returns an integer tensor instead of keeping x's dtype."""

    @staticmethod
    def forward(ctx, x):
        return torch.sign(x).long()


class SignSTECtxTensor(torch.autograd.Function):
    """Stores x on ctx instead of saving it (it does not even need it)."""

    @staticmethod
    def forward(ctx, x):
        ctx.x = x
        return torch.sign(x)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output


class SignClippedSTEUnclipped(SignClippedSTE):
    """Forgets the clip: identity backward like SignSTE."""

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output


class SignClippedSTEStrict(SignClippedSTE):
    """(|x| < 1): drops the gradient on the boundary |x| == 1."""

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return grad_output * (x.abs() < 1)


class SignClippedSTEInverted(SignClippedSTE):
    """Keeps the gradient outside the clip and zeroes it inside."""

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return grad_output * (x.abs() > 1)


class SignClippedSTEClampsGradOutput(SignClippedSTE):
    """Clamps grad_output's values instead of masking by the input."""

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output.clamp(-1, 1)


class SignClippedSTEMaskFromOutput(torch.autograd.Function):
    """Saves the output sign(x) and masks with it: |sign(x)| <= 1 always holds."""

    @staticmethod
    def forward(ctx, x):
        y = torch.sign(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        return grad_output * (y.abs() <= 1)


class SignClippedSTEInPlace(SignClippedSTE):
    """grad_output[|x| > 1] = 0 writes into a tensor backward does not own."""

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        grad_output[x.abs() > 1] = 0
        return grad_output


class SignClippedSTECtxTensor(torch.autograd.Function):
    """Stores x as ctx.x instead of ctx.save_for_backward(x)."""

    @staticmethod
    def forward(ctx, x):
        ctx.x = x
        return torch.sign(x)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * (ctx.x.abs() <= 1)


class RoundSTEFloor(RoundSTE):
    """floor(x) instead of round(x)."""

    @staticmethod
    def forward(ctx, x):
        return torch.floor(x)


class RoundSTETruncates(RoundSTE):
    """x.long(): truncates toward zero and changes the dtype back by hand."""

    @staticmethod
    def forward(ctx, x):
        return x.long().to(x.dtype)


class RoundSTEHalfAway(RoundSTE):
    """floor(x + 0.5): rounds 2.5 to 3, where torch.round gives 2."""

    @staticmethod
    def forward(ctx, x):
        return torch.floor(x + 0.5)


class RoundSTEIdentityForward(RoundSTE):
    """Forgets to round at all."""

    @staticmethod
    def forward(ctx, x):
        return x.clone()


class RoundSTESmooth(RoundSTE):
    """A smooth rounding look-alike: x - sin(2 pi x) / (2 pi)."""

    @staticmethod
    def forward(ctx, x):
        return x - torch.sin(2 * torch.pi * x) / (2 * torch.pi)


class RoundSTEZeroGradient(RoundSTE):
    """The true derivative of round: zero."""

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * 0


class RoundSTEWrongSign(RoundSTE):
    """Returns -grad_output."""

    @staticmethod
    def backward(ctx, grad_output):
        return -grad_output
