"""Lesson 05: the answers of review 54 not already catalogued in the same form, with the hint
each gets, or as passing; the checkpoint_sequential ones built on the lesson's CheckpointFunction.
Not here: the reviewer's i * n // k bounds and recursive checkpoint_sequential and their RevNet
backward (catalogued already), and a CheckpointFunction that calls run_fn twice in backward with
the state restored before each (no clause says "once": the Time section's "one extra forward" is
a cost, not a contract bullet)."""

from .. import Mistake, Unusual
from .checkpoint_sequential import HELPER

SEQ = HELPER + "from torch import nn\n\n\n"

_FORWARD = """
class CheckpointFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, run_fn, *args):
        ctx.run_fn = run_fn
        ctx.is_tensor = [isinstance(a, torch.Tensor) for a in args]
        ctx.others = [None if is_tensor else a for is_tensor, a in zip(ctx.is_tensor, args)]
        tensors = [a for a in args if isinstance(a, torch.Tensor)]
        ctx.save_for_backward(*tensors)
        ctx.devices = sorted({t.get_device() for t in tensors if t.is_cuda})
        ctx.cpu_state = torch.get_rng_state()
        ctx.cuda_states = [torch.cuda.get_rng_state(d) for d in ctx.devices]
        return run_fn(*args)
"""

_RECOMPUTE = """            args.append(other)
        with torch.random.fork_rng(devices=ctx.devices):
            torch.set_rng_state(ctx.cpu_state)
            for device, state in zip(ctx.devices, ctx.cuda_states):
                torch.cuda.set_rng_state(state, device)
            with torch.enable_grad():
                output = ctx.run_fn(*args)
        torch.autograd.backward(output, grad_output)
        return (None, *(a.grad if isinstance(a, torch.Tensor) else None for a in args))
"""


def _backward(fresh: str, before: str = "") -> str:
    return _FORWARD + f"""
    @staticmethod
    def backward(ctx, grad_output):
        saved = iter(ctx.saved_tensors)
        args = []{before}
        for is_tensor, other in zip(ctx.is_tensor, ctx.others):
            if is_tensor:
                tensor = next(saved)
                other = {fresh}
""" + _RECOMPUTE


# CheckpointFunction: one fresh leaf per distinct saved tensor (a memo by id), so a tensor passed
# in two positions gets one leaf, whose .grad (both positions' sum) is returned for each.
WRONG_01_ONE_LEAF_PER_TENSOR = _backward(
    "memo.setdefault(id(tensor), tensor.detach().requires_grad_(tensor.requires_grad))",
    before="\n        memo = {}  # one leaf per tensor: no copy made twice")

# CheckpointFunction: the recomputation on float32 copies ("for speed").
WRONG_02_RECOMPUTES_IN_FLOAT32 = _backward(
    "(tensor.detach().float() if tensor.is_floating_point() else tensor.detach())"
    ".requires_grad_(tensor.requires_grad)")

# checkpoint_sequential: the whole stack run once under no_grad first, as a shape check: every
# layer runs twice in forward, and a dropout layer draws a mask the plain stack never draws.
WRONG_03_SEQ_NO_GRAD_RUN_FIRST = """
def checkpoint_sequential(layers, segments, x):
    layers = list(layers)
    with torch.no_grad():  # a quick run first: shapes fit before anything is checkpointed
        nn.Sequential(*layers)(x)
    size, longer = divmod(len(layers), segments)
    start = 0
    for i in range(segments):
        end = start + size + (i < longer)
        x = CheckpointFunction.apply(nn.Sequential(*layers[start:end]), x)
        start = end
    return x
"""

# checkpoint_sequential: the generator seeded before the groups "for reproducibility", so the
# dropout layers draw other masks than the plain stack run from the caller's seed.
WRONG_04_SEQ_SEEDS = """
def checkpoint_sequential(layers, segments, x):
    layers = list(layers)
    torch.manual_seed(0)  # reproducible dropout in every run
    size, longer = divmod(len(layers), segments)
    start = 0
    for i in range(segments):
        end = start + size + (i < longer)
        x = CheckpointFunction.apply(nn.Sequential(*layers[start:end]), x)
        start = end
    return x
"""

# CheckpointFunction: each distinct tensor saved once (a tensor passed twice is saved once), with
# where each position's tensor sits among the saved ones; one fresh leaf per position all the same.
UNUSUAL_01_SAVED_ONCE = """
class CheckpointFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, run_fn, *args):
        ctx.run_fn, ctx.args = run_fn, [None if torch.is_tensor(a) else a for a in args]
        distinct, ctx.slot = [], {}
        for i, a in enumerate(args):
            if torch.is_tensor(a):
                found = [j for j, t in enumerate(distinct) if t is a]
                ctx.slot[i] = found[0] if found else len(distinct)
                if not found:
                    distinct.append(a)
        ctx.save_for_backward(*distinct)
        ctx.devices = sorted({t.get_device() for t in distinct if t.is_cuda})
        ctx.states = (torch.get_rng_state(), [torch.cuda.get_rng_state(d) for d in ctx.devices])
        return run_fn(*args)

    @staticmethod
    def backward(ctx, grad_output):
        saved = ctx.saved_tensors
        args = list(ctx.args)
        for i, j in ctx.slot.items():  # a leaf of its own for each position
            args[i] = saved[j].detach().requires_grad_(ctx.needs_input_grad[1 + i])
        with torch.random.fork_rng(devices=ctx.devices):
            torch.set_rng_state(ctx.states[0])
            for device, state in zip(ctx.devices, ctx.states[1]):
                torch.cuda.set_rng_state(state, device)
            with torch.enable_grad():
                output = ctx.run_fn(*args)
        if output.requires_grad:
            output.backward(grad_output)
        return (None, *(args[i].grad if i in ctx.slot else None for i in range(len(args))))
"""

UNUSUAL = [
    Unusual("CheckpointFunction", "each distinct tensor saved once, one fresh leaf per position",
            UNUSUAL_01_SAVED_ONCE),
]

MISTAKES = [
    Mistake("CheckpointFunction", "one fresh leaf per distinct saved tensor (a memo by id)",
            "returned x's whole gradient for each of the two positions",
            WRONG_01_ONE_LEAF_PER_TENSOR),
    Mistake("CheckpointFunction", "recomputes on float32 copies of the saved tensors",
            "recomputed run_fn on float32 copies", WRONG_02_RECOMPUTES_IN_FLOAT32),
    Mistake("checkpoint_sequential", "the whole stack run once under no_grad before the groups",
            "more than once in forward", SEQ + WRONG_03_SEQ_NO_GRAD_RUN_FIRST),
    Mistake("checkpoint_sequential", "the generator seeded before the groups",
            "dropout layers drew other masks", SEQ + WRONG_04_SEQ_SEEDS),
]
