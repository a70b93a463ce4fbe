"""Why a checkpoint's recomputation drew the mask that comes after the forward's: read from the
random state as each call of run_fn began (lesson 05's check_random_state)."""

import torch

HEAD = "with dropout inside run_fn the recomputation drew the mask that comes after the forward's: "


def _same(a, b) -> bool:
    return all(torch.equal(p, q) for p, q in zip(a, b))


def late_mask(starts, n_forward: int, after_run_fn) -> str:
    """The hint, from the states at which each call of run_fn began (forward's calls first) and
    the state forward's run_fn left: it names a cause only where those states prove it."""
    again = starts[n_forward:]
    if n_forward == 1 and again and _same(again[0], after_run_fn):
        return HEAD + ("backward's run_fn began from the random state forward's run_fn left, so "
                       "the state was recorded after run_fn(*args) ran; record it before")
    if n_forward == 1 and len(again) > 1 and _same(again[0], starts[0]):
        return HEAD + (f"backward called run_fn {len(again)} times, and the first call, from the "
                       "restored state, spent forward's mask; recompute once, straight after "
                       "restoring")
    return HEAD + ("either the state was recorded after run_fn(*args) ran, or backward drew "
                   "random numbers (another run_fn call?) between restoring it and recomputing")
