"""Lesson 05: the answers of review 53 not already catalogued in the same form, with the hint
each gets, or as passing; the checkpoint_sequential ones built on the lesson's CheckpointFunction.
Not here: a CheckpointFunction that forks no CUDA device or restores the CPU state only (a GPU
grading catches both), one that passes the random state through save_for_backward (catalogued
as "RNG state passed through save_for_backward"), and the unusual checkpoint_sequential (i * n //
k bounds, the last group plain) and RevNet backward (both catalogued already)."""

from .. import Mistake, Unusual
from .checkpoint_sequential import HELPER

SEQ = HELPER + "from torch import nn\n\n\n"

# CheckpointFunction: every floating-point fresh leaf made to require grad (a boolean mask
# cannot), so backward computes and returns a gradient for a float argument that requires none.
WRONG_01_EVERY_FLOAT_LEAF = """
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

    @staticmethod
    def backward(ctx, grad_output):
        saved = iter(ctx.saved_tensors)
        args = []
        for is_tensor, other in zip(ctx.is_tensor, ctx.others):
            if is_tensor:
                tensor = next(saved)
                other = tensor.detach().requires_grad_(tensor.is_floating_point())
            args.append(other)
        with torch.random.fork_rng(devices=ctx.devices):
            torch.set_rng_state(ctx.cpu_state)
            for device, state in zip(ctx.devices, ctx.cuda_states):
                torch.cuda.set_rng_state(state, device)
            with torch.enable_grad():
                output = ctx.run_fn(*args)
        torch.autograd.backward(output, grad_output)
        return (None, *(a.grad if isinstance(a, torch.Tensor) else None for a in args))
"""

# CheckpointFunction: the CPU random state kept on the class, shared by every call.
WRONG_02_STATE_ON_CLASS = """
class CheckpointFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, run_fn, *args):
        ctx.run_fn = run_fn
        ctx.is_tensor = [isinstance(a, torch.Tensor) for a in args]
        ctx.others = [None if is_tensor else a for is_tensor, a in zip(ctx.is_tensor, args)]
        tensors = [a for a in args if isinstance(a, torch.Tensor)]
        ctx.save_for_backward(*tensors)
        ctx.devices = sorted({t.get_device() for t in tensors if t.is_cuda})
        CheckpointFunction.cpu_state = torch.get_rng_state()
        ctx.cuda_states = [torch.cuda.get_rng_state(d) for d in ctx.devices]
        return run_fn(*args)

    @staticmethod
    def backward(ctx, grad_output):
        saved = iter(ctx.saved_tensors)
        args = []
        for is_tensor, other in zip(ctx.is_tensor, ctx.others):
            if is_tensor:
                tensor = next(saved)
                other = tensor.detach().requires_grad_(tensor.requires_grad)
            args.append(other)
        with torch.random.fork_rng(devices=ctx.devices):
            torch.set_rng_state(CheckpointFunction.cpu_state)
            for device, state in zip(ctx.devices, ctx.cuda_states):
                torch.cuda.set_rng_state(state, device)
            with torch.enable_grad():
                output = ctx.run_fn(*args)
        torch.autograd.backward(output, grad_output)
        return (None, *(a.grad if isinstance(a, torch.Tensor) else None for a in args))
"""

# checkpoint_sequential: bounds int(i * (n / k)), which for 15 layers in 11 or 13 groups end at
# layer 14 (11 * (15 / 11) is 14.999999999999998): the last layer never runs.
WRONG_03_SEQ_FLOAT_BOUNDS = """
def checkpoint_sequential(layers, segments, x):
    layers = list(layers)
    step = len(layers) / segments
    bounds = [int(i * step) for i in range(segments + 1)]
    for start, end in zip(bounds, bounds[1:]):
        x = CheckpointFunction.apply(nn.Sequential(*layers[start:end]), x)
    return x
"""

# checkpoint_sequential: the same with bounds from a running sum of n / k (15 layers, 7 groups).
WRONG_04_SEQ_RUNNING_SUM = """
def checkpoint_sequential(layers, segments, x):
    layers = list(layers)
    step = len(layers) / segments
    bound, bounds = 0.0, [0]
    for _ in range(segments):
        bound += step
        bounds.append(int(bound))
    for start, end in zip(bounds, bounds[1:]):
        x = CheckpointFunction.apply(nn.Sequential(*layers[start:end]), x)
    return x
"""

# checkpoint_sequential: bounds int(i / k * n): 26 layers in 26 groups make one group of 2 and
# one of none (15 / 26 * 26 is 14.999999999999998).
WRONG_05_SEQ_DIVIDE_FIRST = """
def checkpoint_sequential(layers, segments, x):
    layers = list(layers)
    bounds = [int(i / segments * len(layers)) for i in range(segments + 1)]
    for start, end in zip(bounds, bounds[1:]):
        x = CheckpointFunction.apply(nn.Sequential(*layers[start:end]), x)
    return x
"""

