"""Lesson 05: the answers of review 58c (a third fresh review) not already catalogued in the same
form. The reviewer's one answer that passed both checks while breaking a clause was the lesson's
own CheckpointFunction: with every parameter of run_fn frozen and the only argument that requires
grad a dummy run_fn ignores (the lesson's cure for a first block on data), the rebuilt output
requires no grad and backward raised ("element 0 of tensors does not require grad"), where the
contract says backward still runs. The grader now runs that step. Its twins: PyTorch's own
reentrant CheckpointFunction (which raises "none of output has requires_grad=True" there; it was
catalogued as unusual) and the reviewer's u4 (the random state replayed only when run_fn drew,
fresh leaves from ctx.needs_input_grad) without the guard. The
catalogue's other CheckpointFunction answers now skip their backward when the rebuilt output
requires no grad."""

from .. import Mistake, edit
from .answers import BACKWARD, CORRECT_BACKWARD, GUARDED, _checkpoint

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

# the lesson's solution before review 58c: backward through the rebuilt output, always
WRONG_01_UNGUARDED = _checkpoint(CORRECT_BACKWARD)

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
WRONG_02_REPLAY_WHEN_DREW_UNGUARDED = edit(UNUSUAL_01_REPLAY_WHEN_DREW, (GUARDED, BACKWARD))

# not catalogued as unusual (its guarded form passes): its `drew` flag moved off ctx (to the
# class or a global) survives the battery, whose two calls in one graph both draw
UNUSUAL: list = []

MISTAKES = [
    Mistake("CheckpointFunction", "backward through a rebuilt output that requires no grad (a "
            "frozen block, a dummy input)", HINT, WRONG_01_UNGUARDED),
    Mistake("CheckpointFunction", "PyTorch's reentrant CheckpointFunction, preserve_rng_state=True",
            HINT, REENTRANT),
    Mistake("CheckpointFunction", "random state replayed only when run_fn drew, backward always "
            "run", HINT, WRONG_02_REPLAY_WHEN_DREW_UNGUARDED),
]
