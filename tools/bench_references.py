"""Memory meters, timers and thread settings for the benchmarks (tools/bench_checkpointing.py and
tools/bench_attention.py), and lesson 05's checkpoint_sequential: the lesson's own solution,
loaded from its answer cells by tools.solutions (the benchmarks keep no copies of answers)."""

import time
from contextlib import contextmanager

import torch
from torch.autograd.graph import saved_tensors_hooks

from tools.solutions import solution


# ------------------------------------------------------------------------------ lesson 05
# The lesson's own solution (its answer cells), not a copy.
checkpoint_sequential = solution("checkpoint_sequential")


# ------------------------------------------------------------------------------- measuring
class _Held:
    def __init__(self, tensor, meter, key):
        self.tensor, self.meter, self.key = tensor, meter, key

    def __del__(self):
        self.meter.release(self.key)


class ActivationMeter:
    """Bytes autograd keeps for backward, each storage once, ignoring the ``skip`` tensors
    (parameters, or inputs the caller holds anyway): ``now`` at any moment, ``peak`` over
    the ``with`` block, recomputation in a checkpointed backward included."""

    def __init__(self, skip=()):
        self.skip = {t.untyped_storage().data_ptr() for t in skip}
        self.count, self.size = {}, {}
        self.now = self.peak = 0
        self.hooks = saved_tensors_hooks(self.pack, self.unpack)

    def pack(self, tensor):
        key = tensor.untyped_storage().data_ptr()
        if key in self.skip:
            return tensor
        if self.count.get(key, 0) == 0:
            self.size[key] = tensor.untyped_storage().nbytes()
            self.now += self.size[key]
            self.peak = max(self.peak, self.now)
        self.count[key] = self.count.get(key, 0) + 1
        return _Held(tensor, self, key)

    @staticmethod
    def unpack(held):
        return held.tensor if isinstance(held, _Held) else held

    def release(self, key):
        self.count[key] -= 1
        if self.count[key] == 0:
            self.now -= self.size.pop(key)

    def __enter__(self):
        self.hooks.__enter__()
        return self

    def __exit__(self, *exc):
        self.hooks.__exit__(*exc)


def synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def best_times(steps: dict, device: torch.device, rounds: int) -> dict:
    """Best wall time (ms) of each step, measured in turns after one warm-up round, so that a
    busy moment of a shared machine hits every variant alike."""
    best = {name: float("inf") for name in steps}
    for round_ in range(rounds + 1):
        for name, step in steps.items():
            synchronize(device)
            start = time.perf_counter()
            step()
            synchronize(device)
            if round_ > 0:
                best[name] = min(best[name], 1000 * (time.perf_counter() - start))
    return best


def mib(nbytes: float) -> str:
    return f"{nbytes / 2**20:,.2f} MiB"


CPU_THREADS = 1


@contextmanager
def cpu_threads(count: int = CPU_THREADS):
    """Run with ``count`` intra-op threads. One by default: on a small shared machine, threads
    spin-waiting for each other make timings swing by 10x and more, and the benchmarks are
    about ratios, which one thread measures steadily."""
    previous = torch.get_num_threads()
    torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


def devices() -> list[torch.device]:
    found = [torch.device("cpu")]
    if torch.cuda.is_available():
        found.append(torch.device("cuda"))
    return found
