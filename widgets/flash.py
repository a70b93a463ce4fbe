"""FlashAttention views: the online softmax stepped through key blocks for one query row, and
peak memory and time of attention Functions against sequence length, measured."""

import math
import time

import ipywidgets
import matplotlib.pyplot as plt
import numpy as np
import torch
import torch.nn.functional as F

from autograder.memory import TensorAccounting
from autograder.tiled import refuse_inside_a_function

from . import markup
from .figures import CURRENT, CUSTOM, DONE, INK, Frames, new_figure
from .markup import format_number
from .view import View, html_pane, image_pane, on_change, show_figure


# ------------------------------------------------------------------------ online softmax
def online_softmax_steps(scores: torch.Tensor, values: torch.Tensor, block: int) -> list[dict]:
    """The running max m, sum ell and partial output o / ell after each block of keys, for one
    query row (``scores`` of shape (L,), ``values`` (L, dv)); step 0 is before any block."""
    refuse_inside_a_function("widgets.flash.online_softmax_steps")
    m = torch.tensor(float("-inf"), dtype=scores.dtype)
    ell = torch.zeros((), dtype=scores.dtype)
    o = torch.zeros(values.shape[-1], dtype=scores.dtype)
    steps = [{"seen": 0, "m": m.item(), "ell": 0.0, "alpha": 1.0, "output": o.clone()}]
    for start in range(0, scores.shape[0], block):
        s, v = scores[start:start + block], values[start:start + block]
        m_new = torch.maximum(m, s.max())
        alpha = torch.exp(m - m_new)
        p = torch.exp(s - m_new)
        ell, o, m = alpha * ell + p.sum(), alpha * o + p @ v, m_new
        steps.append({"seen": start + s.shape[0], "m": m.item(), "ell": ell.item(),
                      "alpha": alpha.item(), "output": o / ell})
    return steps


def _row(length: int, seed: int):
    generator = torch.Generator().manual_seed(seed)
    scores = torch.randn(length, generator=generator, dtype=torch.float64) * 2
    scores += torch.linspace(0, 3, length, dtype=torch.float64)  # the maximum tends to grow
    values = torch.randn(length, 3, generator=generator, dtype=torch.float64)
    return scores, values


class StepperFigure:
    """Scores by block with the running max (top); partial output against the exact (bottom)."""

    def __init__(self, scores, exact, block):
        self.figure = new_figure(7.5, 3.6)
        self.top, self.bottom = self.figure.subplots(1, 2, width_ratios=(2.2, 1))
        self.figure.subplots_adjust(left=0.08, right=0.98, bottom=0.15, top=0.88, wspace=0.3)
        keys = np.arange(scores.shape[0])
        self.bars = list(self.top.bar(keys, scores.numpy(), color=DONE))
        for start in range(block, scores.shape[0], block):
            self.top.axvline(start - 0.5, color="#dddddd", linewidth=0.8)
        self.max_line = self.top.axhline(0, color=CURRENT, linewidth=1.5,
                                         label="running max m")
        self.top.legend(fontsize=7, loc="upper left", frameon=False)
        self.top.set(xlabel="key", ylabel="score s_j")
        self.top.set_title("scores, by block of keys", fontsize=9)
        columns = np.arange(exact.shape[0])
        self.out_bars = list(self.bottom.bar(columns, np.zeros(exact.shape[0]), color=CUSTOM))
        self.bottom.plot(columns, exact.numpy(), "_", color=INK, markersize=16,
                         label="exact row")
        spread = float(np.abs(exact.numpy()).max()) * 1.6 + 0.1
        self.bottom.set_ylim(-spread, spread)
        self.bottom.set_xticks(columns)
        self.bottom.axhline(0, color="#bbbbbb", linewidth=0.8)
        self.bottom.legend(fontsize=7, frameon=False, loc="upper right")
        self.bottom.set_title("partial output o / ℓ", fontsize=9)
        self.bottom.set_xlabel("output column")
        low, high = float(scores.min()), float(scores.max())
        self.top.set_ylim(min(low, 0) - 0.5, high + 0.8)
        self.frames = Frames(self.figure, [*self.bars, self.max_line, *self.out_bars])

    def show(self, step: dict) -> None:
        for key, bar in enumerate(self.bars):
            bar.set_color(CUSTOM if key < step["seen"] else DONE)
        self.max_line.set_visible(step["seen"] > 0)
        if step["seen"]:
            self.max_line.set_ydata([step["m"], step["m"]])
        for bar, value in zip(self.out_bars, step["output"].numpy()):
            bar.set_height(value)


def stepper_readout(step: dict, exact: torch.Tensor, lse: float) -> str:
    if step["seen"] == 0:
        return markup.paragraph("No key seen yet: m = −∞, ℓ = 0, o = 0.")
    error = (step["output"] - exact).abs().max().item()
    rows = [["keys seen", str(step["seen"])], ["running max m", format_number(step["m"])],
            ["running sum ℓ", format_number(step["ell"])],
            ["rescaling factor α this step", format_number(step["alpha"])],
            ["L so far (exact L " + format_number(lse) + ")",
             format_number(step["m"] + float(np.log(step["ell"])))],
            ["max |o/ℓ − exact row|", format_number(error)]]
    return markup.table(["", "value"], rows, numeric={1})


