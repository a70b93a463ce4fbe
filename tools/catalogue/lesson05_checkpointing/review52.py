"""Lesson 05: the answers of review 52 not already catalogued in the same form, with the hint
each gets (its CheckpointFunction and checkpoint_sequential mistakes) or as passing; the
sequential ones built on the lesson's CheckpointFunction. Not here: a CheckpointFunction that
replays the CPU generator only (it passes every CPU check; a GPU grading catches it), one with
fresh leaves that require grad for every float (CPU generator only too), and a recomputation
after the fork_rng block closed (catalogued as "restores inside fork_rng, recomputes after the
block closed")."""

from .. import Mistake, Unusual
from .checkpoint_sequential import HELPER


# CheckpointFunction: floating-point tensors go through save_for_backward; "tensors that can't
# have a gradient" (the boolean mask) are kept with the other non-tensors as plain ctx attributes.
WRONG_01_MASK_ON_CTX = """
class CheckpointFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, run_fn, *args):
        ctx.run_fn = run_fn
        ctx.float_slot = [torch.is_tensor(a) and a.is_floating_point() for a in args]
        ctx.others = [None if fl else a for fl, a in zip(ctx.float_slot, args)]  # mask kept here
        ctx.save_for_backward(*[a for a, fl in zip(args, ctx.float_slot) if fl])
        ctx.cpu_state = torch.get_rng_state()
        return run_fn(*args)

    @staticmethod
    def backward(ctx, grad_output):
        saved = iter(ctx.saved_tensors)
        args = [next(saved).detach().requires_grad_(ctx.needs_input_grad[i + 1]) if fl else o
                for i, (fl, o) in enumerate(zip(ctx.float_slot, ctx.others))]
        with torch.random.fork_rng(devices=[]):
            torch.set_rng_state(ctx.cpu_state)
            with torch.enable_grad():
                out = ctx.run_fn(*args)
        torch.autograd.backward(out, grad_output)
        return (None, *(a.grad if fl else None for a, fl in zip(args, ctx.float_slot)))
"""


# CheckpointFunction: torch.autograd.grad over the fresh leaves plus run_fn.parameters() (when
# run_fn is a module), accumulating into .grad by hand. A plain function calling a layer has
# no .parameters(): its layer's parameters get nothing.
WRONG_02_PARAMS_OF_MODULE_ONLY = """
class CheckpointFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, run_fn, *args):
        ctx.run_fn = run_fn
        ctx.is_tensor = [torch.is_tensor(a) for a in args]
        ctx.others = [None if t else a for t, a in zip(ctx.is_tensor, args)]
        ctx.save_for_backward(*[a for a in args if torch.is_tensor(a)])
        ctx.cpu_state = torch.get_rng_state()
        return run_fn(*args)

    @staticmethod
    def backward(ctx, grad_output):
        saved = iter(ctx.saved_tensors)
        args = []
        for t, o in zip(ctx.is_tensor, ctx.others):
            if t:
                s = next(saved)
                o = s.detach().requires_grad_(s.requires_grad)
            args.append(o)
        with torch.random.fork_rng(devices=[]):
            torch.set_rng_state(ctx.cpu_state)
            with torch.enable_grad():
                out = ctx.run_fn(*args)
        leaves = [a for a in args if torch.is_tensor(a) and a.requires_grad]
        params = ([p for p in ctx.run_fn.parameters() if p.requires_grad]
                  if isinstance(ctx.run_fn, nn.Module) else [])
        grads = torch.autograd.grad(out, leaves + params, grad_output, allow_unused=True)
        for p, g in zip(params, grads[len(leaves):]):
            if g is not None:
                p.grad = g if p.grad is None else p.grad + g
        it = iter(grads[:len(leaves)])
        return (None, *(next(it) if torch.is_tensor(a) and a.requires_grad else None
                        for a in args))
"""


# CheckpointFunction, Reformer style: forward draws a fresh seed (torch.seed() reseeds the
# global generator), backward sets the same seed again inside fork_rng.
WRONG_04_REFORMER_SEED = """
class CheckpointFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, run_fn, *args):
        ctx.run_fn = run_fn
        ctx.is_tensor = [torch.is_tensor(a) for a in args]
        ctx.others = [None if t else a for t, a in zip(ctx.is_tensor, args)]
        ctx.save_for_backward(*[a for a in args if torch.is_tensor(a)])
        ctx.seed = torch.seed()
        return run_fn(*args)

    @staticmethod
    def backward(ctx, grad_output):
        saved = iter(ctx.saved_tensors)
        args = []
        for t, o in zip(ctx.is_tensor, ctx.others):
            if t:
                s = next(saved)
                o = s.detach().requires_grad_(s.requires_grad)
            args.append(o)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(ctx.seed)
            with torch.enable_grad():
                out = ctx.run_fn(*args)
        torch.autograd.backward(out, grad_output)
        return (None, *(a.grad if torch.is_tensor(a) else None for a in args))
"""


