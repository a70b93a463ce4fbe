"""Benchmark for lesson 06: the three attention Functions of the lesson's own solutions
(materialising, memory efficient, FlashAttention) against F.scaled_dot_product_attention,
d = 64, one head, float32, L = 1024, 2048, 4096, forward and backward once each: the peak of
live tensors created (forward's or backward's, whichever is higher, by
``autograder.memory.TensorAccounting``), the largest tensor created beyond the inputs,
outputs, gradients and per-row statistics, and the wall time, with ratios to the
materialising Function.

Targets at L = 4096: FlashAttention's peak >= 20x below ScaledDotProductAttention's, its
largest tensor <= BLOCK x BLOCK per batch-head, its CPU time <= 3x the materialising one's.
``python -m tools.bench_attention`` (or ``make bench``) prints the table ``run()`` returns.
"""

from tools.bench_references import CPU_THREADS, cpu_threads
from tools.solutions import solution
from widgets.flash import measure_one, sdpa

LENGTHS = (1024, 2048, 4096)
D = 64
NAMES = ("ScaledDotProductAttention", "MemoryEfficientAttention", "FlashAttention")
TARGET_LENGTH, PEAK_TARGET, TIME_TARGET = 4096, 20.0, 3.0


def measure() -> list[dict]:
    functions = {name: solution(name).apply for name in NAMES}
    functions["F.scaled_dot_product_attention"] = sdpa
    return [{"L": L, "name": name, **measure_one(f, L, D, heads=1, seed=L, repeats=1)}
            for L in LENGTHS for name, f in functions.items()]


def format_table(rows: list[dict]) -> str:
    lines = [f"Attention, one head, d = {D}, float32, no mask, CPU ({CPU_THREADS} thread), "
             "forward + backward, one run; ratios against ScaledDotProductAttention",
             f"{'L':>5}  {'Function':<31}{'peak MiB':>10}{'x lower':>9}{'largest':>10}"
             f"{'beyond':>9}{'ms':>9}{'x time':>8}"]
    for L in LENGTHS:
        group = [row for row in rows if row["L"] == L]
        base = group[0]
        for row in group:
            lines.append(f"{L:>5}  {row['name']:<31}{row['peak'] / 2**20:>10.2f}"
                         f"{base['peak'] / row['peak']:>8.1f}x{row['largest']:>10}"
                         f"{row['largest beyond']:>9}{row['ms']:>9.0f}"
                         f"{row['ms'] / base['ms']:>7.2f}x")
    at = {row["name"]: row for row in rows if row["L"] == TARGET_LENGTH}
    flash, base = at["FlashAttention"], at["ScaledDotProductAttention"]
    block = solution("FlashAttention").BLOCK
    checks = [(f"peak >= {PEAK_TARGET:g}x below", base["peak"] / flash["peak"] >= PEAK_TARGET,
               f"{base['peak'] / flash['peak']:.1f}x"),
              (f"largest tensor beyond L x d ones <= BLOCK^2 = {block * block}",
               flash["largest beyond"] <= block * block, str(flash["largest beyond"])),
              (f"time <= {TIME_TARGET:g}x", flash["ms"] / base["ms"] <= TIME_TARGET,
               f"{flash['ms'] / base['ms']:.2f}x")]
    lines.append("('largest': elements of the largest tensor created; 'beyond': the same, "
                 "leaving out inputs, outputs, gradients and per-row statistics)")
    for label, met, measured in checks:
        lines.append(f"target at L = {TARGET_LENGTH}, FlashAttention {label}: measured "
                     f"{measured}: {'met' if met else 'NOT met'}")
    return "\n".join(lines)


def run() -> str:
    """Measure on the CPU and return the table as text."""
    with cpu_threads():
        return format_table(measure())


if __name__ == "__main__":
    print(run())
