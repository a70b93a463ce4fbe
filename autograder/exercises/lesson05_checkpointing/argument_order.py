"""Lesson 05, CheckpointFunction: run_fn's arguments as each call received them. A recomputation
that hands run_fn forward's arguments in another order (the tensors first, the saved tensors
reversed) fails later with whatever the shuffled arguments make of run_fn (an error of its own,
a gradient for a float); the recorded calls show the cause itself, and it is named first."""

import torch

from ...errors import GradingError


def recording_arguments(run_fn):
    """run_fn, recording the arguments of each positional call (tensors detached), and the
    list of those calls."""
    calls: list[tuple] = []

    def recorded(*args):
        calls.append(tuple(a.detach().clone() if torch.is_tensor(a) else a for a in args))
        return run_fn(*args)

    return recorded, calls


def _same(a, b) -> bool:
    if torch.is_tensor(a) != torch.is_tensor(b):
        return False
    if not torch.is_tensor(a):
        return type(a) is type(b) and a == b
    return (a.shape == b.shape and a.dtype.is_floating_point == b.dtype.is_floating_point
            and torch.equal(a.double().cpu(), b.double().cpu()))


def _permutation(first: tuple, later: tuple) -> list[int] | None:
    """For each position of ``later``, the position of ``first`` holding the same argument;
    None where ``later`` is not ``first`` reordered."""
    if len(first) != len(later):
        return None
    left, where = list(range(len(first))), []
    for value in later:
        match = next((i for i in left if _same(first[i], value)), None)
        if match is None:
            return None
        left.remove(match)
        where.append(match)
    return where


def name_arguments_out_of_order(calls: list[tuple], names: list[str], error) -> None:
    """Raise the cause when a later call of run_fn (the recomputation) got the first call's
    arguments (the reference's, in the caller's order) in another order."""
    if len(calls) < 2:
        return
    first = calls[0]
    for later in calls[1:]:
        where = _permutation(first, later)
        if where is None or where == list(range(len(first))):
            continue
        if all(_same(first[i], first[j]) for i, j in enumerate(where)):
            continue  # equal arguments swapped: no call can tell them apart
        raise GradingError(
            "backward re-ran run_fn with forward's arguments in another order: forward called "
            f"run_fn({', '.join(names)}), the recomputation run_fn("
            f"{', '.join(names[j] for j in where)}); each argument goes back in its own "
            "position, so keep where each tensor sat among the others", str(error),
            mistake="CheckpointFunction/arguments-out-of-order") from error