# CheckpointFunction: fresh leaves require grad as ctx.needs_input_grad says, indexed by the
# argument's position in args, forgetting that run_fn is input 0.
WRONG_05_NEEDS_INPUT_GRAD_OFF_BY_ONE = """
class CheckpointFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, run_fn, *args):
        ctx.run_fn = run_fn
        ctx.is_tensor = [torch.is_tensor(a) for a in args]
        ctx.others = [None if t else a for t, a in zip(ctx.is_tensor, args)]
        ctx.save_for_backward(*[a for a in args if torch.is_tensor(a)])
        ctx.cpu_state = torch.get_rng_state()
        return run_fn(*args)

    @staticmethod
    def backward(ctx, grad_output):
        saved = iter(ctx.saved_tensors)
        args = []
        for i, (t, o) in enumerate(zip(ctx.is_tensor, ctx.others)):
            if t:
                o = next(saved).detach().requires_grad_(ctx.needs_input_grad[i])
            args.append(o)
        with torch.random.fork_rng(devices=[]):
            torch.set_rng_state(ctx.cpu_state)
            with torch.enable_grad():
                out = ctx.run_fn(*args)
        torch.autograd.backward(out, grad_output)
        return (None, *(a.grad if torch.is_tensor(a) else None for a in args))
"""


# checkpoint_sequential: binds start as a default argument, but reads end late.
WRONG_06_SEQ_HALF_LATE_BINDING = """
def checkpoint_sequential(layers, segments, x):
    layers = list(layers)
    size, extra = divmod(len(layers), segments)
    start = 0
    for i in range(segments):
        end = start + size + (i < extra)
        x = CheckpointFunction.apply(
            lambda h, s=start: nn.Sequential(*layers[s:end])(h), x)
        start = end
    return x
"""


# checkpoint_sequential: round(n / k) layers per segment, the rest in the last.
WRONG_07_SEQ_ROUND = """
def checkpoint_sequential(layers, segments, x):
    layers = list(layers)
    size = max(1, round(len(layers) / segments))
    bounds = [min(i * size, len(layers)) for i in range(segments)] + [len(layers)]
    for start, end in zip(bounds, bounds[1:]):
        x = CheckpointFunction.apply(nn.Sequential(*layers[start:end]), x)
    return x
"""


# ReversibleCoupling: saves y1, y2 and returns clones of them, "so the caller cannot change
# what backward reads".
WRONG_09_REV_RETURNS_CLONES = """
class ReversibleCoupling(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x1, x2, f, g):
        ctx.f, ctx.g = f, g
        y1 = x1 + f(x2)
        y2 = x2 + g(y1)
        ctx.save_for_backward(y1, y2)
        return y1.clone(), y2.clone()

    @staticmethod
    def backward(ctx, grad_y1, grad_y2):
        y1, y2 = ctx.saved_tensors
        with torch.no_grad():
            x2 = y2 - ctx.g(y1)
            x1 = y1 - ctx.f(x2)
        x1.requires_grad_(); x2.requires_grad_()
        with torch.enable_grad():
            z1 = x1 + ctx.f(x2)
            z2 = x2 + ctx.g(z1)
        torch.autograd.backward((z1, z2), (grad_y1, grad_y2))
        return x1.grad, x2.grad, None, None
"""


# checkpoint_sequential: bounds floor(i * n / k), so the longer groups come last (7 in 3:
# 2, 2, 3), each segment a functools.partial over its own tuple of layers; the last segment
# runs without a checkpoint, as torch's does.
UNUSUAL_02_SEQ_FLOOR_BOUNDS_PARTIAL = """
import functools

def _run(group, h):
    for layer in group:
        h = layer(h)
    return h

def checkpoint_sequential(layers, segments, x):
    layers = tuple(layers)
    n = len(layers)
    bounds = [i * n // segments for i in range(segments + 1)]
    for i, (start, end) in enumerate(zip(bounds, bounds[1:])):
        run = functools.partial(_run, layers[start:end])
        x = run(x) if i == segments - 1 else CheckpointFunction.apply(run, x)
    return x
"""


UNUSUAL = [
    Unusual('checkpoint_sequential',
            'floor bounds, functools.partial over a tuple, the last segment plain',
            HELPER + "\n\n" + UNUSUAL_02_SEQ_FLOOR_BOUNDS_PARTIAL),
]

MISTAKES = [
    Mistake('CheckpointFunction', 'a boolean mask kept on ctx with the non-tensors',
            'CheckpointFunction stores a tensor as ctx.others[4]',
            WRONG_01_MASK_ON_CTX),
    Mistake('CheckpointFunction',
            'autograd.grad over the leaves and run_fn.parameters() when a module',
            'torch.autograd.grad returns gradients for the tensors it lists only',
            "from torch import nn\n" + WRONG_02_PARAMS_OF_MODULE_ONLY),
    Mistake('CheckpointFunction', 'forward reseeds with torch.seed(), backward replays the seed',
            'forward should run run_fn on the random state it finds',
            WRONG_04_REFORMER_SEED),
    Mistake('CheckpointFunction',
            'ctx.needs_input_grad indexed from the first argument, not run_fn',
            'the recomputation ran run_fn on a copy of x that did not require grad',
            WRONG_05_NEEDS_INPUT_GRAD_OFF_BY_ONE),
    Mistake('checkpoint_sequential',
            'late-binding closure: start bound as a default, end read late',
            'the recomputation ran different code than forward',
            HELPER + "from torch import nn\n\n\n" + WRONG_06_SEQ_HALF_LATE_BINDING),
    Mistake('checkpoint_sequential', 'round(n / k) layers per segment, the rest in the last',
            'made a segment of 3 layers ([1, 1, 1, 1, 3] recomputed)',
            HELPER + "from torch import nn\n\n\n" + WRONG_07_SEQ_ROUND),
    Mistake('ReversibleCoupling', 'saves y1 and y2, returns clones of them',
            'saved a copy of its output y1',
            WRONG_09_REV_RETURNS_CLONES),
]
