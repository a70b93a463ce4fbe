"""Small reference Functions, right and deliberately wrong, that the widget tests run on
(the graded exercises' correct versions come from tests/functions)."""

from types import SimpleNamespace

import pytest
import torch

from functions.correct import MySigmoid, Square
from functions.ste import RoundSTE, SignClippedSTE, SignSTE


class ScaledSigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        y = torch.sigmoid(x)
        ctx.save_for_backward(y)
        ctx.scale = scale
        return scale * y

    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        return grad_output * ctx.scale * y * (1 - y), None


class SloppySwish(torch.autograd.Function):
    """Wrong on purpose: saves an intermediate and keeps a tensor on ctx."""

    @staticmethod
    def forward(ctx, x, beta):
        s = torch.sigmoid(beta * x)
        ctx.save_for_backward(x, s)
        ctx.beta = beta
        return x * s

    @staticmethod
    def backward(ctx, grad_output):
        x, s = ctx.saved_tensors
        return grad_output * (s + ctx.beta * x * s * (1 - s)), None


class MaskOnCtx(torch.autograd.Function):
    """Wrong on purpose: the ReLU mask is stored as a ctx attribute."""

    @staticmethod
    def forward(ctx, x):
        ctx.mask = x > 0
        return x.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * ctx.mask


class FusedLinearReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias=None):
        z = x @ weight.T
        if bias is not None:
            z = z + bias
        mask = z > 0
        ctx.save_for_backward(x, weight, mask)
        ctx.has_bias = bias is not None
        return z * mask

    @staticmethod
    def backward(ctx, grad_output):
        x, weight, mask = ctx.saved_tensors
        grad_z = grad_output * mask
        grad_bias = grad_z.sum(0) if ctx.has_bias and ctx.needs_input_grad[2] else None
        return grad_z @ weight, grad_z.T @ x, grad_bias


class MyLinear(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias):
        ctx.save_for_backward(x, weight)
        return x @ weight.T + bias

    @staticmethod
    def backward(ctx, grad_output):
        x, weight = ctx.saved_tensors
        grad_x = grad_output @ weight if ctx.needs_input_grad[0] else None
        grad_weight = grad_output.T @ x if ctx.needs_input_grad[1] else None
        return grad_x, grad_weight, grad_output.sum(0)


class TransposedLinear(MyLinear):
    """Wrong on purpose: grad_x = grad_output @ weight.T, the popular transpose too many."""

    @staticmethod
    def backward(ctx, grad_output):
        x, weight = ctx.saved_tensors
        return grad_output @ weight.T, grad_output.T @ x, grad_output.sum(0)


class OffByOneEntry(torch.autograd.Function):
    """Wrong on purpose at a single entry: d y[2] / d x[2] is off by 0.5."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        grad = 2 * x * grad_output
        return grad + 0.5 * grad_output * (torch.arange(x.numel()) == 2).reshape(x.shape)


class TooFewGradients(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, y):
        return x * y

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output


class Stub(torch.autograd.Function):
    @staticmethod
    def forward(ctx, *args):
        raise NotImplementedError

    @staticmethod
    def backward(ctx, grad_output):
        raise NotImplementedError


class CheckpointFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, run_fn, *args):
        ctx.run_fn = run_fn
        ctx.save_for_backward(*args)
        with torch.no_grad():
            return run_fn(*args)

    @staticmethod
    def backward(ctx, grad_output):
        inputs = [t.detach().requires_grad_(t.requires_grad) for t in ctx.saved_tensors]
        with torch.enable_grad():
            output = ctx.run_fn(*inputs)
        torch.autograd.backward(output, grad_output)
        return (None, *(t.grad for t in inputs))


class ForgetfulCheckpoint(CheckpointFunction):
    """Wrong on purpose: autograd.grad(inputs=...) leaves the block's parameters without .grad."""

    @staticmethod
    def backward(ctx, grad_output):
        inputs = [t.detach().requires_grad_(True) for t in ctx.saved_tensors]
        with torch.enable_grad():
            output = ctx.run_fn(*inputs)
        return (None, *torch.autograd.grad(output, inputs, grad_output))


def make_checkpoint_sequential(function):
    def checkpoint_sequential(layers, segments, x):
        size = -(-len(layers) // segments)
        for start in range(0, len(layers), size):
            block = layers[start:start + size]

            def run(inputs, block=block):
                for layer in block:
                    inputs = layer(inputs)
                return inputs

            x = function.apply(run, x)
        return x
    return checkpoint_sequential


class Attention(torch.autograd.Function):
    @staticmethod
    def forward(ctx, Q, K, V, scale, mask=None):
        scores = Q @ K.transpose(-2, -1) * scale
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        exp = (scores - scores.amax(-1, keepdim=True)).exp()
        P = exp / exp.sum(-1, keepdim=True)
        ctx.save_for_backward(Q, K, V, P)
        ctx.scale = scale
        return P @ V

    @staticmethod
    def backward(ctx, grad_output):
        Q, K, V, P = ctx.saved_tensors
        grad_V = P.transpose(-2, -1) @ grad_output
        dP = grad_output @ V.transpose(-2, -1)
        dS = P * (dP - (dP * P).sum(-1, keepdim=True))  # softmax JVP
        return dS @ K * ctx.scale, dS.transpose(-2, -1) @ Q * ctx.scale, grad_V, None, None


class MasklessAttention(Attention):
    """Wrong on purpose: ignores the mask."""

    @staticmethod
    def forward(ctx, Q, K, V, scale, mask=None):
        return Attention.forward(ctx, Q, K, V, scale, None)


def small_mlp(width: int = 16, depth: int = 4) -> torch.nn.Sequential:
    layers = []
    for _ in range(depth):
        layers += [torch.nn.Linear(width, width), torch.nn.Tanh()]
    return torch.nn.Sequential(*layers)


@pytest.fixture(scope="session")
def ref():
    """The reference Functions by name."""
    return SimpleNamespace(
        Square=Square, MySigmoid=MySigmoid, ScaledSigmoid=ScaledSigmoid, SloppySwish=SloppySwish,
        MaskOnCtx=MaskOnCtx, FusedLinearReLU=FusedLinearReLU, MyLinear=MyLinear,
        TransposedLinear=TransposedLinear, OffByOneEntry=OffByOneEntry,
        TooFewGradients=TooFewGradients, SignSTE=SignSTE, SignClippedSTE=SignClippedSTE,
        RoundSTE=RoundSTE, Stub=Stub, Attention=Attention, MasklessAttention=MasklessAttention,
        checkpoint_sequential=make_checkpoint_sequential(CheckpointFunction),
        forgetful_checkpoint_sequential=make_checkpoint_sequential(ForgetfulCheckpoint),
        small_mlp=small_mlp,
    )
