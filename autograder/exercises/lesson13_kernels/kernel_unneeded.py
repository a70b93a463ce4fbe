"""Lesson 13: a backward kernel that stores a gradient nobody asked for, seen in Triton's
interpreter. With one input alone requiring grad, the distinct addresses the backward's kernels
store to are counted: an elementwise backward (silu_mul) that skips the other gradient stores
one element per element of the needed one, and one that stores both stores twice as many."""

from contextlib import contextmanager

import numpy as np
import torch

from ...errors import GradingError
from ...function_contract import rule_reference
from .kernel_interpreter import interpreting


@contextmanager
def _stored_addresses():
    """The set of addresses every masked store inside the block wrote (its on lanes)."""
    from triton.runtime import interpreter

    builder = interpreter.InterpreterBuilder
    original, stored = builder.create_masked_store, set()

    def masked_store(self, ptrs, value, mask, *rest):
        on = np.asarray(mask.data).astype(bool)
        addresses = np.asarray(ptrs.data)
        stored.update(np.unique(addresses[on] if on.shape else addresses.reshape(-1)).tolist())
        return original(self, ptrs, value, mask, *rest)

    builder.create_masked_store = masked_store
    try:
        yield stored
    finally:
        builder.create_masked_store = original


def check_unneeded_not_stored(name: str, call, args: dict, names: tuple[str, str]) -> None:
    """With each of the two inputs in ``names`` alone requiring grad, the backward's kernels
    store no more elements than the needed input's gradient has (interpreter only)."""
    if not interpreting():
        return
    for wanted, other in (names, names[::-1]):
        leaves = {k: v.detach().clone().requires_grad_(k == wanted) for k, v in args.items()}
        try:
            output = call(*leaves.values())
            with _stored_addresses() as stored:
                torch.autograd.grad(output, leaves[wanted], torch.ones_like(output))
        except Exception:  # noqa: BLE001 -- a probe: the battery's own checks name a failure
            return
        needed = leaves[wanted].numel()
        if len(stored) <= needed:
            continue
        dtype = str(leaves[wanted].dtype).removeprefix("torch.")
        shape = tuple(leaves[wanted].shape)
        what = (f"a gradient for {other}, which needs none" if len(stored) == 2 * needed
                else f"more than {wanted}'s gradient")
        raise GradingError(
            f"{name}'s backward kernel stored {what}: with only {wanted} requiring grad "
            f"({dtype} {', '.join(names)} of shape {shape}), its kernels stored {len(stored)} "
            f"elements, and {wanted}'s gradient has {needed}. The work for an input whose "
            f"ctx.needs_input_grad entry is False is thrown away {rule_reference('gradients')}",
            mistake=f"{name}/stores-unneeded-gradient")
