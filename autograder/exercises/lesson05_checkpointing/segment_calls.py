"""Lesson 05, checkpoint_sequential: which layers ran, when and with grad on or off, read by
wrapping each layer's forward (a module hook misses ``layer.forward(h)``), and the layers that
ran outside every checkpoint."""

from contextlib import contextmanager

import torch
from torch import nn

from ...errors import GradingError


@contextmanager
def _recording_calls(layers):
    """Record each layer's (modules only) calls while the block runs, as (index, grad enabled):
    each instance's ``forward`` is wrapped, so ``layer(h)`` and ``layer.forward(h)`` both count
    (a module forward hook misses the latter); put back on exit."""
    calls: list[tuple[int, bool]] = []
    wrapped = []
    for i, layer in enumerate(layers):
        if isinstance(layer, nn.Module) and "forward" not in vars(layer):
            def forward(*args, _i=i, _forward=layer.forward, **kwargs):
                calls.append((_i, torch.is_grad_enabled()))
                return _forward(*args, **kwargs)
            layer.forward = forward
            wrapped.append(layer)
    try:
        yield calls
    finally:
        for layer in wrapped:
            vars(layer).pop("forward", None)


def _outside_checkpoints(forward_calls, recomputed: list[int]) -> list[int]:
    """The layers that ran in forward under grad (outside every CheckpointFunction, whose forward
    runs with grad off) and never ran again in backward."""
    return sorted({i for i, grad in forward_calls if grad} - set(recomputed))


def check_outside_checkpoints(where: str, n: int, segments: int, checkpointed: int,
                              outside: list[int]) -> None:
    """Only the last group may run without a checkpoint: any other layer run in forward outside
    every checkpoint (and so never recomputed) is named."""
    if not outside or checkpointed >= segments - 1 and outside == list(range(outside[0], n)):
        return
    if checkpointed == segments - 1 and outside == list(range(len(outside))):
        return  # the first group run plainly: check_segment_sizes names it
    many = len(outside) > 1
    raise GradingError(
        f"{where}: layer{'s' if many else ''} {_spans(outside)} ran in forward outside every "
        f"checkpoint (with grad on, never recomputed in backward), beside {checkpointed} "
        f"checkpointed segment{'s' if checkpointed != 1 else ''}: "
        + ("with one segment, its layers run all inside CheckpointFunction.apply (or, the group "
           "being the last, all without it), never some of each" if segments == 1 else
           f"of the {segments} groups only the last may run without CheckpointFunction.apply; "
           "every layer of every other group, however short the group, runs inside one"),
        mistake="checkpoint_sequential/runs-outside-checkpoints")


def runs_of(indices: list[int]) -> list[list[int]]:
    """The indices cut wherever the next one is not one more than the last: [0, 1, 2, 5, 3] as
    [[0, 1, 2], [5], [3]]."""
    runs: list[list[int]] = []
    for i in indices:
        if runs and i == runs[-1][-1] + 1:
            runs[-1].append(i)
        else:
            runs.append([i])
    return runs


def _spans(indices: list[int]) -> str:
    """0, 1, 2, 5 as "0 to 2 and 5"."""
    runs = runs_of(indices)
    parts = [f"{r[0]} to {r[-1]}" if len(r) > 2 else " and ".join(map(str, r)) for r in runs]
    return ", ".join(parts[:-1]) + (" and " if len(parts) > 1 else "") + parts[-1]


def check_runs_once(where: str, n: int, forward_calls) -> None:
    """Every layer runs once in forward, however it runs: a layer run again, even under
    torch.no_grad() (a "shape check" or "warm-up" run of the stack), is named; its dropout would
    draw a mask the plain stack never draws, and it costs a forward."""
    counts = [sum(1 for i, _ in forward_calls if i == k) for k in range(n)]
    twice = [k for k, count in enumerate(counts) if count > 1]
    if not twice:
        return
    quiet = sorted({i for i, grad in forward_calls if not grad and i in twice})
    raise GradingError(
        f"{where} ran layer{'s' if len(twice) > 1 else ''} {_spans(twice)} more than once in "
        f"forward ({max(counts)} times"
        + (f", {'all' if quiet == twice else 'some'} under torch.no_grad()" if quiet else "")
        + "): every layer runs once, in order, inside its group's checkpoint; an extra run costs "
        "a forward and draws random numbers the plain stack never draws (another dropout mask "
        "for every layer after it), so take it out",
        mistake="checkpoint_sequential/runs-layers-twice")


def check_runs_in_order(where: str, n: int, forward_calls) -> None:
    """Every layer ran once in forward (check_runs_once): in the order the stack gives them, or
    the groups ran out of order, which the recorded calls show directly (the wrong output
    that follows is its symptom)."""
    order = [i for i, _ in forward_calls]
    if sorted(order) != list(range(n)) or order == list(range(n)):
        return
    late = next(j for j in range(1, n) if order[j] < order[j - 1])
    raise GradingError(
        f"{where} ran its groups out of order: in forward the layers ran in the order "
        f"{', '.join(map(str, order))}, so layer {order[late]} ran after layer "
        f"{order[late - 1]}; each group runs on the output of the group before it, from layer 0 "
        f"to layer {n - 1}, as the plain stack does",
        mistake="checkpoint_sequential/groups-out-of-order")
