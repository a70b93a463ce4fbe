"""Why a checkpoint's recomputation drew the mask that comes after the forward's: read from the
random state as each call of run_fn began (lesson 05's check_random_state)."""

import torch

HEAD = "with dropout inside run_fn the recomputation drew the mask that comes after the forward's: "


def same_states(a: list, b: list) -> bool:
    """Whether two lists of random states (rng_states) are equal, state by state."""
    return all(torch.equal(p, q) for p, q in zip(a, b))


def late_mask(starts, n_forward: int, after_run_fn) -> str:
    """The hint, from the states at which each call of run_fn began (forward's calls first) and
    the state forward's run_fn left: it names a cause only where those states prove it."""
    again = starts[n_forward:]
    if n_forward == 1 and again and same_states(again[0], after_run_fn):
        return HEAD + ("backward's run_fn began from the random state forward's run_fn left, so "
                       "the state was recorded after run_fn(*args) ran; record it before")
    if n_forward == 1 and len(again) > 1 and same_states(again[0], starts[0]):
        return HEAD + (f"backward called run_fn {len(again)} times, and the first call, from the "
                       "restored state, spent forward's mask; recompute once, straight after "
                       "restoring")
    return HEAD + ("either the state was recorded after run_fn(*args) ran, or backward drew "
                   "random numbers (another run_fn call?) between restoring it and recomputing")


def wrong_start(starts, n_forward: int, states, seeded, device) -> str:
    """The hint for a recomputation that drew other numbers (not the mask after forward's), from
    the state backward's first run_fn call began at: a fresh torch.manual_seed(seed) state (the
    seed replayed), the caller's current state (no restore, or one undone by a closed fork_rng),
    on a CUDA device forward's CPU state with the caller's CUDA state (the CUDA generator never
    restored), or neither proved (what to do, no cause asserted)."""
    again = starts[n_forward:]
    head = "with dropout inside run_fn the gradients differ from an un-checkpointed run: "
    cuda = " (and torch.cuda.get_rng_state() for CUDA tensors)" if device.type == "cuda" else ""
    if n_forward == 1 and again and same_states(again[0], seeded):
        return head + ("backward's run_fn began from the state torch.manual_seed(seed) gives, not "
                       "the state forward's run_fn began from: the seed (torch.initial_seed()) "
                       "is not the state, and the grader drew random numbers between seeding "
                       "and apply, as earlier layers do: what must forward record instead"
                       f"{cuda}?")
    if n_forward == 1 and again and same_states(again[0], states):
        return head + ("the recomputation drew new random numbers, from the caller's current "
                       "state: nothing restored forward's state before run_fn ran, or "
                       "something put the caller's state back first (a torch.random.fork_rng() "
                       "block that closed before the recomputation does: closing restores the "
                       "caller's state): which state must the recomputation start from"
                       f"{cuda}, and what must still hold it when run_fn runs again?")
    if (device.type == "cuda" and n_forward == 1 and again and len(again[0]) > 1
            and torch.equal(again[0][0], starts[0][0]) and torch.equal(again[0][1], states[1])):
        return head + ("the CPU random state was restored, but not the CUDA device's: dropout "
                       "on a CUDA tensor draws from its device's own generator, and the "
                       "recomputation found that one where the caller had left it: which "
                       "state did forward's run_fn start from on that device?")
    return head + ("the recomputation drew new random numbers: which random state did forward's "
                   f"run_fn start from{cuda}, and does the recomputation start from it?")