# checkpoint_sequential: the whole stack run plainly when x requires no grad (data), so the
# memory a checkpoint saves is spent on every model's first block.
WRONG_06_SEQ_PLAIN_ON_DATA = """
def checkpoint_sequential(layers, segments, x):
    layers = list(layers)
    if not x.requires_grad:
        return nn.Sequential(*layers)(x)
    size, longer = divmod(len(layers), segments)
    start = 0
    for i in range(segments):
        end = start + size + (i < longer)
        x = CheckpointFunction.apply(nn.Sequential(*layers[start:end]), x)
        start = end
    return x
"""

# checkpoint_sequential: groups cached by (number of layers, segments) across calls, so a second
# stack of the same length runs the first stack's layers.
WRONG_07_SEQ_CACHED_GROUPS = """
_groups = {}

def checkpoint_sequential(layers, segments, x):
    layers = list(layers)
    key = (len(layers), segments)
    if key in _groups:
        for group in _groups[key]:
            x = CheckpointFunction.apply(group, x)
        return x
    _groups[key] = []
    size, longer = divmod(len(layers), segments)
    start = 0
    for i in range(segments):
        end = start + size + (i < longer)
        _groups[key].append(nn.Sequential(*layers[start:end]))
        x = CheckpointFunction.apply(_groups[key][-1], x)
        start = end
    return x
"""

# CheckpointFunction: no fork_rng (the caller's states put back by hand in a try/finally),
# tensor positions as an index list, fresh leaves from ctx.needs_input_grad, out.backward.
UNUSUAL_01_BY_HAND = """
class CheckpointFunction(torch.autograd.Function):

    @staticmethod
    def forward(ctx, run_fn, *args):
        ctx.run_fn = run_fn
        ctx.where = [i for i, a in enumerate(args) if torch.is_tensor(a)]
        ctx.template = [None if torch.is_tensor(a) else a for a in args]
        ctx.save_for_backward(*[args[i] for i in ctx.where])
        ctx.cuda = sorted({args[i].device.index for i in ctx.where if args[i].is_cuda})
        ctx.states = (torch.get_rng_state(), [torch.cuda.get_rng_state(d) for d in ctx.cuda])
        return run_fn(*args)

    @staticmethod
    def backward(ctx, grad_output):
        args = list(ctx.template)
        for i, t in zip(ctx.where, ctx.saved_tensors):
            args[i] = t.detach().requires_grad_(ctx.needs_input_grad[1 + i])
        caller = (torch.get_rng_state(), [torch.cuda.get_rng_state(d) for d in ctx.cuda])
        try:
            torch.set_rng_state(ctx.states[0])
            for d, s in zip(ctx.cuda, ctx.states[1]):
                torch.cuda.set_rng_state(s, d)
            with torch.enable_grad():
                out = ctx.run_fn(*args)
        finally:
            torch.set_rng_state(caller[0])
            for d, s in zip(ctx.cuda, caller[1]):
                torch.cuda.set_rng_state(s, d)
        if out.requires_grad:
            out.backward(grad_output)
        grads = [None] * len(args)
        for i in ctx.where:
            grads[i] = args[i].grad
        return (None, *grads)
"""

UNUSUAL = [
    Unusual("CheckpointFunction", "random states put back by hand in try/finally, positions as "
            "an index list, leaves from ctx.needs_input_grad", UNUSUAL_01_BY_HAND),
]

MISTAKES = [
    Mistake("CheckpointFunction", "fresh leaves require grad for every float tensor",
            "returned a gradient for b, which does not require grad", WRONG_01_EVERY_FLOAT_LEAF),
    Mistake("CheckpointFunction", "the CPU random state kept on the class",
            "keep it on ctx (ctx.cpu_state = ...), one per call", WRONG_02_STATE_ON_CLASS),
    Mistake("checkpoint_sequential", "bounds int(i * (n / k)), computed in floating point",
            "11 * (15 / 11) is 14.999999999999998, which int() truncates to 14",
            SEQ + WRONG_03_SEQ_FLOAT_BOUNDS),
    Mistake("checkpoint_sequential", "bounds from a running sum of n / k",
            "adding 15 / 7 7 times gives 14.999999999999998", SEQ + WRONG_04_SEQ_RUNNING_SUM),
    Mistake("checkpoint_sequential", "bounds int(i / k * n)",
            "15 / 26 * 26 is 14.999999999999998", SEQ + WRONG_05_SEQ_DIVIDE_FIRST),
    Mistake("checkpoint_sequential", "the stack run plainly when x requires no grad",
            "ran layers 0 to 3 with grad on, outside every checkpoint",
            SEQ + WRONG_06_SEQ_PLAIN_ON_DATA),
    Mistake("checkpoint_sequential", "groups cached by (number of layers, segments) across calls",
            "without running any of the 7 layers it was given", SEQ + WRONG_07_SEQ_CACHED_GROUPS),
]
