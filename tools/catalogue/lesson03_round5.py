"""Lesson 03 answers from its round-5 review: a one-hot of the argmax of logits / tau (or of
logits * (1 / tau)), which near ties that dividing rounds together tell apart; topk(1) for the
one-hot; logits divided in place in backward; FakeQuantize's clip judged by comparing v with
qmin - 0.5 and qmax + 0.5, which only an odd qmin or an even qmax tells apart from round(v),
and its per-element term for scale computed in float32; a RoundSTE whose forward adds 0,
which turns round's -0 into 0."""

from tools.catalogue import Mistake, Unusual
from tools.catalogue.lesson03 import _fake_quantize, _round
from tools.catalogue.lesson03_transfer import READ, RIGHT, _sts


def _one_hot_of(index: str) -> str:
    """A forward that saves the softmax and returns the one-hot of ``index``."""
    return ("        soft = torch.softmax(logits / tau, dim=-1)\n"
            "        ctx.save_for_backward(soft)\n        ctx.tau = tau\n"
            f"        return F.one_hot({index}, logits.shape[-1]).to(logits.dtype)")


UNUSUAL = [
    Unusual("StraightThroughSoftmax", "one-hot of logits.max(-1).indices (the first maximum, "
            "as documented)", _sts(READ + RIGHT, _one_hot_of("logits.max(-1).indices"))),
]

MISTAKES = [
    Mistake("StraightThroughSoftmax", "argmax of z = logits / tau, computed once for both",
            "StraightThroughSoftmax's output picks another maximum in row [5] (logits 0.704, "
            "0.7040000000000001, 0.2, -1.0, tau=0.7): it is the one-hot of argmax over "
            "logits / tau",
            _sts(READ + RIGHT, "        z = logits / tau\n"
                 "        ctx.save_for_backward(torch.softmax(z, dim=-1))\n"
                 "        ctx.tau = tau\n"
                 "        return F.one_hot(z.argmax(-1), logits.shape[-1]).to(logits.dtype)")),
    Mistake("StraightThroughSoftmax", "argmax of logits * (1 / tau)",
            "or logits * (1 / tau); dividing rounds logits this close to equal values",
            _sts(READ + RIGHT, "        z = logits * (1.0 / tau)\n"
                 "        ctx.save_for_backward(torch.softmax(z, dim=-1))\n"
                 "        ctx.tau = tau\n"
                 "        return F.one_hot(z.argmax(-1), logits.shape[-1]).to(logits.dtype)")),
    Mistake("StraightThroughSoftmax", "one-hot of topk(1)",
            "puts its 1 at another of the tied maxima in row [1]: it is the one-hot of topk(1)'s "
            "first index",
            _sts(READ + RIGHT, _one_hot_of("logits.topk(1, dim=-1).indices[..., 0]"))),
    Mistake("StraightThroughSoftmax", "backward divides the saved logits in place",
            "StraightThroughSoftmax modified its input logits in place",
            _sts("        logits, = ctx.saved_tensors\n"
                 "        soft = torch.softmax(logits.div_(ctx.tau), dim=-1)\n" + RIGHT,
                 "        ctx.save_for_backward(logits)\n        ctx.tau = tau\n"
                 "        return F.one_hot(logits.argmax(-1), logits.shape[-1]).to(logits.dtype)")),
    Mistake("FakeQuantize", "inside as qmin - 0.5 <= v < qmax + 0.5",
            "FakeQuantize's gradient for x compares x / scale with qmin - 0.5 and qmax + 0.5: "
            "torch.round sends a half to the even neighbour",
            _fake_quantize(
                "        x, scale = ctx.saved_tensors\n        v = x / scale\n"
                "        inside = (v >= ctx.qmin - 0.5) & (v < ctx.qmax + 0.5)\n"
                "        clipped = torch.where(v < ctx.qmin, float(ctx.qmin), float(ctx.qmax))\n"
                "        local = torch.where(inside, torch.round(v) - v, clipped)\n"
                "        return grad_output * inside, (grad_output * local).sum(), None, None")),
    Mistake("FakeQuantize", "each element's scale term in float32, summed in float64",
            "FakeQuantize's gradient for scale is the sum of grad_output times each element's "
            "d(output)/d(scale) rounded to float32",
            _fake_quantize(
                "        x, scale = ctx.saved_tensors\n        v = x / scale\n"
                "        inside = (v >= ctx.qmin) & (v <= ctx.qmax)\n"
                "        clipped = torch.where(v < ctx.qmin, float(ctx.qmin), float(ctx.qmax))\n"
                "        local = torch.where(inside, torch.round(v) - v, clipped).float()\n"
                "        return grad_output * inside, (grad_output * local).sum(), None, None")),
    Mistake("RoundSTE", "round(x) + 0.0: -0 turned into 0",
            "RoundSTE's output is 0 at x = -0.5, where round(x) is -0",
            _round("        return torch.round(x) + 0.0")),
]
