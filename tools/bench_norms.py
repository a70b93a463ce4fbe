"""Benchmark for lesson 10: the lesson's own LayerNormFunction and RMSNormFunction (its solution
cells) against F.layer_norm and F.rms_norm, side by side in one run: forward + backward time
(best of a few rounds, taken in turns) and the bytes kept for backward beyond the arguments
(``ActivationMeter``, each storage once), float32, x of shape (ROWS, D) with a weight (and a
bias for LayerNorm), on the CPU and on CUDA when there is one.

``python -m tools.bench_norms`` (or ``make bench``) prints the table ``run()`` returns.
"""

import torch
import torch.nn.functional as F

from tools.bench_references import (CPU_THREADS, ActivationMeter, best_times, cpu_threads,
                                    devices)
from tools.solutions import solution

ROWS, D, EPS, ROUNDS = 4096, 1024, 1e-5, 5


def _pairs() -> list[tuple[str, object, str, object]]:
    """(ours, its call, PyTorch's, its call), each call taking (x, weight, bias)."""
    layer_norm, rms_norm = solution("LayerNormFunction"), solution("RMSNormFunction")
    return [("LayerNormFunction", lambda x, w, b: layer_norm.apply(x, w, b, EPS),
             "F.layer_norm", lambda x, w, b: F.layer_norm(x, (D,), w, b, EPS)),
            ("RMSNormFunction", lambda x, w, b: rms_norm.apply(x, w, EPS),
             "F.rms_norm", lambda x, w, b: F.rms_norm(x, (D,), w, EPS))]


def _inputs(device: torch.device) -> tuple:
    generator = torch.Generator().manual_seed(0)
    x, weight, bias = (torch.randn(shape, generator=generator).to(device).requires_grad_()
                       for shape in ((ROWS, D), (D,), (D,)))
    return x, weight, bias, torch.randn(ROWS, D, generator=generator).to(device)


def _kept(call, inputs: tuple) -> int:
    """Bytes autograd keeps for backward after ``call``'s forward, arguments left out."""
    with ActivationMeter(inputs[:3]) as meter:
        output = call(*inputs[:3])
        kept = meter.now
    del output
    return kept


def measure() -> list[dict]:
    rows = []
    for device in devices():
        inputs = _inputs(device)

        def step(call):
            return lambda: call(*inputs[:3]).backward(inputs[3])

        for ours, our_call, theirs, their_call in _pairs():
            times = best_times({ours: step(our_call), theirs: step(their_call)}, device, ROUNDS)
            for x in inputs[:3]:
                x.grad = None
            rows.append({"device": device.type, "ours": ours, "theirs": theirs,
                         "ms ours": times[ours], "ms theirs": times[theirs],
                         "kept ours": _kept(our_call, inputs),
                         "kept theirs": _kept(their_call, inputs)})
    return rows


def format_table(rows: list[dict]) -> str:
    lines = [f"Normalisation, x of shape ({ROWS}, {D}) float32 with weight (and bias), forward + "
             f"backward, best of {ROUNDS}; CPU with {CPU_THREADS} thread; kept = bytes saved "
             "for backward beyond the arguments",
             f"{'device':<7}{'ours':<19}{'PyTorch':<14}{'ms ours':>9}{'ms torch':>10}"
             f"{'x time':>8}{'kept ours':>12}{'kept torch':>12}"]
    for row in rows:
        lines.append(f"{row['device']:<7}{row['ours']:<19}{row['theirs']:<14}"
                     f"{row['ms ours']:>9.2f}{row['ms theirs']:>10.2f}"
                     f"{row['ms ours'] / row['ms theirs']:>7.2f}x"
                     f"{row['kept ours']:>12,}{row['kept theirs']:>12,}")
    lines.append("('x time': ours / PyTorch's; both ours keep x, the weight and one or two "
                 "numbers per row)")
    return "\n".join(lines)


def run() -> str:
    """Measure on every device and return the table as text."""
    with cpu_threads():
        return format_table(measure())


if __name__ == "__main__":
    print(run())
