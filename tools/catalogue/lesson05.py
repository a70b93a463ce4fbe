"""Lesson 05 (checkpointing): CheckpointFunction and checkpoint_sequential, answered unusually
and wrongly."""

from tools.catalogue import Mistake, Unusual

# Forward as the lesson teaches: the arguments split into tensors (saved) and the rest (kept
# on ctx), the random states recorded.
FORWARD = """
    @staticmethod
    def forward(ctx, run_fn, *args):
        ctx.run_fn = run_fn
        ctx.is_tensor = [isinstance(a, torch.Tensor) for a in args]
        ctx.others = [None if t else a for t, a in zip(ctx.is_tensor, args)]
        tensors = [a for a in args if isinstance(a, torch.Tensor)]
        ctx.save_for_backward(*tensors)
        ctx.devices = sorted({t.get_device() for t in tensors if t.is_cuda})
        ctx.cpu_state = torch.get_rng_state()
        ctx.cuda_states = [torch.cuda.get_rng_state(d) for d in ctx.devices]
        return run_fn(*args)
"""

ARGS = """
def _arguments(ctx, prepare):
    saved = iter(ctx.saved_tensors)
    return [prepare(next(saved)) if t else other for t, other in zip(ctx.is_tensor, ctx.others)]
"""

FRESH = "lambda t: t.detach().requires_grad_(t.requires_grad)"
RESTORE = """        with torch.random.fork_rng(devices=ctx.devices):
            torch.set_rng_state(ctx.cpu_state)
            for device, state in zip(ctx.devices, ctx.cuda_states):
                torch.cuda.set_rng_state(state, device)
            with torch.enable_grad():
                output = ctx.run_fn(*args)
"""
GRADS = "(None, *(a.grad if isinstance(a, torch.Tensor) else None for a in args))"


def _checkpoint(backward: str, forward: str = FORWARD) -> str:
    return ARGS + f"""

class CheckpointFunction(torch.autograd.Function):{forward}
    @staticmethod
    def backward(ctx, grad_output):
{backward}
"""


CORRECT_BACKWARD = (f"        args = _arguments(ctx, {FRESH})\n" + RESTORE
                    + f"        torch.autograd.backward(output, grad_output)\n        return {GRADS}")

# The random state as a uint8 tensor through save_for_backward, as lesson 00 teaches for tensors.
RNG_SAVED = """

class CheckpointFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, run_fn, *args):
        ctx.run_fn = run_fn
        ctx.positions = [i for i, a in enumerate(args) if isinstance(a, torch.Tensor)]
        ctx.args = [None if isinstance(a, torch.Tensor) else a for a in args]
        ctx.save_for_backward(torch.get_rng_state(), *(args[i] for i in ctx.positions))
        ctx.devices = sorted({a.get_device() for a in args
                              if isinstance(a, torch.Tensor) and a.is_cuda})
        ctx.cuda_states = [torch.cuda.get_rng_state(d) for d in ctx.devices]
        return run_fn(*args)

    @staticmethod
    def backward(ctx, grad_output):
        state, *tensors = ctx.saved_tensors
        args = list(ctx.args)
        for i, t in zip(ctx.positions, tensors):
            args[i] = t.detach().requires_grad_(t.requires_grad)
        with torch.random.fork_rng(devices=ctx.devices):
            torch.set_rng_state(state)
            for device, cuda_state in zip(ctx.devices, ctx.cuda_states):
                torch.cuda.set_rng_state(cuda_state, device)
            with torch.enable_grad():
                output = ctx.run_fn(*args)
        torch.autograd.backward(output, grad_output)
        return (None, *(a.grad if isinstance(a, torch.Tensor) else None for a in args))
"""

REENTRANT = """
from torch.utils.checkpoint import CheckpointFunction as _Reentrant


class CheckpointFunction(torch.autograd.Function):
    # PyTorch's own reentrant checkpoint, with preserve_rng_state=True
    @staticmethod
    def forward(ctx, run_fn, *args):
        return _Reentrant.forward(ctx, run_fn, True, *args)

    @staticmethod
    def backward(ctx, *grad_outputs):
        return (None, *_Reentrant.backward(ctx, *grad_outputs)[2:])
"""

HELPER = _checkpoint(CORRECT_BACKWARD)  # the CheckpointFunction checkpoint_sequential builds on


def _sequential(body: str) -> str:
    return HELPER + "\nfrom torch import nn\n\n\ndef checkpoint_sequential(layers, segments, x):\n" \
        + body


