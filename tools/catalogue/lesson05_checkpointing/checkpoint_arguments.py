"""Lesson 05: CheckpointFunction answers about how forward keeps its arguments: a None among
them, a tensor hidden in a partial or a closure on ctx, a copy made by .contiguous(), and the
random state put back by hand (review 05b)."""

from .. import Mistake, Unusual
from .answers import CORRECT_BACKWARD, FORWARD, FRESH, GRADS, RESTORE, _checkpoint

UNUSUAL = [
    # the random state put back by hand (no fork_rng), a sentinel marking the tensor slots (a
    # None argument stays None), fresh leaves from ctx.needs_input_grad (review 05b)
    Unusual("CheckpointFunction", "random state saved and put back by hand, a sentinel for the "
            "tensor slots", """
_TENSOR = object()


class CheckpointFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, run_fn, *args):
        ctx.run_fn = run_fn
        ctx.layout = tuple(_TENSOR if torch.is_tensor(a) else a for a in args)
        ctx.save_for_backward(*(a for a in args if torch.is_tensor(a)))
        ctx.cuda = sorted({a.device.index for a in args if torch.is_tensor(a) and a.is_cuda})
        ctx.rng = (torch.get_rng_state(), [torch.cuda.get_rng_state(d) for d in ctx.cuda])
        return run_fn(*args)

    @staticmethod
    def backward(ctx, grad_output):
        tensors = iter(ctx.saved_tensors)
        args = [next(tensors).detach().requires_grad_(ctx.needs_input_grad[i + 1])
                if slot is _TENSOR else slot for i, slot in enumerate(ctx.layout)]
        caller = (torch.get_rng_state(), [torch.cuda.get_rng_state(d) for d in ctx.cuda])
        torch.set_rng_state(ctx.rng[0])
        for d, s in zip(ctx.cuda, ctx.rng[1]):
            torch.cuda.set_rng_state(s, d)
        try:
            with torch.enable_grad():
                output = ctx.run_fn(*args)
        finally:
            torch.set_rng_state(caller[0])
            for d, s in zip(ctx.cuda, caller[1]):
                torch.cuda.set_rng_state(s, d)
        if output.requires_grad:
            output.backward(grad_output)
        return (None, *(a.grad if torch.is_tensor(a) and a.requires_grad else None for a in args))
"""),
]

