"""Lesson 05: answers with known verdicts for CheckpointFunction: the random state recorded
before run_fn runs and restored around the recomputation, fresh leaves that require grad, and
the gradients backpropagated to the inputs and the parameters alike; then, by what they get
wrong or right, answers on dtypes (leaves cast to grad_output's, half-precision arguments),
frozen parameters and dummy inputs, an all-zero grad_output, state cached between backwards
or kept on run_fn, the class or a global, and PyTorch's own reentrant Function underneath."""

from .. import Mistake, Unusual, edit
from .answers import (CORRECT_BACKWARD, FORWARD, FRESH, GRADS, RESTORE, _backward_without,
                      _checkpoint)
from .answers import BACKWARD as BACKWARD_ANSWERS, GUARDED, RETURN, SOLUTION as SOLUTION_ANSWERS

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
            args[i] = t.detach().requires_grad_(ctx.needs_input_grad[1 + i])
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


# CheckpointFunction: fresh leaves cast to grad_output's dtype ("the gradient's dtype is the one
# backward works in"): a float64 argument recomputed in float32 when run_fn returns float32.
WRONG_01_LEAVES_IN_GRAD_OUTPUT_DTYPE = _backward(
    "(tensor.detach().to(grad_output.dtype) if tensor.is_floating_point() else tensor.detach())"
    ".requires_grad_(tensor.requires_grad)")


# CheckpointFunction: fresh leaves upcast to float64 "for an exact recomputation": a float32
# argument is recomputed in float64, which is not the computation forward ran.
WRONG_02_LEAVES_UPCAST = _backward(
    "(tensor.detach().double() if tensor.is_floating_point() else tensor.detach())"
    ".requires_grad_(tensor.requires_grad)")


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


# CheckpointFunction: "dropout draws from the CPU generator": no CUDA device noted, so a CUDA
# tensor's recomputation draws from its device's generator where the caller left it.
WRONG_01_CPU_STATE_ONLY = edit(
    SOLUTION, ("        ctx.devices = sorted({t.get_device() for t in tensors if t.is_cuda})\n",
               "        ctx.devices = []  # dropout draws from the CPU generator\n"))


# CheckpointFunction: the rebuilt graph kept on ctx "so a second backward need not recompute":
# it keeps every activation run_fn saved alive after backward, as long as the caller's output.
WRONG_02_KEEPS_REBUILT_GRAPH = edit(
    SOLUTION,
    ("        torch.autograd.backward(output, grad_output)\n",
     "        ctx.rebuilt = output  # a second backward can reuse it\n"
     "        torch.autograd.backward(output, grad_output)\n"))


# CheckpointFunction: "only dropout draws random numbers": the state replayed only when run_fn
# is a function or a module holding an nn.Dropout; a module calling F.dropout gets new masks.
WRONG_01_ONLY_FOR_DROPOUT = "from torch import nn\n" + edit(
    SOLUTION, (RESTORE, RESTORE.replace(
        "        with torch.random.fork_rng(devices=ctx.devices):\n"
        "            torch.set_rng_state(ctx.cpu_state)\n",
        "        random = not isinstance(ctx.run_fn, nn.Module) or any(\n"
        "            isinstance(m, nn.modules.dropout._DropoutNd) for m in ctx.run_fn.modules())\n"
        "        with torch.random.fork_rng(devices=ctx.devices, enabled=random):\n"
        "            if random:\n                torch.set_rng_state(ctx.cpu_state)\n")))


BACKWARD = "        torch.autograd.backward(output, grad_output)\n"


# CheckpointFunction: the fresh leaves kept on ctx "to read their gradients later": each holds
# its .grad (an input's worth of bytes) for as long as the caller holds the output.
WRONG_02_LEAVES_ON_CTX = edit(SOLUTION, (BACKWARD, "        ctx.leaves = args\n" + BACKWARD))


# CheckpointFunction: the gradients it returns also kept on ctx.
WRONG_03_GRADS_ON_CTX = edit(
    SOLUTION, ("        return (None, *(a.grad", "        ctx.grads = [a.grad if isinstance("
               "a, torch.Tensor) else None for a in args]\n        return (None, *(a.grad"))


# CheckpointFunction: run_fn dropped from ctx once backward is done, "to free it early": a second
# backward (retain_graph=True) calls None.
WRONG_04_DROPS_RUN_FN = edit(SOLUTION, (BACKWARD, BACKWARD + "        ctx.run_fn = None\n"))