def online_softmax_stepper(scores=None, values=None, *, length: int = 24, block: int = 4,
                           seed: int = 0) -> View:
    """Step one query row's online softmax through its key blocks."""
    if scores is None or values is None:
        scores, values = _row(length, seed)
    scores, values = scores.double(), values.double()
    steps = online_softmax_steps(scores, values, block)
    exact = torch.softmax(scores, 0) @ values
    lse = torch.logsumexp(scores, 0).item()
    drawing = StepperFigure(scores, exact, block)
    slider = ipywidgets.IntSlider(value=len(steps) - 1, min=0, max=len(steps) - 1,
                                  description="blocks seen")
    readout = html_pane()
    drawing.show(steps[-1])
    picture = image_pane(drawing.frames)

    def update():
        step = steps[slider.value]
        drawing.show(step)
        show_figure(picture, drawing.frames)
        readout.value = stepper_readout(step, exact, lse)

    on_change([slider], update)
    update()
    return View([slider, picture, readout], controls={"blocks": slider},
                panes={"plot": picture, "readout": readout})


# ----------------------------------------------------------------------- peak and time
def sdpa(Q, K, V, scale):
    """PyTorch's own attention, for comparison."""
    return F.scaled_dot_product_attention(Q, K, V, scale=scale)


def _memory(attention, Q, K, V, grad_output) -> dict:
    """Live tensors created by one forward and backward, by ``TensorAccounting``: each phase's
    peak, what forward keeps for backward (with the output), the step peak max(forward,
    kept + backward), and the largest tensor created, also beyond inputs-sized ones."""
    heads, L, d = Q.shape[1:]
    with TensorAccounting() as books:
        books.start("forward")
        output = attention(Q, K, V, d ** -0.5)
        books.start("backward")
        kept = books.now
        output.backward(grad_output)
    phases = [books.phases["forward"], books.phases["backward"]]
    largest = max((p.largest.numel for p in phases if p.largest is not None), default=0)
    # beyond the inputs, outputs, gradients (1, heads, L, d) and per-row statistics
    small = {(1, heads, L, d), (1, heads, L), (1, heads, L, 1), (heads, L, d), (heads, L),
             (heads, L, 1), (L, d), (L,)}
    extra = [math.prod(shape) for p in phases for shape in p.shapes if shape not in small]
    return {"peak": max(phases[0].peak, kept + phases[1].peak), "forward peak": phases[0].peak,
            "kept": kept, "backward peak": phases[1].peak, "largest": largest,
            "largest beyond": max(extra, default=0)}


def _inputs(L: int, d: int, heads: int, seed: int) -> tuple:
    """Q, K, V requiring grad and grad_output, float32, (1, heads, L, d): the shape attention
    layers use (with 3-D inputs F.scaled_dot_product_attention takes its composed path)."""
    generator = torch.Generator().manual_seed(seed)
    Q, K, V = (torch.randn(1, heads, L, d, generator=generator).requires_grad_()
               for _ in range(3))
    return Q, K, V, torch.randn(1, heads, L, d, generator=generator)


def _fastest(attentions: list, inputs: tuple, repeats: int) -> list[float]:
    """Seconds of forward and backward for each of ``attentions``, the fastest of ``repeats``
    interleaved runs (other work on the machine only adds), on the CPU with one thread."""
    Q, K, V, grad_output = inputs
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # steadier on a small shared machine; ratios are what matter
    fastest = [float("inf")] * len(attentions)
    try:
        for _ in range(repeats):
            for i, attention in enumerate(attentions):
                start = time.perf_counter()
                attention(Q, K, V, Q.shape[-1] ** -0.5).backward(grad_output)
                fastest[i] = min(fastest[i], time.perf_counter() - start)
    finally:
        torch.set_num_threads(threads)
    return fastest


def measure_one(attention, L: int, d: int = 64, heads: int = 1, seed: int = 0,
                repeats: int = 10) -> dict:
    """``_memory``'s numbers (``peak`` the step peak) and ``ms``, the fastest of ``repeats``
    forwards and backwards, float32 on the CPU with one thread, inputs (1, heads, L, d)."""
    inputs = _inputs(L, d, heads, seed)
    row = _memory(attention, *inputs)
    return {**row, "ms": 1000 * _fastest([attention], inputs, repeats)[0]}


def measure_attention(functions: dict, lengths=(256, 512, 1024), d: int = 64,
                      heads: int = 1, repeats: int = 10) -> list[dict]:
    """``measure_one`` for each Function (by name) and F.scaled_dot_product_attention, the
    times taken interleaved, so that a busy moment of the machine slows all of them alike."""
    named = {**functions, "F.scaled_dot_product_attention": sdpa}
    rows = []
    for L in lengths:
        inputs = _inputs(L, d, heads, 0)
        seconds = _fastest(list(named.values()), inputs, repeats)
        rows += [{"name": name, "L": L, **_memory(f, *inputs), "ms": 1000 * s}
                 for (name, f), s in zip(named.items(), seconds)]
    return rows


def peak_and_time_figure(rows: list[dict]):
    """Peak live bytes and time against L, log-log, one line per Function."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.6))
    names = list(dict.fromkeys(row["name"] for row in rows))
    for name, marker in zip(names, "os^Dv"):
        mine = [row for row in rows if row["name"] == name]
        lengths = [row["L"] for row in mine]
        left.plot(lengths, [row["peak"] / 2**20 for row in mine], marker=marker, label=name)
        right.plot(lengths, [row["ms"] for row in mine], marker=marker, label=name)
    for ax, label in ((left, "peak of live tensors (MiB)"), (right, "forward + backward (ms)")):
        ax.set(xscale="log", yscale="log", xlabel="sequence length N", ylabel=label)
        ticks = sorted({row["L"] for row in rows})
        ax.set_xticks(ticks, [str(L) for L in ticks])
        ax.minorticks_off()
    left.legend(fontsize=7)
    fig.tight_layout()
    return fig
