"""Lesson 05: the answers of review 59 (a fresh review, 58z) not already catalogued in the same
form. Three passed both checks while breaking a clause: a CheckpointFunction and a
ReversibleCoupling that skip the recomputation when the incoming gradient is all zero (returning
zeros: the parameters end with .grad None where a plain run leaves zeros, and an optimizer skips
them), and a checkpoint_sequential that caches its groups between calls by id(layers). The grader
now backpropagates a zero gradient through each Function, in float64 and float32, and calls
checkpoint_sequential again after the caller swapped a layer (a list, an nn.Sequential) and on a
new list made as the first is freed. The flag "did run_fn draw random numbers" kept on the class
or in a global (review 58c's note) is caught by a two-call case where only the first call draws.
The reviewer's list-slice answer now reads "'list' object is not callable" on its first line,
and their answer that lists a Module run_fn's parameters for autograd.grad is told, on its first
line, that a plain-function run_fn has no .parameters() to list."""

from .. import Mistake, Unusual, edit
from .answers import FRESH, GUARDED, RESTORE, SOLUTION as CHECKPOINT
from .checkpoint_sequential import HELPER, SPLIT, _sequential
from .reversible_coupling import INVERT, RECOMPUTE, RETURN, RIGHT, _coupling
from .review58c import UNUSUAL_01_REPLAY_WHEN_DREW

START = "    def backward(ctx, grad_output):\n"
ZERO_HINT = "skipped the recomputation when the incoming gradient is all zero"

# review 59, w17: zeros for the inputs, no recomputation, when grad_output is all zero
WRONG_01_ZERO_SKIP = edit(CHECKPOINT, (START, START + """\
        if not grad_output.any():  # nothing flows back: skip the recomputation
            return (None, *(torch.zeros_like(a) if isinstance(a, torch.Tensor)
                            and a.requires_grad else None for a in _arguments(ctx, lambda t: t)))
"""))

# its twin: None for every input too ("nothing to add")
WRONG_02_ZERO_NONE = edit(CHECKPOINT, (START, START + """\
        if torch.count_nonzero(grad_output) == 0:
            return (None,) * (1 + len(ctx.is_tensor))
"""))

COUPLING = _coupling(INVERT + RECOMPUTE + RIGHT + RETURN)
COUPLING_START = "    def backward(ctx, grad_y1, grad_y2):\n"

# review 59, r7: zeros for x1 and x2, f and g never called, when both gradients are all zero
WRONG_03_COUPLING_ZERO_SKIP = edit(COUPLING, (COUPLING_START, COUPLING_START + """\
        if not grad_y1.any() and not grad_y2.any():
            y1, y2 = ctx.saved_tensors
            return torch.zeros_like(y1), torch.zeros_like(y2), None, None
"""))

# review 59, s6: groups built once per (id(layers), segments) and run again on the next call
CACHE = """_GROUPS = {}


def checkpoint_sequential(layers, segments, x):
    key = (id(layers), segments)
    if key not in _GROUPS:
        layers = list(layers)
        size, longer = divmod(len(layers), segments)
        groups, start = [], 0
        for i in range(segments):
            end = start + size + (i < longer)
            groups.append(nn.Sequential(*layers[start:end]))
            start = end
        _GROUPS[key] = groups
    for group in _GROUPS[key]:
        x = CheckpointFunction.apply(group, x)
    return x
"""
WRONG_04_ID_CACHE = HELPER + "\nfrom torch import nn\n\n\n" + CACHE

# its twin: the cache kept for an nn.Sequential only ("a module does not change")
WRONG_05_MODULE_CACHE = edit(WRONG_04_ID_CACHE, (
    "    if key not in _GROUPS:\n",
    "    if not isinstance(layers, nn.Module):\n        _GROUPS.pop(key, None)\n"
    "    if key not in _GROUPS:\n"))
STATE_HINT = "kept from an earlier call"

# review 59, s3: slices of the list handed to CheckpointFunction as they are (a list)
WRONG_06_SLICE = _sequential(edit(SPLIT, ("    layers = list(layers)\n", ""), (
    "nn.Sequential(*layers[start:end])", "layers[start:end]")))

# review 58c's u4 with its "did run_fn draw" flag moved off ctx: on the class, in a global
WRONG_07_DREW_ON_CLASS = edit(UNUSUAL_01_REPLAY_WHEN_DREW, ("ctx.drew", "CheckpointFunction.drew"))
WRONG_08_DREW_GLOBAL = edit(UNUSUAL_01_REPLAY_WHEN_DREW, (
    "        ctx.drew = ", "        global _DREW\n        _DREW = "), ("ctx.drew", "_DREW"))
SHARED_HINT = "right for each call alone but not for two calls in one graph"
CLASS_HINT = "a class attribute is shared by every call"