# CheckpointFunction: the graph walk for a function, but a module's run_fn.parameters() all
# listed for autograd.grad, the frozen one too.
OTHERS = "        others = [v for v in _leaves(out) if not any(v is m for m in mine)]\n"


WRONG_06_ALL_MODULE_PARAMS = "from torch import nn\n" + edit(GRAPH_WALK, (OTHERS, (
    "        others = (list(ctx.run_fn.parameters()) if isinstance(ctx.run_fn, nn.Module)\n"
    "                  else [v for v in _leaves(out) if not any(v is m for m in mine)])\n")))


def _upcast(halves: str) -> str:
    return edit(SOLUTION, (FRESH, "lambda t: (t.detach().float() if t.dtype in " + halves
                           + " else t.detach()).requires_grad_(t.requires_grad)"))


# CheckpointFunction (review 58, w8): half-precision leaves recomputed in float32 "for a more
# accurate backward": the gradients are not a plain run's, and a half Linear refuses the mix.
WRONG_01_HALVES_TO_FLOAT32 = _upcast("(torch.float16, torch.bfloat16)")


# CheckpointFunction: float16 only recomputed in float32 ("float16 overflows, bfloat16 does not").
WRONG_02_FLOAT16_TO_FLOAT32 = _upcast("(torch.float16,)")


HINT = "when every parameter of run_fn is frozen (requires_grad=False) and the only tensor"


# PyTorch's own reentrant checkpoint (catalogued as unusual before review 58c)
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


# review 58c, u4: detached aliases saved, fresh leaves from ctx.needs_input_grad, the random
# state replayed only when run_fn drew from it
UNUSUAL_01_REPLAY_WHEN_DREW = """
import contextlib


class CheckpointFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, run_fn, *args):
        ctx.run_fn = run_fn
        ctx.is_tensor = [isinstance(a, torch.Tensor) for a in args]
        ctx.others = [None if t else a for t, a in zip(ctx.is_tensor, args)]
        tensors = [a for a in args if isinstance(a, torch.Tensor)]
        ctx.save_for_backward(*[t.detach() for t in tensors])
        ctx.devices = sorted({t.get_device() for t in tensors if t.is_cuda})
        ctx.cpu_state = torch.get_rng_state()
        ctx.cuda_states = [torch.cuda.get_rng_state(d) for d in ctx.devices]
        out = run_fn(*args)
        ctx.drew = not torch.equal(ctx.cpu_state, torch.get_rng_state()) or bool(ctx.devices)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        saved = iter(ctx.saved_tensors)
        args = []
        for t, other in zip(ctx.is_tensor, ctx.others):
            if t:
                tensor = next(saved)
                other = tensor.detach().requires_grad_(ctx.needs_input_grad[1 + len(args)])
            args.append(other)
        with (torch.random.fork_rng(devices=ctx.devices) if ctx.drew
              else contextlib.nullcontext()):
            if ctx.drew:
                torch.set_rng_state(ctx.cpu_state)
            for d, s in zip(ctx.devices, ctx.cuda_states):
                torch.cuda.set_rng_state(s, d)
            with torch.enable_grad():
                output = ctx.run_fn(*args)
        if output.requires_grad:
            torch.autograd.backward(output, grad_output)
        return (None, *(a.grad if isinstance(a, torch.Tensor) else None for a in args))
"""


WRONG_02_REPLAY_WHEN_DREW_UNGUARDED = edit(UNUSUAL_01_REPLAY_WHEN_DREW, (GUARDED, BACKWARD_ANSWERS))


