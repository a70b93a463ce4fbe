"""Reference Functions, right and deliberately wrong, that the widget tests run on: the graded
exercises' correct versions are the lessons' own (tools.solutions), their named mistakes come
from the catalogue; the few wrong Functions below are not answers to any exercise."""

from types import FunctionType, SimpleNamespace

import pytest
import torch

from tools.catalogue import mistake
from autograder.exercises import EXERCISES
from tools.solutions import namespace

# each lesson's answer cells run once, as in its notebook
_LESSONS = {lesson: namespace(lesson) for lesson in (
    "00_template", "01_sigmoid", "02_linear", "03_ste", "05_checkpointing", "06_attention")}
(Square, MySigmoid, ScaledSigmoid, FusedLinearReLU, MyLinear, SignSTE, SignClippedSTE, RoundSTE,
 checkpoint_sequential, Attention) = (_LESSONS[EXERCISES[name].lesson][name] for name in (
    "Square", "MySigmoid", "ScaledSigmoid", "FusedLinearReLU", "MyLinearFunction", "SignSTE",
    "SignClippedSTE", "RoundSTE", "checkpoint_sequential", "ScaledDotProductAttention"))
# Wrong answers the views must show as wrong, from the one catalogue of mistakes.
MaskOnCtx = mistake("MyReLU", "mask kept as ctx.mask").load()
TransposedLinear = mistake("MyLinearFunction", "grad_x = grad_output @ weight.T").load()
ForgetfulCheckpoint = mistake("CheckpointFunction", "torch.autograd.grad of the inputs only").load()


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


def segmenting_through(function):
    """The lesson's own checkpoint_sequential, its segments run through ``function`` instead of
    the lesson's CheckpointFunction."""
    return FunctionType(checkpoint_sequential.__code__,
                        {**checkpoint_sequential.__globals__, "CheckpointFunction": function})


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
        checkpoint_sequential=checkpoint_sequential,
        forgetful_checkpoint_sequential=segmenting_through(ForgetfulCheckpoint),
        small_mlp=small_mlp,
    )
