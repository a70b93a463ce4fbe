"""Lesson 05: the answers of review 59c (a fresh review after review 59b's fixes) not already
catalogued in the same form. Two passed both checks, now caught: zeros for an argument run_fn
ignores, where a plain run leaves its .grad None, and gradients returned in grad_output's dtype
(a float64 argument under a float32 output gets float32 digits; the same one step down, a float32
argument under a bfloat16 output). Two were caught under a cause they did not have, now
confirmed before named: deep copies of the caller's layers (told "segments of [] layers") and a
split cached by segments from an earlier call (told "the layers left over after n // k")."""

from .. import Mistake, Unusual, edit
from .answers import RETURN, SOLUTION as CHECKPOINT
from .checkpoint_sequential import SPLIT, _sequential

# review 59c, c36: zeros for an argument run_fn ignores (the lesson's dummy), "always a tensor"
WRONG_01_ZEROS_FOR_UNUSED = edit(CHECKPOINT, (RETURN, (
    "        return (None, *((a.grad if a.grad is not None else torch.zeros_like(a))\n"
    "                        if isinstance(a, torch.Tensor) and a.requires_grad else None\n"
    "                        for a in args))")))

# review 59c, c17: every gradient returned in grad_output's dtype
WRONG_02_OUTPUT_DTYPE = edit(CHECKPOINT, (RETURN, (
    "        return (None, *(a.grad.to(grad_output.dtype) if isinstance(a, torch.Tensor)\n"
    "                        and a.grad is not None else None for a in args))")))

# its 16-bit twin: the cast only under a half-precision output ("match the output's precision")
WRONG_03_HALF_OUTPUT_DTYPE = edit(WRONG_02_OUTPUT_DTYPE, (
    "and a.grad is not None else None", "and a.grad is not None and grad_output.dtype in\n"
    "                        (torch.bfloat16, torch.float16) else a.grad if\n"
    "                        isinstance(a, torch.Tensor) else None"))

# review 59c, s11: deep copies of the caller's layers, "to leave them as given"
WRONG_04_DEEP_COPIES = "import copy\n" + _sequential(edit(SPLIT, (
    "layers = list(layers)", "layers = copy.deepcopy(list(layers))")))

# review 59c, s7: the split cached in a module dict keyed by segments only
WRONG_05_SPLIT_BY_SEGMENTS = "_SPLIT = {}\n" + _sequential(
    "    layers = list(layers)\n    if segments not in _SPLIT:\n"
    "        size, longer = divmod(len(layers), segments)\n"
    "        _SPLIT[segments] = [size + (i < longer) for i in range(segments)]\n"
    "    start = 0\n    for n in _SPLIT[segments]:\n"
    "        x = CheckpointFunction.apply(nn.Sequential(*layers[start:start + n]), x)\n"
    "        start += n\n    return x\n")

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

UNUSUAL = [
    Unusual("CheckpointFunction", "a slot object marks each tensor's place, leaves from "
            "needs_input_grad, the caller's random state put back by hand", UNUSUAL_01_SLOTS),
]

MISTAKES = [
    Mistake("CheckpointFunction", "zeros for an argument run_fn ignores",
            "gave zeros to an argument run_fn ignores", WRONG_01_ZEROS_FOR_UNUSED),
    Mistake("CheckpointFunction", "gradients returned in grad_output's dtype",
            "gradient rounded to float32", WRONG_02_OUTPUT_DTYPE),
    Mistake("CheckpointFunction", "gradients cast to grad_output's dtype under a 16-bit output",
            "gradient rounded to bfloat16", WRONG_03_HALF_OUTPUT_DTYPE),
    Mistake("checkpoint_sequential", "deep copies of the caller's layers",
            "copies of them", WRONG_04_DEEP_COPIES),
    Mistake("checkpoint_sequential", "the split cached by segments across calls",
            "kept from an earlier call", WRONG_05_SPLIT_BY_SEGMENTS),
]
