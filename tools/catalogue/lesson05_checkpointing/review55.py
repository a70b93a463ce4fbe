"""Lesson 05: the answers of review 55 not already catalogued in the same form, with the hint
each gets. Two kinds passed every check before: state cached on ctx by the first backward (the
fresh leaves, or the inverse), which a second backward on one graph (retain_graph=True) adds
into again, and .data saved in forward, which autograd's version counter does not watch, so an
in-place change between forward and backward gives silent wrong gradients. Not here: the
reviewer's CPU-only random state (ungradable without a GPU; the page says so) and the answers
that were caught already in the same form (review 54's dtype casts and leaf memo, the shared
states, torch's own checkpoint, the late-binding closure, pop(0))."""

from .. import Mistake, edit
from .answers import CORRECT_BACKWARD, FORWARD, FRESH, _checkpoint
from .reversible_coupling import FORWARD as COUPLING_FORWARD
from .reversible_coupling import INVERT, RECOMPUTE, RETURN, RIGHT, _coupling

SOLUTION = _checkpoint(CORRECT_BACKWARD)

# CheckpointFunction: the fresh leaves built once and kept on ctx ("no need to rebuild them"):
# a second backward on one graph recomputes on the same leaves, whose .grad already holds the
# first run's gradient, and returns twice it.
WRONG_01_CACHED_LEAVES = edit(
    SOLUTION, (f"        args = _arguments(ctx, {FRESH})\n",
               "        if not hasattr(ctx, 'leaves'):  # build the leaves once, reuse them\n"
               "            ctx.leaves = _arguments(ctx, lambda t: t.detach()"
               ".requires_grad_(t.requires_grad))\n"
               "        args = ctx.leaves\n"))

# CheckpointFunction: the tensor arguments' .data saved ("just the data"): an argument changed
# in place between forward and backward is recomputed on with no version-counter error.
WRONG_02_SAVES_DATA = edit(
    SOLUTION, ("        ctx.save_for_backward(*tensors)\n",
               "        ctx.save_for_backward(*[t.data for t in tensors])  # just the data\n"
               "        ctx.wants = [t.requires_grad for t in tensors]\n"),
    (f"        args = _arguments(ctx, {FRESH})\n",
     "        wants = iter(ctx.wants)\n"
     "        args = _arguments(ctx, lambda t: t.detach().requires_grad_(next(wants)))\n"))

COUPLING = _coupling(INVERT + RECOMPUTE + RIGHT + RETURN)

# ReversibleCoupling: the inverse computed once and its leaves kept on ctx: a second backward
# recomputes on the same leaves and returns twice the gradients.
WRONG_03_COUPLING_CACHED_LEAVES = edit(
    COUPLING,
    ("        y1, y2 = ctx.saved_tensors\n        with torch.no_grad():\n"
     "            x2 = y2 - ctx.g(y1)\n            x1 = y1 - ctx.f(x2)\n"
     "        x1, x2 = x1.requires_grad_(), x2.requires_grad_()\n",
     "        if not hasattr(ctx, 'leaves'):  # invert once\n"
     "            y1, y2 = ctx.saved_tensors\n            with torch.no_grad():\n"
     "                x2 = y2 - ctx.g(y1)\n                x1 = y1 - ctx.f(x2)\n"
     "            ctx.leaves = (x1.requires_grad_(), x2.requires_grad_())\n"
     "        x1, x2 = ctx.leaves\n"))

# ReversibleCoupling: y1.data and y2.data saved: a caller's in-place change of y1 before
# backward is inverted from, silently.
WRONG_04_COUPLING_SAVES_DATA = edit(
    COUPLING, ("        ctx.save_for_backward(y1, y2)\n",
               "        ctx.save_for_backward(y1.data, y2.data)\n"))

assert "ctx.save_for_backward(y1, y2)" in COUPLING_FORWARD and "save_for_backward" in FORWARD

MISTAKES = [
    Mistake("CheckpointFunction", "fresh leaves built once, cached on ctx for a second backward",
            "backward reused fresh leaves kept on ctx", WRONG_01_CACHED_LEAVES),
    Mistake("CheckpointFunction", "saves the tensor arguments' .data",
            "changed in place after forward", WRONG_02_SAVES_DATA),
    Mistake("ReversibleCoupling", "the inverse computed once, its leaves cached on ctx for a "
            "second backward", "backward reused fresh leaves kept on ctx",
            WRONG_03_COUPLING_CACHED_LEAVES),
    Mistake("ReversibleCoupling", "saves y1.data and y2.data", "changed in place after forward",
            WRONG_04_COUPLING_SAVES_DATA),
]