UNUSUAL = [
    Unusual("CheckpointFunction", "RNG state passed through save_for_backward", RNG_SAVED),
    Unusual("CheckpointFunction", "PyTorch's reentrant CheckpointFunction, preserve_rng_state=True",
            REENTRANT),
    Unusual("CheckpointFunction", "torch.random.fork_rng with explicit CUDA states, inputs list",
            _checkpoint(f"        args = _arguments(ctx, {FRESH})\n" + RESTORE
                        + "        outputs = output if isinstance(output, tuple) else (output,)\n"
                        "        torch.autograd.backward(outputs, (grad_output,))\n"
                        f"        return {GRADS}")),
    Unusual("CheckpointFunction", "non-tensor arguments in a dict by position, output.backward",
            """

class CheckpointFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, run_fn, *args):
        ctx.run_fn, ctx.n = run_fn, len(args)
        ctx.slots = {i: a for i, a in enumerate(args) if not torch.is_tensor(a)}
        ctx.save_for_backward(*(a for a in args if torch.is_tensor(a)))
        ctx.state = torch.get_rng_state()
        ctx.cuda = {a.device: torch.cuda.get_rng_state(a.device) for a in args
                    if torch.is_tensor(a) and a.is_cuda}
        return run_fn(*args)

    @staticmethod
    def backward(ctx, grad_output):
        saved, args = iter(ctx.saved_tensors), []
        for i in range(ctx.n):
            t = ctx.slots[i] if i in ctx.slots else next(saved)
            args.append(t.detach().requires_grad_(t.requires_grad) if torch.is_tensor(t) else t)
        with torch.random.fork_rng(devices=list(ctx.cuda)):
            torch.set_rng_state(ctx.state)
            for device, state in ctx.cuda.items():
                torch.cuda.set_rng_state(state, device)
            with torch.enable_grad():
                output = ctx.run_fn(*args)
        output.backward(grad_output)
        return (None, *(a.grad if torch.is_tensor(a) and a.requires_grad else None for a in args))
"""),
    Unusual("checkpoint_sequential", "closures with bound defaults", _sequential(
        "    layers = list(layers)\n    size = len(layers) // segments\n"
        "    for i in range(segments):\n"
        "        end = len(layers) if i == segments - 1 else (i + 1) * size\n"
        "        def run(h, start=i * size, end=end):\n"
        "            for layer in layers[start:end]:\n                h = layer(h)\n"
        "            return h\n"
        "        x = CheckpointFunction.apply(run, x)\n    return x\n")),
    Unusual("checkpoint_sequential", "last segment run plainly, as torch.utils.checkpoint does",
            _sequential(
                "    layers = list(layers)\n    size = len(layers) // segments\n"
                "    for i in range(segments - 1):\n"
                "        x = CheckpointFunction.apply(nn.Sequential(*layers[i * size:(i + 1) * "
                "size]), x)\n"
                "    for layer in layers[(segments - 1) * size:]:\n        x = layer(x)\n"
                "    return x\n")),
    Unusual("checkpoint_sequential", "functools.partial over a module list", _sequential(
        "    import functools\n\n    def run(block, h):\n        for layer in block:\n"
        "            h = layer(h)\n        return h\n\n"
        "    layers = list(layers)\n    size = len(layers) // segments\n"
        "    bounds = [i * size for i in range(segments)] + [len(layers)]\n"
        "    for start, end in zip(bounds, bounds[1:]):\n"
        "        x = CheckpointFunction.apply(functools.partial(run, layers[start:end]), x)\n"
        "    return x\n")),
    Unusual("checkpoint_sequential", "numpy.array_split spreads the remainder over the first "
            "segments", _sequential(
                "    import numpy as np\n    layers = list(layers)\n"
                "    for chunk in np.array_split(np.arange(len(layers)), segments):\n"
                "        x = CheckpointFunction.apply(nn.Sequential(*[layers[i] for i in chunk]), x)"
                "\n    return x\n")),
]


def _backward_without(restore: str, finish: str = "        torch.autograd.backward(output, "
                      "grad_output)\n", prepare: str = FRESH) -> str:
    return _checkpoint(f"        args = _arguments(ctx, {prepare})\n" + restore + finish
                       + f"        return {GRADS}")


NO_RESTORE = "        with torch.enable_grad():\n            output = ctx.run_fn(*args)\n"
REWIND = ("        torch.set_rng_state(ctx.cpu_state)\n"
          "        for device, state in zip(ctx.devices, ctx.cuda_states):\n"
          "            torch.cuda.set_rng_state(state, device)\n" + NO_RESTORE)
OUTSIDE_FORK = ("        with torch.random.fork_rng(devices=ctx.devices):\n"
                "            torch.set_rng_state(ctx.cpu_state)\n" + NO_RESTORE)
