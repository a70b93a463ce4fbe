"""Lesson 05: CheckpointFunction answers that keep a call's state off ctx where one chain of
checkpoints never shows it (review 05c): on run_fn, which a shared (weight-tied) block
checkpointed twice in one graph shares, or on a stack on the class or in a global, popped in
backward, which two losses backpropagated in the order of their forwards pop for the wrong
call."""

from .. import Mistake
from .answers import BACKWARD, CORRECT_BACKWARD, FORWARD, GUARDED, _checkpoint

MISTAKES = [
    # the reviewer's W12: run_fn put in training mode before the recomputation (review at
    # 23ff3de8: passed; an eval-mode block with dropout gets another gradient, and stays in
    # training mode)
    Mistake("CheckpointFunction", "run_fn.train() in backward before the recomputation",
            "CheckpointFunction left run_fn in training mode",
            _checkpoint("        if isinstance(ctx.run_fn, torch.nn.Module):\n"
                        "            ctx.run_fn.train()\n"
                        + CORRECT_BACKWARD.replace(BACKWARD, GUARDED))),
    # review 05c: the random state kept on run_fn (as the lesson's SameMask keeps its mask on
    # its module): one dropout block checkpointed twice in one graph (tied weights) shares it
    Mistake("CheckpointFunction", "random state kept on run_fn (run_fn._ckpt_rng_state)",
            "keeps its state on run_fn (run_fn._ckpt_rng_state), not on ctx", """

import torch

class CheckpointFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, run_fn, *args):
        ctx.run_fn = run_fn
        ctx.is_tensor = [isinstance(a, torch.Tensor) for a in args]
        ctx.others = [None if t else a for t, a in zip(ctx.is_tensor, args)]
        ctx.save_for_backward(*[a for a in args if isinstance(a, torch.Tensor)])
        run_fn._ckpt_rng_state = torch.get_rng_state()      # <-- on run_fn, not on ctx
        return run_fn(*args)

    @staticmethod
    def backward(ctx, grad_output):
        saved = list(ctx.saved_tensors)
        args, i = [], 0
        for t, o in zip(ctx.is_tensor, ctx.others):
            if t:
                s = saved[i]; i += 1
                o = s.detach().requires_grad_(s.requires_grad)
            args.append(o)
        with torch.random.fork_rng(devices=[]):
            torch.set_rng_state(ctx.run_fn._ckpt_rng_state)
            with torch.enable_grad():
                out = ctx.run_fn(*args)
        torch.autograd.backward(out, grad_output)
        return (None, *(a.grad if isinstance(a, torch.Tensor) else None for a in args))
"""),
    # review 05c: random states pushed on a list on the class and popped in backward: wrong
    # when backwards run in the order of the forwards (two losses); the list is empty again
    # after backward, so no class attribute is set or left changed
    Mistake("CheckpointFunction", "random states on a stack kept on the class",
            "changes what is in CheckpointFunction._states",
            """

import torch

class CheckpointFunction(torch.autograd.Function):
    _states = []

    @staticmethod
    def forward(ctx, run_fn, *args):
        ctx.run_fn = run_fn
        ctx.is_tensor = [isinstance(a, torch.Tensor) for a in args]
        ctx.others = [None if t else a for t, a in zip(ctx.is_tensor, args)]
        ctx.save_for_backward(*[a for a in args if isinstance(a, torch.Tensor)])
        CheckpointFunction._states.append(torch.get_rng_state())
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
            torch.set_rng_state(CheckpointFunction._states.pop())
            with torch.enable_grad():
                out = ctx.run_fn(*args)
        torch.autograd.backward(out, grad_output)
        return (None, *(a.grad if isinstance(a, torch.Tensor) else None for a in args))
"""),
    # the same stack in a global list
    Mistake("CheckpointFunction", "random states on a stack in a global list",
            "kept state outside ctx: _states in a module global",
            "\n_states = []\n" + _checkpoint(
                CORRECT_BACKWARD.replace("torch.set_rng_state(ctx.cpu_state)",
                                         "torch.set_rng_state(_states.pop())"),
                FORWARD.replace("ctx.cpu_state = torch.get_rng_state()",
                                "_states.append(torch.get_rng_state())"))),
    # review 05e: the random state kept only when run_fn is a module holding an nn.Dropout
    # (a closure or F.dropout then recomputes on a fresh mask): once a generic "gradient for a
    # is wrong" in the two-calls case; now the random-state probe also runs a function calling
    # the block
    Mistake("CheckpointFunction", "random state kept only when run_fn is a module with dropout",
            "the recomputation drew new random numbers, from the caller's current state", """

import torch
from torch import nn

class CheckpointFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, run_fn, *args):
        ctx.run_fn = run_fn
        ctx.is_tensor = [torch.is_tensor(a) for a in args]
        ctx.others = [None if t else a for t, a in zip(ctx.is_tensor, args)]
        ctx.save_for_backward(*[a for a in args if torch.is_tensor(a)])
        random = isinstance(run_fn, nn.Module) and any(
            isinstance(m, nn.modules.dropout._DropoutNd) for m in run_fn.modules())
        ctx.cpu_state = torch.get_rng_state() if random else None
        return run_fn(*args)

    @staticmethod
    def backward(ctx, grad_output):
        saved = iter(ctx.saved_tensors)
        args = []
        for is_t, o in zip(ctx.is_tensor, ctx.others):
            if is_t:
                t = next(saved)
                o = t.detach().requires_grad_(t.requires_grad)
            args.append(o)
        with torch.random.fork_rng(devices=[]):
            if ctx.cpu_state is not None:
                torch.set_rng_state(ctx.cpu_state)
            with torch.enable_grad():
                out = ctx.run_fn(*args)
        torch.autograd.backward(out, grad_output)
        return (None, *(a.grad if torch.is_tensor(a) else None for a in args))
"""),
]