MISTAKES = [
    # None marks the tensor slots in ctx.others: a None argument before a tensor takes the
    # tensor's place (review 05b: the contract names None among the arguments)
    Mistake("CheckpointFunction", "marks the tensor slots with None",
            "CheckpointFunction raised TypeError when an argument is None", """

class CheckpointFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, run_fn, *args):
        ctx.run_fn = run_fn
        ctx.others = [None if torch.is_tensor(a) else a for a in args]  # None: a tensor was here
        ctx.save_for_backward(*[a for a in args if torch.is_tensor(a)])
        ctx.state = torch.get_rng_state()
        return run_fn(*args)

    @staticmethod
    def backward(ctx, grad_output):
        saved = iter(ctx.saved_tensors)
        args = [next(saved, None) if o is None else o for o in ctx.others]
        args = [a.detach().requires_grad_(a.requires_grad) if torch.is_tensor(a) else a
                for a in args]
        with torch.random.fork_rng(devices=[]):
            torch.set_rng_state(ctx.state)
            with torch.enable_grad():
                out = ctx.run_fn(*args)
        torch.autograd.backward(out, grad_output)
        return (None, *(a.grad if torch.is_tensor(a) else None for a in args))
"""),
    # the whole call on ctx as a functools.partial: its tensors escape autograd's version
    # check, so an argument changed in place after forward gives a silently wrong gradient
    # (review 05b: reachable follows partials, closures and plain objects)
    Mistake("CheckpointFunction", "the call kept on ctx as functools.partial(run_fn, *args)",
            "CheckpointFunction stores a tensor as ctx.call.args[0]", """
import functools


class CheckpointFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, run_fn, *args):
        ctx.call = functools.partial(run_fn, *args)  # everything needed to replay the call
        ctx.state = torch.get_rng_state()
        return run_fn(*args)

    @staticmethod
    def backward(ctx, grad_output):
        args = [a.detach().requires_grad_(a.requires_grad) if torch.is_tensor(a) else a
                for a in ctx.call.args]
        with torch.random.fork_rng(devices=[]):
            torch.set_rng_state(ctx.state)
            with torch.enable_grad():
                out = ctx.call.func(*args)
        torch.autograd.backward(out, grad_output)
        return (None, *(a.grad if torch.is_tensor(a) else None for a in args))
"""),
    # the same, hidden in a closure: a function defined in forward that returns the arguments
    Mistake("CheckpointFunction", "the arguments kept on ctx in a closure",
            "CheckpointFunction stores a tensor as ctx.arguments's closure variable args[0]",
            _checkpoint(CORRECT_BACKWARD, FORWARD.replace(
                "        return run_fn(*args)",
                "        ctx.arguments = lambda: args\n        return run_fn(*args)"))),
    # .contiguous() "so the recomputation is fast": the argument itself where it is contiguous,
    # a full copy of a transposed one (review 05b: the transposed b of the several-inputs case)
    Mistake("CheckpointFunction", "saves t.contiguous() of each tensor argument",
            "CheckpointFunction saved a copy of its argument b", _checkpoint(
                CORRECT_BACKWARD, FORWARD.replace(
                    "ctx.save_for_backward(*tensors)",
                    "ctx.save_for_backward(*[t.contiguous() for t in tensors])"))),
    # the arguments rebuilt with the tensors first, then the rest: forward's order lost (issue
    # 69: once told by its symptom, a gradient returned for the float scale)
    Mistake("CheckpointFunction", "arguments rebuilt with the tensors first, then the rest",
            "backward re-ran run_fn with forward's arguments in another order", _checkpoint(
                f"        args = [({FRESH})(t) for t in ctx.saved_tensors]\n"
                "        args += [o for t, o in zip(ctx.is_tensor, ctx.others) if not t]\n"
                + RESTORE + "        if output.requires_grad:\n"
                "            torch.autograd.backward(output, grad_output)\n"
                f"        return {GRADS}")),
    # the saved tensors taken back in reverse (issue 69: once told by the RuntimeError run_fn
    # raised on a boolean mask where a float tensor belongs)
    Mistake("CheckpointFunction", "saved tensors taken back in reverse order",
            "backward re-ran run_fn with forward's arguments in another order", _checkpoint(
                "        saved = iter(ctx.saved_tensors[::-1])\n"
                f"        args = [({FRESH})(next(saved)) if t else o\n"
                "                for t, o in zip(ctx.is_tensor, ctx.others)]\n"
                + RESTORE + "        if output.requires_grad:\n"
                "            torch.autograd.backward(output, grad_output)\n"
                f"        return {GRADS}")),
    # a fresh leaf only where ctx.needs_input_grad asks; any other argument passed to run_fn as
    # saved ("it required no grad at forward, so it links to no graph"): once the caller calls
    # b.requires_grad_() after forward, the recomputation's graph runs into b and writes b.grad,
    # which a plain run and torch's checkpoint leave None (review 80, wc12)
    Mistake("CheckpointFunction", "a fresh leaf only where needs_input_grad, the others as saved",
            "CheckpointFunction's backward wrote the caller's b.grad", _checkpoint(
                "        saved = iter(ctx.saved_tensors)\n"
                "        args = [(next(saved).detach().requires_grad_() if needs\n"
                "                 else next(saved)) if t else o\n"
                "                for t, o, needs in zip(ctx.is_tensor, ctx.others,\n"
                "                                       ctx.needs_input_grad[1:])]\n"
                + RESTORE + "        if output.requires_grad:\n"
                "            torch.autograd.backward(output, grad_output)\n"
                "        return (None, *(a.grad if needs else None\n"
                "                        for a, needs in zip(args, ctx.needs_input_grad[1:])))")),
]