# review 59, u1: fresh leaves from ctx.needs_input_grad, the random states put back by hand in
# a try/finally instead of fork_rng (the reviewer's did the CPU's; the CUDA devices' too here)
UNUSUAL_01_MANUAL_RNG = edit(SOLUTION_ANSWERS, (RESTORE, """\
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


ZERO_HINT = "skipped the recomputation when the incoming gradient is all zero"


START = "    def backward(ctx, grad_output):\n"


# review 59, w17: zeros for the inputs, no recomputation, when grad_output is all zero
WRONG_01_ZERO_SKIP = edit(SOLUTION_ANSWERS, (START, START + """\
        if not grad_output.any():  # nothing flows back: skip the recomputation
            return (None, *(torch.zeros_like(a) if isinstance(a, torch.Tensor)
                            and a.requires_grad else None for a in _arguments(ctx, lambda t: t)))
"""))


# its twin: None for every input too ("nothing to add")
WRONG_02_ZERO_NONE = edit(SOLUTION_ANSWERS, (START, START + """\
        if torch.count_nonzero(grad_output) == 0:
            return (None,) * (1 + len(ctx.is_tensor))
"""))


CLASS_HINT = "a class attribute is shared by every call"


# review 58c's u4 with its "did run_fn draw" flag moved off ctx: on the class, in a global
WRONG_07_DREW_ON_CLASS = edit(UNUSUAL_01_REPLAY_WHEN_DREW, ("ctx.drew", "CheckpointFunction.drew"))


WRONG_08_DREW_GLOBAL = edit(UNUSUAL_01_REPLAY_WHEN_DREW, (
    "        ctx.drew = ", "        global _DREW\n        _DREW = "), ("ctx.drew", "_DREW"))


SHARED_HINT = "right for each call alone but not for two calls in one graph"


# review 59, w4: autograd.grad over the leaves and, when run_fn is a Module, its parameters,
# their .grad added to by hand: a closure's parameters get nothing
WRONG_09_MODULE_PARAMETERS = edit(SOLUTION_ANSWERS, (GUARDED, """\
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


# review 59b, w18: the random state in a global dict keyed by id(run_fn), shared by every call
# of one block (a tied block checkpointed twice in one graph)
WRONG_01_DICT_BY_RUN_FN = "_STATES = {}\n" + edit(
    SOLUTION_ANSWERS,
    ("ctx.cpu_state = torch.get_rng_state()", "_STATES[id(run_fn)] = torch.get_rng_state()"),
    ("torch.set_rng_state(ctx.cpu_state)", "torch.set_rng_state(_STATES[id(ctx.run_fn)])"))


# review 59b, w4: zeros (not None) for a tensor argument that does not require grad, "always a
# tensor, safer"
WRONG_03_ZEROS_FOR_UNASKED = edit(SOLUTION_ANSWERS, (
    RETURN,
    "        return (None, *((a.grad if a.requires_grad else torch.zeros_like(a))\n"
    "                        if isinstance(a, torch.Tensor) and a.is_floating_point() else\n"
    "                        a.grad if isinstance(a, torch.Tensor) else None for a in args))"))


# review 59c, u1: a slot object marks each tensor's place; leaves from needs_input_grad
UNUSUAL_01_SLOTS = '''import torch
from torch import nn


class _Slot:  # where a tensor sat among the arguments
    def __init__(self, i):
        self.i = i


class CheckpointFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, run_fn, *args):
        ctx.fn = run_fn
        tensors, layout = [], []
        for a in args:
            if torch.is_tensor(a):
                layout.append(_Slot(len(tensors)))
                tensors.append(a)
            else:
                layout.append(a)
        ctx.layout = layout
        ctx.save_for_backward(*tensors)
        ctx.state = torch.random.get_rng_state()
        return run_fn(*args)

    @staticmethod
    def backward(ctx, grad_output):
        saved, need = ctx.saved_tensors, ctx.needs_input_grad[1:]
        leaves, call = {}, []
        for pos, item in enumerate(ctx.layout):
            if isinstance(item, _Slot):
                leaf = saved[item.i].detach().requires_grad_(need[pos])
                leaves[pos] = leaf
                call.append(leaf)
            else:
                call.append(item)
        caller = torch.random.get_rng_state()
        torch.random.set_rng_state(ctx.state)
        try:
            with torch.enable_grad():
                out = ctx.fn(*call)
        finally:
            torch.random.set_rng_state(caller)
        if out.requires_grad:
            out.backward(grad_output)
        grads = [None] * len(ctx.layout)
        for pos, leaf in leaves.items():
            grads[pos] = leaf.grad if need[pos] else None
        return (None, *grads)
'''


# review 59c, c36: zeros for an argument run_fn ignores (the lesson's dummy), "always a tensor"
WRONG_01_ZEROS_FOR_UNUSED = edit(SOLUTION_ANSWERS, (RETURN, (
    "        return (None, *((a.grad if a.grad is not None else torch.zeros_like(a))\n"
    "                        if isinstance(a, torch.Tensor) and a.requires_grad else None\n"
    "                        for a in args))")))


# review 59c, c17: every gradient returned in grad_output's dtype
WRONG_02_OUTPUT_DTYPE = edit(SOLUTION_ANSWERS, (RETURN, (
    "        return (None, *(a.grad.to(grad_output.dtype) if isinstance(a, torch.Tensor)\n"
    "                        and a.grad is not None else None for a in args))")))


# its 16-bit twin: the cast only under a half-precision output ("match the output's precision")
WRONG_03_HALF_OUTPUT_DTYPE = edit(WRONG_02_OUTPUT_DTYPE, (
    "and a.grad is not None else None", "and a.grad is not None and grad_output.dtype in\n"
    "                        (torch.bfloat16, torch.float16) else a.grad if\n"
    "                        isinstance(a, torch.Tensor) else None"))


MISTAKES += [
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
    Mistake("CheckpointFunction", "fresh leaves require grad for every float tensor",
            "returned a gradient for b, which does not require grad", WRONG_01_EVERY_FLOAT_LEAF),
    Mistake("CheckpointFunction", "the CPU random state kept on the class",
            "keep it on ctx (ctx.cpu_state = ...), one per call", WRONG_02_STATE_ON_CLASS),
    Mistake("CheckpointFunction", "one fresh leaf per distinct saved tensor (a memo by id)",
            "returned x's whole gradient for each of the two positions",
            WRONG_01_ONE_LEAF_PER_TENSOR),
    Mistake("CheckpointFunction", "recomputes on float32 copies of the saved tensors",
            "recomputed run_fn on float32 copies", WRONG_02_RECOMPUTES_IN_FLOAT32),
    Mistake("CheckpointFunction", "fresh leaves cast to grad_output's dtype",
            "float32 is grad_output's dtype", WRONG_01_LEAVES_IN_GRAD_OUTPUT_DTYPE),
    Mistake("CheckpointFunction", "fresh leaves upcast to float64",
            "recomputed run_fn on float64 copies of arguments that were float32",
            WRONG_02_LEAVES_UPCAST),
    Mistake("CheckpointFunction", "fresh leaves built once, cached on ctx for a second backward",
            "backward reused fresh leaves kept on ctx", WRONG_01_CACHED_LEAVES),
    Mistake("CheckpointFunction", "saves the tensor arguments' .data",
            "changed in place after forward", WRONG_02_SAVES_DATA),
    Mistake("CheckpointFunction", "restores the CPU random state only, never a CUDA device's",
            "the CPU random state was restored, but not the CUDA device's",
            WRONG_01_CPU_STATE_ONLY, gpu=True),
    Mistake("CheckpointFunction", "the rebuilt graph kept on ctx for a second backward",
            "a tensor of the graph it rebuilt", WRONG_02_KEEPS_REBUILT_GRAPH),
    Mistake("CheckpointFunction", "restores the random state only when run_fn holds an "
            "nn.Dropout", "does your backward decide whether to restore the random state",
            WRONG_01_ONLY_FOR_DROPOUT),
    Mistake("CheckpointFunction", "the fresh leaves (and so their .grad) kept on ctx",
            "a fresh leaf of the graph it rebuilt", WRONG_02_LEAVES_ON_CTX),
    Mistake("CheckpointFunction", "the gradients it returns kept on ctx as well",
            "left ctx.grads[0] on ctx, a tensor it computed", WRONG_03_GRADS_ON_CTX),
    Mistake("CheckpointFunction", "run_fn dropped from ctx by the first backward "
            "(ctx.run_fn = None)", "raised TypeError when it ran a second time on one graph",
            WRONG_04_DROPS_RUN_FN),
    Mistake("CheckpointFunction", "autograd.grad over a module run_fn's every parameter, "
            "frozen ones too", "when run_fn holds a frozen parameter", WRONG_06_ALL_MODULE_PARAMS),
    Mistake("CheckpointFunction", "fresh leaves of bfloat16 and float16 arguments cast to float32",
            "recomputed run_fn on float32 copies of arguments that were bfloat16",
            WRONG_01_HALVES_TO_FLOAT32),
    Mistake("CheckpointFunction", "fresh leaves of float16 arguments cast to float32",
            "recomputed run_fn on float32 copies of arguments that were float16",
            WRONG_02_FLOAT16_TO_FLOAT32),
    Mistake("CheckpointFunction", "backward through a rebuilt output that requires no grad (a "
            "frozen block, a dummy input)", HINT, SOLUTION),
    Mistake("CheckpointFunction", "PyTorch's reentrant CheckpointFunction, preserve_rng_state=True",
            HINT, REENTRANT),
    Mistake("CheckpointFunction", "random state replayed only when run_fn drew, backward always "
            "run", HINT, WRONG_02_REPLAY_WHEN_DREW_UNGUARDED),
    Mistake("CheckpointFunction", "returns zeros without recomputing when grad_output is all "
            "zero", ZERO_HINT, WRONG_01_ZERO_SKIP),
    Mistake("CheckpointFunction", "returns None for every input without recomputing when "
            "grad_output is all zero", ZERO_HINT, WRONG_02_ZERO_NONE),
    Mistake("CheckpointFunction", "the 'run_fn drew' flag kept on the class", CLASS_HINT,
            WRONG_07_DREW_ON_CLASS),
    Mistake("CheckpointFunction", "the 'run_fn drew' flag kept in a global", SHARED_HINT,
            WRONG_08_DREW_GLOBAL),
    Mistake("CheckpointFunction", "autograd.grad over the parameters of run_fn when it is a "
            "Module", "when run_fn is a plain function", WRONG_09_MODULE_PARAMETERS),
    Mistake("CheckpointFunction", "random state in a global dict keyed by id(run_fn)",
            "kept state outside ctx: _STATES in a module global", WRONG_01_DICT_BY_RUN_FN),
    Mistake("CheckpointFunction", "zeros for a float argument that does not require grad",
            "what does your backward return in", WRONG_03_ZEROS_FOR_UNASKED),
    Mistake("CheckpointFunction", "zeros for an argument run_fn ignores",
            "gave zeros to an argument run_fn ignores", WRONG_01_ZEROS_FOR_UNUSED),
    Mistake("CheckpointFunction", "gradients returned in grad_output's dtype",
            "gradient rounded to float32", WRONG_02_OUTPUT_DTYPE),
    Mistake("CheckpointFunction", "gradients cast to grad_output's dtype under a 16-bit output",
            "gradient rounded to bfloat16", WRONG_03_HALF_OUTPUT_DTYPE),
]


UNUSUAL += [
    Unusual("CheckpointFunction", "random states put back by hand in try/finally, positions as "
            "an index list, leaves from ctx.needs_input_grad", UNUSUAL_01_BY_HAND),
    Unusual("CheckpointFunction", "each distinct tensor saved once, one fresh leaf per position",
            UNUSUAL_01_SAVED_ONCE),
    Unusual("CheckpointFunction", "leaves from ctx.needs_input_grad, the random states put "
            "back by hand in try/finally", UNUSUAL_01_MANUAL_RNG),
    Unusual("CheckpointFunction", "a slot object marks each tensor's place, leaves from "
            "needs_input_grad, the caller's random state put back by hand", UNUSUAL_01_SLOTS),
]

# correct until rule 2 was graded on CheckpointFunction's own arguments (fresh review at 2c1383f9):
# each fresh leaf requires grad as the saved tensor does at backward time, as
# torch.utils.checkpoint's detach_variable does, not as ctx.needs_input_grad fixed it at forward
LATE_HINT = "returned a gradient for b when b.requires_grad_() was called after forward"
MISTAKES += [
    Mistake("CheckpointFunction", "torch.random.fork_rng with explicit CUDA states, inputs list",
            LATE_HINT,
            _checkpoint(f"        args = _arguments(ctx, {FRESH})\n" + RESTORE
                        + "        outputs = output if isinstance(output, tuple) else (output,)\n"
                        "        if output.requires_grad:\n"
                        "            torch.autograd.backward(outputs, (grad_output,))\n"
                        f"        return {GRADS}")),
    Mistake("CheckpointFunction", "non-tensor arguments in a dict by position, output.backward",
            LATE_HINT,
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
]

# review 74c, W17: backpropagates only when the rebuilt output has a grad_fn; where run_fn returns
# its argument itself (nn.Identity, a Dropout in eval mode) the output is the fresh leaf, which
# requires grad and has none, so x got no gradient
MISTAKES.append(Mistake(
    "CheckpointFunction", "backpropagates only when the rebuilt output has a grad_fn",
    "CheckpointFunction gave x no gradient when run_fn (nn.Identity()) returns its argument "
    "itself", _checkpoint(CORRECT_BACKWARD.replace(
        BACKWARD_ANSWERS, "        if output.grad_fn is not None:\n    " + BACKWARD_ANSWERS))))
