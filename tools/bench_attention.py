"""Benchmark for lesson 06: scaled dot-product attention through autograd's composed ops, with
a hand-written backward (saving P), and memory efficient (saving a log-sum-exp per row), at
L = 512 ... 4096, d = 64, one sequence with two heads: forward-and-backward time and the bytes
kept for backward, measured side by side.

Target: the memory-efficient variant keeps >= 10x fewer bytes than the others at L = 4096.
``python -m tools.bench_attention`` (or ``make bench``) prints the table ``run()`` returns.
"""

import torch

from tools.bench_references import (CPU_THREADS, ActivationMeter, MemoryEfficientAttention,
                                    ScaledDotProductAttention, best_times, composed_attention,
                                    cpu_threads, cuda_peak, devices, mib)

LENGTHS = (512, 1024, 2048, 4096)
BATCH, HEADS, D = 1, 2, 64
ROUNDS = 3
TARGET_LENGTH, TARGET = 4096, 10.0

VARIANTS = {
    "autograd (composed ops)": composed_attention,
    "custom backward (saves P)": ScaledDotProductAttention.apply,
    "memory efficient (saves lse)": MemoryEfficientAttention.apply,
}


def measure(device: torch.device, L: int) -> list[dict]:
    """One row per variant at sequence length L."""
    generator = torch.Generator().manual_seed(L)
    Q, K, V = (torch.randn(BATCH, HEADS, L, D, generator=generator).to(device).requires_grad_()
               for _ in range(3))
    grad_output = torch.randn(BATCH, HEADS, L, D, generator=generator).to(device)
    scale = D ** -0.5
    inputs = Q.numel() * Q.element_size() * 3

    def step(attention):
        def go():
            for t in (Q, K, V):
                t.grad = None
            attention(Q, K, V, scale).backward(grad_output)
        return go

    rows = []
    for name, attention in VARIANTS.items():
        with ActivationMeter() as meter:
            output = attention(Q, K, V, scale)
            kept = meter.now
        del output
        row = {"L": L, "name": name, "kept": kept, "beyond": kept - inputs}
        if device.type == "cuda":
            row["cuda_peak"] = cuda_peak(step(attention), device)
        rows.append(row)
    times = best_times({name: step(attention) for name, attention in VARIANTS.items()},
                       device, ROUNDS)
    for row in rows:
        row["ms"] = times[row["name"]]
    return rows


def format_table(device: torch.device, rows: list[dict]) -> str:
    where = "cuda" if device.type == "cuda" else f"cpu ({CPU_THREADS} thread)"
    lines = [f"Attention: batch {BATCH}, {HEADS} heads, d = {D}, float32, no mask, {where}, "
             f"forward + backward, best of {ROUNDS}",
             f"{'L':>5}  {'variant':<30}{'kept for bwd':>14}{'of which not Q,K,V':>20}"
             f"{'fewer':>13}{'ms':>9}{'time':>7}"
             + (f"{'CUDA peak':>13}" if device.type == "cuda" else "")]
    for L in LENGTHS:
        group = [row for row in rows if row["L"] == L]
        base = group[0]
        for row in group:
            line = (f"{L:>5}  {row['name']:<30}{mib(row['kept']):>14}{mib(row['beyond']):>20}"
                    f"{base['kept'] / row['kept']:>11.1f}x{row['ms']:>10.1f}"
                    f"{row['ms'] / base['ms']:>6.2f}x")
            if device.type == "cuda":
                line += f"{mib(row['cuda_peak']):>13}"
            lines.append(line)
    at_target = {row["name"]: row for row in rows if row["L"] == TARGET_LENGTH}
    efficient = at_target["memory efficient (saves lse)"]["kept"]
    worst = min(row["kept"] for name, row in at_target.items() if "efficient" not in name)
    ratio = worst / efficient
    lines.append(f"target at L = {TARGET_LENGTH}: memory efficient keeps >= {TARGET:g}x fewer "
                 f"bytes than either other variant (measured {ratio:.1f}x, Q, K, V included): "
                 f"{'met' if ratio >= TARGET else 'NOT met'}")
    return "\n".join(lines)


def run() -> str:
    """Measure on the CPU, and on CUDA when present; return the tables as text."""
    tables = []
    with cpu_threads():
        for device in devices():
            rows = [row for L in LENGTHS for row in measure(device, L)]
            tables.append(format_table(device, rows))
    return "\n\n".join(tables)


if __name__ == "__main__":
    print(run())
