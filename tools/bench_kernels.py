"""Benchmark for lesson 13: your own kernels against the composed ops they replace, side by side.

- CPU: the lesson's C++ softsign operators (its `load_inline` cell, run as is: one build in
  ~/.cache/torch_extensions serves both) against `F.softsign`, forward + backward, float32.
- CUDA, when there is one: the lesson's Triton `silu_mul` and `rms_norm_rows` (its solution
  cells, compiled) against `F.silu(a) * b` and `F.rms_norm`, forward + backward.

Time is the best of a few rounds taken in turns; "MiB moved" counts, for every op dispatched in
one forward + backward, the bytes of its tensor arguments and results (each op reading its
inputs and writing its output once; a custom operator is one op): the traffic a fused kernel
saves. On CPU Triton runs in its interpreter, whose timings mean nothing: not measured there.

``python -m tools.bench_kernels`` (or ``make bench``) prints the table ``run()`` returns.
"""

import contextlib
import functools
import io
import time

import jupytext
import torch
import torch.nn.functional as F
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

from grader.lessons import LESSONS
from tools.bench_references import CPU_THREADS, best_times, cpu_threads

LESSON, N, D, EPS, ROUNDS = "13_kernels", 1 << 22, 4096, 1e-5, 5
# On CUDA, sizes where memory time outweighs each call's fixed cost (Python dispatch, launches:
# about 0.3 ms per forward + backward on an H100, SXM or PCIe not recorded); at 1 << 22 that
# cost alone set the times
CUDA_N, CUDA_ROWS = 1 << 26, 16384
MIB = 2 ** 20
FREE = {"empty", "empty_like", "empty_strided", "new_empty", "view", "_unsafe_view", "detach",
        "alias", "t", "transpose", "expand", "as_strided", "reshape", "_reshape_alias",
        "lift_fresh"}  # no data moves


class _Traffic(TorchDispatchMode):
    """Bytes of tensor arguments and results of every op that moves data."""

    moved = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if func.overloadpacket.__name__ not in FREE:
            self.moved += sum(t.nbytes for t in tree_leaves((args, kwargs, out))
                              if isinstance(t, torch.Tensor))
        return out


def mib_moved(step) -> float:
    with _Traffic() as traffic:
        step()
    return traffic.moved / MIB


def _load_cell() -> str:
    """The lesson's `load_inline` cell: its C++ source, then the code that builds and loads it."""
    notebook = jupytext.read(LESSONS / f"{LESSON}.py", fmt="py:percent")
    cell, = [c.source for c in notebook.cells
             if c.cell_type == "code" and "SOFTSIGN_CPP = " in c.source]
    return cell


def cpp_source() -> str:
    """The C++ source of the lesson's `load_inline` cell."""
    names: dict = {}
    exec(_load_cell().split("from torch.utils import cpp_extension")[0], names)  # noqa: S102 (ours)
    return names["SOFTSIGN_CPP"]


@functools.cache
def _cpp_softsign():
    """`torch.ops.autograd_course_cpp.softsign`, loaded by the lesson's own cell, with its
    autograd formula; None without ninja."""
    names = {"torch": torch, "time": time}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(_load_cell(), names)  # noqa: S102 (ours)
    if not names["cpp_loaded"]:
        return None
    ops = torch.ops.autograd_course_cpp

    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return ops.softsign_backward(grad_output, x)

    torch.library.register_autograd("autograd_course_cpp::softsign", backward,
                                    setup_context=setup_context)
    return ops.softsign


def _row(device, ours, our_step, theirs, their_step) -> dict:
    times = best_times({ours: our_step, theirs: their_step}, device, ROUNDS)
    return {"device": device.type, "ours": ours, "theirs": theirs, "ms ours": times[ours],
            "ms theirs": times[theirs], "MiB ours": mib_moved(our_step),
            "MiB theirs": mib_moved(their_step)}


def measure_cpu(softsign) -> list[dict]:
    """The lesson's C++ softsign (built by ``_cpp_softsign``) against ``F.softsign``."""
    x = torch.randn(N, generator=torch.Generator().manual_seed(0)).requires_grad_()
    grad = torch.randn(N, generator=torch.Generator().manual_seed(1))
    return [_row(torch.device("cpu"), "C++ softsign", lambda: softsign(x).backward(grad),
                 "F.softsign", lambda: F.softsign(x).backward(grad))]


def measure_cuda() -> list[dict]:
    from tools.solutions import namespace

    device = torch.device("cuda")
    answers = namespace(LESSON)  # one run: a second would redefine the first's operators
    silu_mul, rms_norm_rows = answers["silu_mul"], answers["rms_norm_rows"]
    a, b, grad = (torch.randn(CUDA_N, device=device) for _ in range(3))
    a.requires_grad_(), b.requires_grad_()
    x = torch.randn(CUDA_ROWS, D, device=device, requires_grad=True)
    weight = torch.ones(D, device=device, requires_grad=True)
    grad_x = torch.randn(CUDA_ROWS, D, device=device)
    return [_row(device, "Triton silu_mul", lambda: silu_mul(a, b).backward(grad),
                 "F.silu(a) * b", lambda: (F.silu(a) * b).backward(grad)),
            _row(device, "Triton rms_norm_rows",
                 lambda: rms_norm_rows(x, weight, EPS).backward(grad_x),
                 "F.rms_norm", lambda: F.rms_norm(x, (D,), weight, EPS).backward(grad_x))]


def format_table(rows: list[dict], note: str = "") -> str:
    lines = [f"Your kernels against composed ops, float32, forward + backward, best of {ROUNDS} "
             f"(CPU: {N} elements; CUDA: {CUDA_N} elements, rms_norm_rows {CUDA_ROWS} x {D}); "
             f"CPU with {CPU_THREADS} thread; MiB moved: tensor bytes read and written by every "
             "op of one forward + backward",
             f"{'device':<7}{'ours':<22}{'composed':<15}{'ms ours':>9}{'ms torch':>10}"
             f"{'x time':>8}{'MiB ours':>10}{'MiB torch':>11}"]
    for row in rows:
        lines.append(f"{row['device']:<7}{row['ours']:<22}{row['theirs']:<15}"
                     f"{row['ms ours']:>9.2f}{row['ms theirs']:>10.2f}"
                     f"{row['ms ours'] / row['ms theirs']:>7.2f}x"
                     f"{row['MiB ours']:>10.0f}{row['MiB theirs']:>11.0f}")
    if note:
        lines.append(note)
    return "\n".join(lines)


def run() -> str:
    """Measure on every device and return the table as text."""
    started = time.perf_counter()
    with cpu_threads():
        softsign = _cpp_softsign()  # a build, or a load of the one torch's extension cache holds
        built = time.perf_counter() - started
        rows = [] if softsign is None else measure_cpu(softsign)
        notes = [] if rows else ["(no ninja: the C++ kernel was not built; pip install ninja)"]
        if torch.cuda.is_available():
            rows += measure_cuda()
        else:
            notes.append("(no GPU: the Triton kernels would run in the interpreter, not timed)")
    notes.append(f"({time.perf_counter() - started:.0f} s, of which {built:.0f} s building or "
                 "loading the C++ operator)")
    return format_table(rows, "\n".join(notes))


if __name__ == "__main__":
    print(run())
