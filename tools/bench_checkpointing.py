"""Benchmark for lesson 05: activation memory and step time of a 16-block MLP (Linear 1024 x
1024 + GELU; batch 64 on CPU, 4096 on CUDA, where the allocator's peak counts the weights'
gradients too and only a large batch makes activations dominate it) without checkpointing, with sqrt(n) = 4 segments, with every block
checkpointed, and with torch.utils.checkpoint (use_reentrant=False), measured side by side.

Target: sqrt(n) segments keep >= 4x fewer activation bytes at <= 1.5x the step time.
``python -m tools.bench_checkpointing`` (or ``make bench``) prints the table ``run()`` returns.
"""

import math

import torch
from torch import nn
from torch.utils.checkpoint import checkpoint_sequential as torch_checkpoint_sequential

from autograder.memory import cuda_peak
from tools.bench_references import (CPU_THREADS, ActivationMeter, best_times,
                                    checkpoint_sequential, cpu_threads, devices, mib)

DEPTH, WIDTH = 16, 1024
BATCH = {"cpu": 64, "cuda": 4096}  # on CUDA 64 rows keep 4 MiB, less than the 64 MiB of gradients
ROUNDS = 5
MEMORY_TARGET, TIME_TARGET = 4.0, 1.5


def deep_mlp(device: torch.device) -> nn.Sequential:
    torch.manual_seed(0)
    return nn.Sequential(*[nn.Sequential(nn.Linear(WIDTH, WIDTH), nn.GELU())
                           for _ in range(DEPTH)]).to(device)


def variants() -> dict:
    sqrt_n = round(math.sqrt(DEPTH))
    return {
        "no checkpointing": (lambda m, x: m(x), True),
        f"sqrt(n) = {sqrt_n} segments": (lambda m, x: checkpoint_sequential(m, sqrt_n, x), True),
        f"every block ({DEPTH} segments)": (lambda m, x: checkpoint_sequential(m, DEPTH, x),
                                           True),
        f"torch.utils.checkpoint, {sqrt_n} seg.": (
            lambda m, x: torch_checkpoint_sequential(m, sqrt_n, x, use_reentrant=False), False),
    }


def measure(device: torch.device) -> list[dict]:
    """One row per variant: kept and peak activation bytes, best step time, CUDA peak."""
    model = deep_mlp(device)
    # an input that requires grad, or a Function's output would not (see lesson 05)
    x = torch.randn(BATCH[device.type], WIDTH, device=device, requires_grad=True)
    table = variants()

    def step(run):
        def go():
            model.zero_grad(set_to_none=True)
            run(model, x).square().mean().backward()
        return go

    rows = []
    for name, (run, meter_sees_recompute) in table.items():
        model.zero_grad(set_to_none=True)
        with ActivationMeter(skip=list(model.parameters())) as meter:
            loss = run(model, x).square().mean()
            kept = meter.now
            loss.backward()
        row = {"name": name, "kept": kept, "peak": meter.peak if meter_sees_recompute else None}
        if device.type == "cuda":
            row["cuda_peak"] = cuda_peak(step(run), device)
        rows.append(row)
    times = best_times({name: step(run) for name, (run, _) in table.items()}, device, ROUNDS)
    for row in rows:
        row["ms"] = times[row["name"]]
    return rows


def _where(device: torch.device) -> str:
    return "cuda" if device.type == "cuda" else f"cpu ({CPU_THREADS} thread)"


def format_table(device: torch.device, rows: list[dict]) -> str:
    base = rows[0]
    lines = [f"Checkpointing: {DEPTH} blocks of Linear({WIDTH}, {WIDTH}) + GELU, batch {BATCH[device.type]}, "
             f"float32, {_where(device)}, best of {ROUNDS} steps",
             f"{'variant':<34}{'kept after fwd':>15}{'fewer':>8}{'peak in step':>15}{'fewer':>8}"
             f"{'step ms':>9}{'time':>7}" + (f"{'CUDA peak':>13}{'fewer':>8}"
                                            if device.type == "cuda" else "")]
    for row in rows:
        peak = (f"{mib(row['peak']):>15}{base['peak'] / row['peak']:>7.1f}x"
                if row["peak"] is not None else f"{'n/a':>15}{'':>8}")
        line = (f"{row['name']:<34}{mib(row['kept']):>15}{base['kept'] / row['kept']:>7.1f}x"
                f"{peak}{row['ms']:>9.1f}{row['ms'] / base['ms']:>6.2f}x")
        if device.type == "cuda":
            line += f"{mib(row['cuda_peak']):>13}{base['cuda_peak'] / row['cuda_peak']:>7.1f}x"
        lines.append(line)
    sqrt_row = rows[1]
    memory_ratio, time_ratio = base["kept"] / sqrt_row["kept"], sqrt_row["ms"] / base["ms"]
    met = memory_ratio >= MEMORY_TARGET and time_ratio <= TIME_TARGET
    lines.append(f"target for {sqrt_row['name']}: >= {MEMORY_TARGET:g}x fewer activation bytes "
                 f"(measured {memory_ratio:.1f}x) at <= {TIME_TARGET:g}x the time (measured "
                 f"{time_ratio:.2f}x): {'met' if met else 'NOT met'}")
    lines.append("kept after fwd: activation bytes autograd holds after forward (parameters "
                 "excluded, each storage once)\npeak in step: the most held at once during "
                 "forward and backward, recomputation included (n/a: torch's checkpoint hides "
                 "its recomputation from saved-tensor hooks)")
    return "\n".join(lines)


def run() -> str:
    """Measure on the CPU, and on CUDA when present; return the tables as text."""
    with cpu_threads():
        tables = [format_table(device, measure(device)) for device in devices()]
    return "\n\n".join(tables)


if __name__ == "__main__":
    print(run())
