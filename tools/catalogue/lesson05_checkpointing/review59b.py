"""Lesson 05: the answers of review 59b (a fresh review after review 59's fixes) not already
catalogued in the same form. None passed both checks; three were caught with a misaimed cause or
closing question, now fixed: the random state kept in a global dict keyed by id(run_fn) was told
that "the backwards do not run in the reverse order of the forwards", where the second forward
overwrote the first call's entry (the grader now asks a second forward what it does there); a
split of k - 1 one-layer groups and the rest was asked where "the 1 layers left over after 3 per
segment" go (a floor-and-remainder rule it did not use); zeros returned for an argument that does
not require grad were asked "which fresh leaves should require grad?". Their unusual RevNet
backward (one call of g and one of f, each serving the inversion and the backpropagation) is
accepted."""

from .. import Mistake, Unusual, edit
from .checkpoint_sequential import _sequential
from .reversible_coupling import _coupling
from .answers import RETURN, SOLUTION as CHECKPOINT

# review 59b, w18: the random state in a global dict keyed by id(run_fn), shared by every call
# of one block (a tied block checkpointed twice in one graph)
WRONG_01_DICT_BY_RUN_FN = "_STATES = {}\n" + edit(
    CHECKPOINT,
    ("ctx.cpu_state = torch.get_rng_state()", "_STATES[id(run_fn)] = torch.get_rng_state()"),
    ("torch.set_rng_state(ctx.cpu_state)", "torch.set_rng_state(_STATES[id(ctx.run_fn)])"))

# review 59b, s3: k - 1 groups of one layer, the rest in the last (the right count, the last
# group too long)
WRONG_02_SINGLETONS_FIRST = _sequential(
    "    layers = list(layers)\n"
    "    bounds = list(range(segments)) + [len(layers)]\n"
    "    for start, end in zip(bounds, bounds[1:]):\n"
    "        x = CheckpointFunction.apply(nn.Sequential(*layers[start:end]), x)\n"
    "    return x\n")

# review 59b, w4: zeros (not None) for a tensor argument that does not require grad, "always a
# tensor, safer"
WRONG_03_ZEROS_FOR_UNASKED = edit(CHECKPOINT, (
    RETURN,
    "        return (None, *((a.grad if a.requires_grad else torch.zeros_like(a))\n"
    "                        if isinstance(a, torch.Tensor) and a.is_floating_point() else\n"
    "                        a.grad if isinstance(a, torch.Tensor) else None for a in args))"))

# review 59b, u2: RevNet's Algorithm 1: g once on a fresh leaf for y1, its output serving the
# inversion and the backpropagation; then f once on the rebuilt x2
UNUSUAL_01_REVNET = _coupling(
    "        y1, y2 = ctx.saved_tensors\n"
    "        z1 = y1.detach().requires_grad_()\n"
    "        with torch.enable_grad():\n            G = ctx.g(z1)\n"
    "        torch.autograd.backward(G, grad_y2)\n"
    "        x2 = (y2 - G.detach()).requires_grad_()\n"
    "        ybar1 = grad_y1 + z1.grad\n"
    "        with torch.enable_grad():\n            F = ctx.f(x2)\n"
    "        torch.autograd.backward(F, ybar1)\n"
    "        return ybar1, grad_y2 + x2.grad, None, None")

UNUSUAL = [
    Unusual("ReversibleCoupling", "RevNet's Algorithm 1: one call of g and one of f in "
            "backward", UNUSUAL_01_REVNET),
]

MISTAKES = [
    Mistake("CheckpointFunction", "random state in a global dict keyed by id(run_fn)",
            "the second forward overwrote the first call's entry", WRONG_01_DICT_BY_RUN_FN),
    Mistake("checkpoint_sequential", "k - 1 groups of one layer, the rest in the last",
            "which sizes of", WRONG_02_SINGLETONS_FIRST),
    Mistake("CheckpointFunction", "zeros for a float argument that does not require grad",
            "what does your backward return in", WRONG_03_ZEROS_FOR_UNASKED),
]
