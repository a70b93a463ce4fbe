"""Benchmark for lesson 11: the lesson's own linear_cross_entropy (its answer cells, loaded by
tools.solutions) against F.cross_entropy(F.linear(x, weight), target) at N = 4096, d = 512,
V = 32768, float32, forward + backward once each on the CPU (one thread), side by side: the
peak of live tensors created (forward's or backward's, whichever is higher, by
``autograder.memory.TensorAccounting``) and the wall time of that same run.

The chunk size is chosen so that one chunk of logits, chunk x V, is a quarter of the weight's
gradient, V x d: chunk = d / 4 = 128. Targets: a peak >= 10x lower at <= 1.5x the time.
``python -m tools.bench_fused_loss`` (or ``make bench``) prints the table ``run()`` returns.
"""

import time

import torch
import torch.nn.functional as F

from autograder.memory import TensorAccounting
from tools.bench_references import CPU_THREADS, cpu_threads, mib
from tools.solutions import solution

N, D, V = 4096, 512, 32768
CHUNK = D // 4  # one chunk of logits (CHUNK x V) is a quarter of grad_weight (V x D)
PEAK_TARGET, TIME_TARGET = 10.0, 1.5


def composed(x, weight, target):
    return F.cross_entropy(F.linear(x, weight), target)


def measure_one(loss_fn, x, weight, target) -> dict:
    """Peak live bytes (forward or backward) and the seconds of that forward + backward."""
    x, weight = (t.detach().clone().requires_grad_() for t in (x, weight))
    with TensorAccounting() as books:
        start = time.perf_counter()
        books.start("forward")
        loss = loss_fn(x, weight, target)
        books.start("backward")
        loss.backward()
        seconds = time.perf_counter() - start
    peak = max(books.phases["forward"].peak, books.phases["backward"].peak)
    return {"peak": peak, "seconds": seconds, "loss": loss.item()}


def measure() -> dict:
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(N, D, generator=generator)
    weight = torch.randn(V, D, generator=generator) / D ** 0.5
    target = torch.randint(0, V, (N,), generator=generator)
    fused = solution("linear_cross_entropy")
    return {"F.cross_entropy(F.linear(...))": measure_one(composed, x, weight, target),
            f"linear_cross_entropy, chunk_size={CHUNK}": measure_one(
                lambda a, b, t: fused(a, b, t, CHUNK), x, weight, target)}


def format_table(rows: dict) -> str:
    (base_name, base), (name, fused) = rows.items()
    lower, slower = base["peak"] / fused["peak"], fused["seconds"] / base["seconds"]
    lines = [f"Linear cross-entropy, N = {N}, d = {D}, V = {V}, float32, CPU ({CPU_THREADS} "
             f"thread), forward + backward, one run; chunk_size = {CHUNK} (d / 4)",
             f"{'loss':<42}{'peak':>14}{'x lower':>9}{'seconds':>10}{'x time':>8}"]
    for label, row in rows.items():
        lines.append(f"{label:<42}{mib(row['peak']):>14}{base['peak'] / row['peak']:>8.1f}x"
                     f"{row['seconds']:>10.1f}{row['seconds'] / base['seconds']:>7.2f}x")
    lines.append(f"losses agree to {abs(base['loss'] - fused['loss']):.1e}")
    for label, met, measured in ((f"peak >= {PEAK_TARGET:g}x lower", lower >= PEAK_TARGET,
                                  f"{lower:.1f}x"),
                                 (f"time <= {TIME_TARGET:g}x", slower <= TIME_TARGET,
                                  f"{slower:.2f}x")):
        lines.append(f"target, linear_cross_entropy {label}: measured {measured}: "
                     f"{'met' if met else 'NOT met'}")
    return "\n".join(lines)


def run() -> str:
    """Measure on the CPU and return the table as text."""
    with cpu_threads():
        return format_table(measure())


if __name__ == "__main__":
    print(run())