# review 59, u1: fresh leaves from ctx.needs_input_grad, the random states put back by hand in
# a try/finally instead of fork_rng (the reviewer's did the CPU's; the CUDA devices' too here)
UNUSUAL_01_MANUAL_RNG = edit(CHECKPOINT, (RESTORE, """\
        caller = torch.get_rng_state()
        caller_cuda = [torch.cuda.get_rng_state(d) for d in ctx.devices]
        torch.set_rng_state(ctx.cpu_state)
        for device, state in zip(ctx.devices, ctx.cuda_states):
            torch.cuda.set_rng_state(state, device)
        try:
            with torch.enable_grad():
                output = ctx.run_fn(*args)
        finally:
            torch.set_rng_state(caller)
            for device, state in zip(ctx.devices, caller_cuda):
                torch.cuda.set_rng_state(state, device)
"""), (f"        args = _arguments(ctx, {FRESH})",
       "        needs = iter(ctx.needs_input_grad[1 + i] for i, t in enumerate(ctx.is_tensor)"
       " if t)\n"
       "        args = _arguments(ctx, lambda t: t.detach().requires_grad_(next(needs)))"))

# review 59, u2: bounds round(i * n / k), each group a functools.partial over one run function
UNUSUAL_02_ROUND_BOUNDS = _sequential("""\
    import functools
    layers = list(layers)
    n = len(layers)
    bounds = [round(i * n / segments) for i in range(segments + 1)]

    def run(lo, hi, h):
        for layer in layers[lo:hi]:
            h = layer(h)
        return h

    for lo, hi in zip(bounds, bounds[1:]):
        x = CheckpointFunction.apply(functools.partial(run, lo, hi), x)
    return x
""")

# review 59, u5: x1 and x2 require grad only where autograd asks, backward on what needs it
UNUSUAL_03_COUPLING_NEEDS = edit(COUPLING, (
    "        x1, x2 = x1.requires_grad_(), x2.requires_grad_()\n",
    "        x1.requires_grad_(ctx.needs_input_grad[0])\n"
    "        x2.requires_grad_(ctx.needs_input_grad[1])\n"), (RIGHT, """\
        outs = [(z, g) for z, g in ((z1, grad_y1), (z2, grad_y2)) if z.requires_grad]
        if outs:
            torch.autograd.backward([z for z, _ in outs], [g for _, g in outs])
"""))

# review 59, w4: autograd.grad over the leaves and, when run_fn is a Module, its parameters,
# their .grad added to by hand: a closure's parameters get nothing
WRONG_09_MODULE_PARAMETERS = edit(CHECKPOINT, (GUARDED, """\
        params = [p for p in getattr(ctx.run_fn, "parameters", lambda: [])() if p.requires_grad]
        leaves = [a for a in args if isinstance(a, torch.Tensor) and a.requires_grad]
        if output.requires_grad:
            grads = torch.autograd.grad(output, leaves + params, grad_output, allow_unused=True)
            for p, g in zip(params, grads[len(leaves):]):
                if g is not None:
                    p.grad = g if p.grad is None else p.grad + g
            for a, g in zip(leaves, grads):
                a.grad = g
"""))

UNUSUAL = [
    Unusual("CheckpointFunction", "leaves from ctx.needs_input_grad, the random states put "
            "back by hand in try/finally", UNUSUAL_01_MANUAL_RNG),
    Unusual("checkpoint_sequential", "bounds round(i * n / k), functools.partial groups",
            UNUSUAL_02_ROUND_BOUNDS),
    Unusual("ReversibleCoupling", "leaves from ctx.needs_input_grad, backward on the outputs "
            "that require grad", UNUSUAL_03_COUPLING_NEEDS),
]

MISTAKES = [
    Mistake("CheckpointFunction", "returns zeros without recomputing when grad_output is all "
            "zero", ZERO_HINT, WRONG_01_ZERO_SKIP),
    Mistake("CheckpointFunction", "returns None for every input without recomputing when "
            "grad_output is all zero", ZERO_HINT, WRONG_02_ZERO_NONE),
    Mistake("ReversibleCoupling", "returns zeros without recomputing when both incoming "
            "gradients are all zero", ZERO_HINT, WRONG_03_COUPLING_ZERO_SKIP),
    Mistake("checkpoint_sequential", "groups cached by id(layers) across calls", STATE_HINT,
            WRONG_04_ID_CACHE),
    Mistake("checkpoint_sequential", "groups cached by id(layers) for an nn.Sequential only",
            STATE_HINT, WRONG_05_MODULE_CACHE),
    Mistake("checkpoint_sequential", "slices of the list handed to CheckpointFunction as lists",
            "'list' object is not callable", WRONG_06_SLICE),
    Mistake("CheckpointFunction", "the 'run_fn drew' flag kept on the class", CLASS_HINT,
            WRONG_07_DREW_ON_CLASS),
    Mistake("CheckpointFunction", "the 'run_fn drew' flag kept in a global", SHARED_HINT,
            WRONG_08_DREW_GLOBAL),
    Mistake("CheckpointFunction", "autograd.grad over the parameters of run_fn when it is a "
            "Module", "when run_fn is a plain function", WRONG_09_MODULE_PARAMETERS),
]
