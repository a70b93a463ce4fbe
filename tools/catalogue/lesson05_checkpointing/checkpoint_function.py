"""Lesson 05: answers with known verdicts for CheckpointFunction: the random state recorded
before run_fn runs and restored around the recomputation, fresh leaves that require grad, and
the gradients backpropagated to the inputs and the parameters alike."""

from .. import Mistake, Unusual, edit
from .answers import (CORRECT_BACKWARD, FORWARD, FRESH, GRADS, RESTORE, _backward_without,
                      _checkpoint)

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
        if output.requires_grad:
            torch.autograd.backward(output, grad_output)
        return (None, *(a.grad if isinstance(a, torch.Tensor) else None for a in args))
"""

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
LEAVES = "[a for a in args if isinstance(a, torch.Tensor) and a.requires_grad]"

GRAPH_WALK = """

def _leaves(output):
    seen, stack, found = set(), [output.grad_fn], []
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        if hasattr(node, "variable"):
            found.append(node.variable)
        stack.extend(n for n, _ in node.next_functions)
    return found


class CheckpointFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, run_fn, *args):
        ctx.run_fn = run_fn
        ctx.slots = [torch.is_tensor(a) for a in args]
        ctx.others = [None if t else a for t, a in zip(ctx.slots, args)]
        tensors = [a for a in args if torch.is_tensor(a)]
        ctx.save_for_backward(*tensors)
        ctx.gpus = sorted({t.device.index for t in tensors if t.is_cuda})
        ctx.states = (torch.get_rng_state(), [torch.cuda.get_rng_state(d) for d in ctx.gpus])
        return run_fn(*args)

    @staticmethod
    def backward(ctx, grad_output):
        saved = iter(ctx.saved_tensors)
        args = [next(saved).detach().requires_grad_(ctx.needs_input_grad[i + 1]) if t else o
                for i, (t, o) in enumerate(zip(ctx.slots, ctx.others))]
        caller = (torch.get_rng_state(), [torch.cuda.get_rng_state(d) for d in ctx.gpus])
        torch.set_rng_state(ctx.states[0])
        for d, s in zip(ctx.gpus, ctx.states[1]):
            torch.cuda.set_rng_state(s, d)
        try:
            with torch.enable_grad():
                out = ctx.run_fn(*args)
        finally:
            torch.set_rng_state(caller[0])
            for d, s in zip(ctx.gpus, caller[1]):
                torch.cuda.set_rng_state(s, d)
        if not out.requires_grad:  # nothing rebuilt requires grad: no gradient to give
            return (None,) * (1 + len(args))
        mine = [a for a in args if torch.is_tensor(a) and a.requires_grad]
        others = [v for v in _leaves(out) if not any(v is m for m in mine)]
        grads = torch.autograd.grad(out, mine + others, grad_output, allow_unused=True)
        for p, gp in zip(others, grads[len(mine):]):
            if gp is not None:
                p.grad = gp if p.grad is None else p.grad + gp
        it = iter(grads[:len(mine)])
        return (None, *(next(it) if torch.is_tensor(a) and a.requires_grad else None
                        for a in args))
