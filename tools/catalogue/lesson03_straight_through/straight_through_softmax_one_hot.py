"""Lesson 03's transfer exercise: StraightThroughSoftmax answers whose forward is not the
one-hot of argmax(logits, -1) in the logits' dtype, ties as torch.argmax: an argmax of
logits / tau (or of logits * (1 / tau)), which near ties that dividing rounds together tell
apart, of rounded logits or of the softmax (with tau or without), topk(1), every tied maximum,
noise drawn in forward, a one-hot of another dtype, a row loop that fails on an empty batch."""

from .. import Mistake, Unusual
from .answers import READ, RIGHT, _sts


def _one_hot_of(index: str) -> str:
    """A forward that saves the softmax and returns the one-hot of ``index``."""
    return ("        soft = torch.softmax(logits / tau, dim=-1)\n"
            "        ctx.save_for_backward(soft)\n        ctx.tau = tau\n"
            f"        return F.one_hot({index}, logits.shape[-1]).to(logits.dtype)")


UNUSUAL = [
    Unusual("StraightThroughSoftmax", "one-hot by comparing with the row max, first maximum kept",
            _sts(READ + RIGHT,
                 "        ctx.save_for_backward(torch.softmax(logits / tau, -1))\n"
                 "        ctx.tau = tau\n"
                 "        index = torch.arange(logits.shape[-1], device=logits.device)\n"
                 "        return (index == logits.argmax(-1, keepdim=True)).to(logits.dtype)")),
    Unusual("StraightThroughSoftmax", "one-hot of logits.max(-1).indices (the first maximum, "
            "as documented)", _sts(READ + RIGHT, _one_hot_of("logits.max(-1).indices"))),
]

MISTAKES = [
    Mistake("StraightThroughSoftmax", "rows looped with torch.stack: raises on an empty batch",
            "StraightThroughSoftmax.forward raised RuntimeError with logits of shape (0, 4)",
            _sts(READ + RIGHT, "        n = logits.shape[-1]\n"
                 "        soft = torch.softmax(logits / tau, dim=-1)\n"
                 "        ctx.save_for_backward(soft)\n        ctx.tau = tau\n"
                 "        rows = [F.one_hot(row.argmax(), n) for row in logits.reshape(-1, n)]\n"
                 "        return torch.stack(rows).reshape(logits.shape).to(logits.dtype)")),
    Mistake("StraightThroughSoftmax", "softmax in forward", "StraightThroughSoftmax's output is "
            "not one-hot",
            _sts(READ + RIGHT, "        soft = torch.softmax(logits / tau, dim=-1)\n"
                 "        ctx.save_for_backward(soft)\n        ctx.tau = tau\n"
                 "        return soft")),
    Mistake("StraightThroughSoftmax", "int64 one-hot", "has dtype torch.int64, not the logits'",
            _sts(READ + RIGHT, "        soft = torch.softmax(logits / tau, dim=-1)\n"
                 "        ctx.save_for_backward(soft)\n        ctx.tau = tau\n"
                 "        return F.one_hot(logits.argmax(-1), logits.shape[-1])")),
    Mistake("StraightThroughSoftmax", "every tied maximum marked", "has more than one 1 in a "
            "row with tied maxima",
            _sts(READ + RIGHT, "        soft = torch.softmax(logits / tau, dim=-1)\n"
                 "        ctx.save_for_backward(soft)\n        ctx.tau = tau\n"
                 "        top = logits.max(dim=-1, keepdim=True).values\n"
                 "        return (logits == top).to(logits.dtype)")),
    Mistake("StraightThroughSoftmax", "Gumbel noise drawn inside forward", "it draws noise itself",
            _sts(READ + RIGHT, "        ctx.save_for_backward(torch.softmax(logits / tau, -1))\n"
                 "        ctx.tau = tau\n"
                 "        noise = -torch.log(-torch.log(torch.rand_like(logits)))\n"
                 "        return F.one_hot((logits + noise).argmax(-1), logits.shape[-1])"
                 ".to(logits.dtype)"), named=True),
    # named by rule 1's output dtype before any backward runs (issue 68: output_dtypes.py)
    Mistake("StraightThroughSoftmax", "float32 one-hot for float64 logits", "forward returned "
            "float32 for float64 inputs, where the op returns float64",
            _sts(READ + RIGHT, "        ctx.save_for_backward(torch.softmax(logits / tau, -1))\n"
                 "        ctx.tau = tau\n"
                 "        return F.one_hot(logits.argmax(-1), logits.shape[-1]).float()")),
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
    Mistake("StraightThroughSoftmax", "argmax of a float32 copy",
            "StraightThroughSoftmax's output picks another maximum in row [0] (logits 1.0, "
            "1.0000000000000002, 0.2, -1.0): it is the one-hot of argmax over the logits rounded "
            "to a narrower dtype",
            _sts(READ + RIGHT,
                 "        ctx.save_for_backward(torch.softmax(logits / tau, dim=-1))\n"
                 "        ctx.tau = tau\n"
                 "        return F.one_hot(logits.float().argmax(-1), logits.shape[-1])"
                 ".to(logits.dtype)")),
    Mistake("StraightThroughSoftmax", "one-hot of the softmax's argmax, as the Gumbel cell writes",
            "StraightThroughSoftmax's output picks another maximum in row [3] (logits 0.0, "
            "1e-20, -1.0, -2.0, tau=0.5): it is the one-hot of argmax over softmax(logits / tau),",
            _sts(READ + RIGHT,
                 "        soft = torch.softmax(logits / tau, dim=-1)\n"
                 "        ctx.save_for_backward(soft)\n        ctx.tau = tau\n"
                 "        return F.one_hot(soft.argmax(-1), logits.shape[-1]).to(logits.dtype)")),
    Mistake("StraightThroughSoftmax", "one-hot of softmax(logits)'s argmax, without tau",
            "StraightThroughSoftmax's output picks another maximum in row [3] (logits 0.0, "
            "1e-20, -1.0, -2.0, tau=0.5): it is the one-hot of argmax over softmax(logits),",
            _sts(READ + RIGHT,
                 "        ctx.save_for_backward(torch.softmax(logits / tau, dim=-1))\n"
                 "        ctx.tau = tau\n"
                 "        return F.one_hot(torch.softmax(logits, -1).argmax(-1), "
                 "logits.shape[-1]).to(logits.dtype)")),
]