SEED_REPLAY = ("        with torch.random.fork_rng(devices=ctx.devices):\n"
               "            torch.manual_seed(ctx.seed)\n"
               "            with torch.enable_grad():\n"
               "                output = ctx.run_fn(*args)\n")
NO_ENABLE = ("        with torch.random.fork_rng(devices=ctx.devices):\n"
             "            torch.set_rng_state(ctx.cpu_state)\n"
             "            output = ctx.run_fn(*args)\n")

MISTAKES = [
    Mistake("CheckpointFunction", "ignores the random state", "the recomputation drew new random "
            "numbers, from the caller's current state: nothing restored forward's state",
            _backward_without(NO_RESTORE), named=True, nbgrader=True),
    Mistake("CheckpointFunction", "restores inside fork_rng, recomputes after the block closed",
            "or something put the caller's state back first (a torch.random.fork_rng() block "
            "that closed before", _backward_without(OUTSIDE_FORK), named=True),
    Mistake("CheckpointFunction", "replays the seed (torch.initial_seed()), not the state",
            "backward's run_fn began from the state torch.manual_seed(seed) gives",
            _backward_without(SEED_REPLAY, prepare=FRESH).replace(
                "        ctx.cpu_state = torch.get_rng_state()\n",
                "        ctx.seed = torch.initial_seed()\n"), named=True),
    Mistake("CheckpointFunction", "set_rng_state without fork_rng", "left the global random "
            "state rewound to the forward's", _backward_without(REWIND), named=True),
    Mistake("CheckpointFunction", "torch.autograd.grad of the inputs only", "the parameters used "
            "inside run_fn got no gradient (.grad is None)",
            _checkpoint(f"        args = _arguments(ctx, {FRESH})\n" + RESTORE +
                        "        wanted = [a for a in args if isinstance(a, torch.Tensor) and "
                        "a.requires_grad]\n"
                        "        grads = iter(torch.autograd.grad(output, wanted, grad_output))\n"
                        "        return (None, *(next(grads) if isinstance(a, torch.Tensor) and "
                        "a.requires_grad else None for a in args))"), named=True),
    Mistake("CheckpointFunction", "overwrites the parameters' .grad", "replaced the .grad of "
            "parameter",
            _checkpoint(f"        args = _arguments(ctx, {FRESH})\n" + RESTORE +
                        "        module = ctx.run_fn\n"
                        "        parameters = list(module.parameters()) if isinstance(module, "
                        "torch.nn.Module) else []\n"
                        "        wanted = [a for a in args if isinstance(a, torch.Tensor) and "
                        "a.requires_grad]\n"
                        "        grads = torch.autograd.grad(output, wanted + parameters, "
                        "grad_output, allow_unused=True)\n"
                        "        for p, g in zip(parameters, grads[len(wanted):]):\n"
                        "            p.grad = g\n"
                        "        it = iter(grads[:len(wanted)])\n"
                        "        return (None, *(next(it) if isinstance(a, torch.Tensor) and "
                        "a.requires_grad else None for a in args))")),
    Mistake("CheckpointFunction", "run_fn under enable_grad in forward", "kept 1440 bytes of "
            "activations", """

class CheckpointFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, run_fn, *args):
        inputs = [a.detach().requires_grad_(a.requires_grad) if isinstance(a, torch.Tensor)
                  else a for a in args]
        with torch.enable_grad():
            output = run_fn(*inputs)
        ctx.graph = (output, inputs)
        return output.detach()

    @staticmethod
    def backward(ctx, grad_output):
        output, inputs = ctx.graph
        torch.autograd.backward(output, grad_output)
        return (None, *(a.grad if isinstance(a, torch.Tensor) else None for a in inputs))
""", named=True),
    Mistake("CheckpointFunction", "run_fn under enable_grad in forward, the graph dropped by "
            "apply", "forward recorded run_fn's graph: its ops saved 1440 bytes",
            _checkpoint(CORRECT_BACKWARD, FORWARD.replace(
                "        return run_fn(*args)",
                "        with torch.enable_grad():\n            return run_fn(*args)")),
            named=True),
    Mistake("CheckpointFunction", "run_fn under enable_grad in forward, a view returned (its "
            "base keeps the graph)", "CheckpointFunction kept 1440 bytes of activations",
            _checkpoint(CORRECT_BACKWARD, FORWARD.replace(
                "        return run_fn(*args)",
                "        with torch.enable_grad():\n            out = run_fn(*args)\n"
                "        return out.view(out.shape)"))),
    Mistake("CheckpointFunction", "returns gradients for the tensors only (no None for scale "
            "and use_tanh)", "return None for each non-tensor (run_fn, scale, use_tanh) and",
            _checkpoint(CORRECT_BACKWARD.replace(
                f"return {GRADS}",
                "return (None, *(a.grad for a in args if isinstance(a, torch.Tensor)))"))),
    Mistake("CheckpointFunction", "recomputes with gradients off", "recomputed run_fn with "
            "gradients off", _backward_without(NO_ENABLE), named=True),
    Mistake("CheckpointFunction", "recomputes on the saved tensors themselves", "wrote into the "
            ".grad of the caller's tensor x", _backward_without(RESTORE, prepare="lambda t: t"),
            named=True),
    Mistake("CheckpointFunction", "requires_grad_() on every tensor", "gradients of a non-float "
            "input (e.g. a boolean mask)",
            _backward_without(RESTORE, prepare="lambda t: t.detach().requires_grad_()"),
            named=True),
    Mistake("CheckpointFunction", "forgets the None for run_fn", "the first input is run_fn, so "
            "return None for it first",
            _checkpoint(CORRECT_BACKWARD.replace(f"return {GRADS}", f"return {GRADS}[1:]")),
            named=True),
    Mistake("CheckpointFunction", "arguments kept on ctx", "stores a tensor as ctx.args[0]",
            _checkpoint(CORRECT_BACKWARD, FORWARD.replace("        return run_fn(*args)",
                                                          "        ctx.args = args\n"
                                                          "        return run_fn(*args)"))),
    Mistake("CheckpointFunction", "saves every argument", "CheckpointFunction.forward passed a "
            "non-tensor to ctx.save_for_backward",
            _checkpoint(CORRECT_BACKWARD, FORWARD.replace("ctx.save_for_backward(*tensors)",
                                                          "ctx.save_for_backward(*args)"))),
    Mistake("checkpoint_sequential", "no checkpoints", "checkpointed nothing", _sequential(
        "    for layer in layers:\n        x = layer(x)\n    return x\n"), nbgrader=True),
    Mistake("checkpoint_sequential", "len // segments chunks make too many segments",
            "made 3 checkpointed segments: split the layers into exactly 2", _sequential(
                "    layers = list(layers)\n    size = max(len(layers) // segments, 1)\n"
                "    for start in range(0, len(layers), size):\n"
                "        x = CheckpointFunction.apply(nn.Sequential(*layers[start:start + size]),"
                " x)\n    return x\n")),
    Mistake("checkpoint_sequential", "drops the remainder", "ran only the first",
            _sequential(
                "    layers = list(layers)\n    size = len(layers) // segments\n"
                "    for i in range(segments):\n"
                "        x = CheckpointFunction.apply(nn.Sequential(*layers[i * size:(i + 1) * "
                "size]), x)\n    return x\n")),
    Mistake("checkpoint_sequential", "late-binding closure in the loop", "the recomputation ran "
            "different code than forward", _sequential(
                "    layers = list(layers)\n    size = len(layers) // segments\n"
                "    bounds = [i * size for i in range(segments)] + [len(layers)]\n"
                "    for start, end in zip(bounds, bounds[1:]):\n"
                "        def run(h):\n            for layer in layers[start:end]:\n"
                "                h = layer(h)\n            return h\n"
                "        x = CheckpointFunction.apply(run, x)\n    return x\n"), named=True),
    Mistake("checkpoint_sequential", "ceil(n / k) layers per segment", "ceil(n / k) layers per "
            "segment", _sequential(
                "    layers = list(layers)\n    size = math.ceil(len(layers) / segments)\n"
                "    for start in range(0, len(layers), size):\n"
                "        x = CheckpointFunction.apply(nn.Sequential(*layers[start:start + size]),"
                " x)\n    return x\n"), named=True),
    Mistake("checkpoint_sequential", "built on a CheckpointFunction that backpropagates its saved "
            "output (backward would re-enter itself without end)", "re-entered a "
            "CheckpointFunction's own backward", """

class CheckpointFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, run_fn, x):
        output = run_fn(x)
        ctx.save_for_backward(x, output)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        x, output = ctx.saved_tensors
        torch.autograd.backward(output, grad_output)
        return None, None


def checkpoint_sequential(layers, segments, x):
    layers = list(layers)
    size = len(layers) // segments
    bounds = [i * size for i in range(segments)] + [len(layers)]
    for start, end in zip(bounds, bounds[1:]):
        x = CheckpointFunction.apply(torch.nn.Sequential(*layers[start:end]), x)
    return x
"""),
    Mistake("CheckpointFunction", "recomputes through CheckpointFunction.apply (each backward would "
            "start another, without end)", "CheckpointFunction.backward ran inside itself",
            _backward_without(RESTORE.replace("ctx.run_fn(*args)",
                                              "CheckpointFunction.apply(ctx.run_fn, *args)"))),
]