"""

UNUSUAL = [
    Unusual("CheckpointFunction", "RNG state passed through save_for_backward", RNG_SAVED),
    Unusual("CheckpointFunction", "torch.random.fork_rng with explicit CUDA states, inputs list",
            _checkpoint(f"        args = _arguments(ctx, {FRESH})\n" + RESTORE
                        + "        outputs = output if isinstance(output, tuple) else (output,)\n"
                        "        if output.requires_grad:\n"
                        "            torch.autograd.backward(outputs, (grad_output,))\n"
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
        if output.requires_grad:
            output.backward(grad_output)
        return (None, *(a.grad if torch.is_tensor(a) and a.requires_grad else None for a in args))
"""),
    # review 52: no fork_rng (the caller's states read and written back by hand, in finally) and
    # torch.autograd.grad instead of backward: the rebuilt graph's leaves found by walking it
    # (AccumulateGrad nodes), the parameters' gradients added into .grad by hand
    Unusual("CheckpointFunction", "states put back by hand, autograd.grad over the graph's leaves",
            GRAPH_WALK),
]

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
    Mistake("CheckpointFunction", "recomputes through CheckpointFunction.apply (each backward would "
            "start another, without end)", "CheckpointFunction.backward ran inside itself",
            _backward_without(RESTORE.replace("ctx.run_fn(*args)",
                                              "CheckpointFunction.apply(ctx.run_fn, *args)"))),
    # the random state recorded and restored, but recorded after run_fn had drawn its mask
    Mistake("CheckpointFunction", "random state recorded after run_fn ran", "the state was "
            "recorded after run_fn(*args) ran; record it before",
            _checkpoint(CORRECT_BACKWARD, edit(
                FORWARD, ("        ctx.cpu_state = torch.get_rng_state()\n", ""),
                ("        return run_fn(*args)\n", "        output = run_fn(*args)\n"
                 "        ctx.cpu_state = torch.get_rng_state()\n        return output\n"))),
            named=True),
    # recorded in time, but backward runs run_fn once more (a warm-up) before the
    # recomputation, so the forward's mask is spent (told apart by rng_probe.late_mask).
    Mistake("CheckpointFunction", "an extra run_fn call in backward before the recomputation",
            "backward called run_fn 2 times, and the first call, from the restored state, spent",
            _checkpoint(CORRECT_BACKWARD.replace(
                "            with torch.enable_grad():\n", "            with torch.no_grad():\n"
                "                ctx.run_fn(*args)\n            with torch.enable_grad():\n"))),
    # torch.autograd.backward with inputs= limited to the fresh leaves: the parameters get no
    # .grad, and the hint names inputs= (the calls are watched), not torch.autograd.grad
    Mistake("CheckpointFunction", "torch.autograd.backward(output, grad_output, inputs=leaves)",
            "backward passed inputs=[...] to torch.autograd.backward", _checkpoint(
                CORRECT_BACKWARD.replace("torch.autograd.backward(output, grad_output)",
                                         f"torch.autograd.backward(output, grad_output, "
                                         f"inputs={LEAVES})"))),
    Mistake("CheckpointFunction", "output.backward(grad_output, inputs=leaves)",
            "backward passed inputs=[...] to torch.autograd.backward", _checkpoint(
                CORRECT_BACKWARD.replace("torch.autograd.backward(output, grad_output)",
                                         f"output.backward(grad_output, inputs={LEAVES})"))),
    # run_fn kept on the class: two calls in one graph share it (issue 37)
    Mistake("CheckpointFunction", "run_fn kept on the class", "CheckpointFunction.forward sets "
            "CheckpointFunction.run_fn: a class attribute is shared by every call",
            _checkpoint(CORRECT_BACKWARD.replace("ctx.run_fn", "CheckpointFunction.run_fn"),
                        FORWARD.replace("ctx.run_fn = run_fn",
                                                   "CheckpointFunction.run_fn = run_fn"))),
    # fresh leaves that never require grad (a probe of the recomputation proves it; issue 37)
    Mistake("CheckpointFunction", "fresh leaves that never require grad (t.detach())",
            "backward returned None for x: the recomputation ran run_fn on a copy of x that did "
            "not require grad", _backward_without(RESTORE, prepare="lambda t: t.detach()")),
    # the random state in a global: right for one call at a time, but with two checkpoints in
    # one graph the first call's backward restores the second's state and draws its mask
    # (issue 45: a checkpoint stack with no randomness never exercised it)
    Mistake("CheckpointFunction", "the CPU random state kept in a global",
            "CheckpointFunction is right for each call alone but not for two calls in one graph",
            _checkpoint(CORRECT_BACKWARD.replace("ctx.cpu_state", "_cpu_state"),
                        FORWARD.replace("ctx.cpu_state = torch.get_rng_state()",
                                        "global _cpu_state\n        "
                                        "_cpu_state = torch.get_rng_state()"))),
    # how many arguments, in a global: the first call's backward reads the second's count
    Mistake("CheckpointFunction", "the number of arguments kept in a global",
            "CheckpointFunction is right for each call alone but not for two calls in one graph",
            _checkpoint(CORRECT_BACKWARD, FORWARD.replace(
                "        ctx.run_fn = run_fn\n", "        global _count\n        ctx.run_fn = "
                "run_fn\n        _count = len(args)\n")).replace(
                "zip(ctx.is_tensor, ctx.others)]", "zip(ctx.is_tensor[:_count], ctx.others)]")),
    # a tuple of one tensor, not the tensor: the contract's "one tensor"
    Mistake("CheckpointFunction", "forward returns (output,), a tuple",
            "returned a tuple: return a tensor",
            _checkpoint(CORRECT_BACKWARD, FORWARD.replace("        return run_fn(*args)",
                                                          "        return (run_fn(*args),)"))),
    # forward seeds, so the checkpointed model draws other dropout masks than the same model
    # unchecked (the contract's "no seeding")
    Mistake("CheckpointFunction", "forward seeds the generator (torch.manual_seed(0)) before "
            "run_fn", "forward should run run_fn on the random state it finds", _checkpoint(
                CORRECT_BACKWARD, FORWARD.replace(
                    "        ctx.cpu_state = torch.get_rng_state()",
                    "        torch.manual_seed(0)\n        ctx.cpu_state = torch.get_rng_state()"))),
    # run_fn inside fork_rng in forward: forward's mask and the recomputation agree, but the
    # caller's stream is set back, so the layers after the block draw the block's numbers
    Mistake("CheckpointFunction", "runs run_fn inside torch.random.fork_rng() in forward",
            "forward put the random state back (fork_rng in forward?)", _checkpoint(
                CORRECT_BACKWARD, FORWARD.replace(
                    "        return run_fn(*args)",
                    "        with torch.random.fork_rng(devices=ctx.devices):\n"
                    "            return run_fn(*args)"))),
    # clones of the inputs saved "against in-place changes": copies, not activations
    Mistake("CheckpointFunction", "saves clones of its tensor arguments",
            "CheckpointFunction saved a copy of its argument x", _checkpoint(
                CORRECT_BACKWARD, FORWARD.replace(
                    "ctx.save_for_backward(*tensors)",
                    "ctx.save_for_backward(*[t.clone() for t in tensors])"))),
    # review 52's answer above without allow_unused=True: the lesson's dummy input, which run_fn
    # ignores, makes torch.autograd.grad raise (once passed: no check ignored an input)
    Mistake("CheckpointFunction", "autograd.grad over the graph's leaves without allow_unused",
            "when run_fn ignores a tensor argument that requires grad",
            edit(GRAPH_WALK, ("grad_output, allow_unused=True)", "grad_output)"))),
]
