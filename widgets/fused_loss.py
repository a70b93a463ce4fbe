"""Fused-loss view: peak memory and time of the learner's chunked linear cross-entropy against
chunk size, beside F.cross_entropy(F.linear(x, weight), target), measured live (live-tensor
accounting on the CPU, torch.cuda.max_memory_allocated on CUDA)."""

import time
from dataclasses import dataclass

import ipywidgets
import torch
import torch.nn.functional as F

from autograder.memory import TensorAccounting, cuda_peak

from . import markup
from .figures import BUILTIN, CURRENT, CUSTOM, Frames, new_figure
from .functions import error_summary
from .markup import code, format_bytes
from .view import View, html_pane, image_pane, show_figure

COMPOSED = "F.cross_entropy(F.linear(x, weight), target)"


def composed_loss(x, weight, target, chunk_size=None):
    """The loss as PyTorch composes it: all N x V logits at once."""
    return F.cross_entropy(F.linear(x, weight), target)


@dataclass
class LossRun:
    """One forward and backward: ``chunk_size`` None is the composed loss."""

    chunk_size: int | None
    peak_bytes: int  # the larger of forward's and backward's peak, above what lived before
    ms: float        # best wall time of forward + backward
    loss_error: float  # |loss - composed loss|
    grad_error: float  # largest |gradient - composed gradient|, x and weight


def loss_inputs(rows: int, features: int, vocabulary: int, device="cpu", seed: int = 0):
    """Hidden states x (rows, features), a vocabulary matrix and targets, float32."""
    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(rows, features, generator=generator)
    weight = torch.randn(vocabulary, features, generator=generator) / features ** 0.5
    target = torch.randint(0, vocabulary, (rows,), generator=generator)
    return x.to(device), weight.to(device), target.to(device)


def _peak(step, device: torch.device) -> int:
    """Bytes at the peak of ``step()``: forward and backward, each above what lived before."""
    if device.type == "cuda":
        held = {}
        forward = cuda_peak(lambda: held.update(loss=step()), device)
        return max(forward, cuda_peak(lambda: held["loss"].backward(), device))
    with TensorAccounting() as books:
        books.start("forward")
        loss = step()
        books.start("backward")
        loss.backward()
    return max(books.phases["forward"].peak, books.phases["backward"].peak)


def measure_loss(loss_fn, x, weight, target, chunk_size, repeats: int = 2,
                 reference: tuple | None = None) -> LossRun:
    """Peak bytes, best time of ``repeats`` forward + backward, and the errors against
    ``reference`` = (loss, grad_x, grad_weight) of the composed loss (0 if None)."""
    x, weight = (t.detach().clone().requires_grad_() for t in (x, weight))

    def step():
        return loss_fn(x, weight, target, chunk_size)

    peak = _peak(step, x.device)
    x.grad = weight.grad = None  # _peak's backward filled them
    loss = step()
    loss.backward()
    grads = (x.grad, weight.grad)
    errors = (0.0, 0.0)
    if reference is not None:
        errors = (abs(loss.item() - reference[0].item()),
                  max((g - r).abs().max().item() for g, r in zip(grads, reference[1:])))
    seconds = float("inf")
    for _ in range(repeats):
        if x.device.type == "cuda":
            torch.cuda.synchronize(x.device)
        start = time.perf_counter()
        step().backward()
        if x.device.type == "cuda":
            torch.cuda.synchronize(x.device)
        seconds = min(seconds, time.perf_counter() - start)
    return LossRun(chunk_size, peak, 1000 * seconds, *errors)


def measure_chunks(linear_cross_entropy, x, weight, target, chunk_sizes,
                   repeats: int = 2) -> list[LossRun]:
    """The composed loss first, then the learner's at every chunk size."""
    composed = measure_loss(composed_loss, x, weight, target, None, repeats)
    leaves = [t.detach().clone().requires_grad_() for t in (x, weight)]
    loss = composed_loss(*leaves, target)
    loss.backward()
    reference = (loss.detach(), leaves[0].grad, leaves[1].grad)
    return [composed] + [measure_loss(linear_cross_entropy, x, weight, target, size, repeats,
                                      reference) for size in chunk_sizes]


def peak_comparison(peak: int, composed_peak: int) -> str:
    """'4.0× lower than', 'as high as' or '1.3× higher than': never a ratio below 1 called lower."""
    if peak < composed_peak:
        return f"{composed_peak / max(peak, 1):.1f}× lower than"
    if peak > composed_peak:
        return f"{peak / max(composed_peak, 1):.1f}× higher than"
    return "as high as"


def run_html(run: LossRun, composed: LossRun, rows: int, vocabulary: int) -> str:
    """What the selected chunk size measured, against the composed loss."""
    slower = run.ms / max(composed.ms, 1e-9)
    logits = rows * vocabulary * 4
    parts = [markup.paragraph(
        f"<b>chunk_size = {run.chunk_size}</b>: peak {format_bytes(run.peak_bytes)}, "
        f"{peak_comparison(run.peak_bytes, composed.peak_bytes)} the composed loss's "
        f"{format_bytes(composed.peak_bytes)} "
        f"(one float32 N × V logits tensor is {format_bytes(logits)}); forward + backward "
        f"{run.ms:.1f} ms, {slower:.2f}× the composed loss's {composed.ms:.1f} ms.")]
    parts.append(markup.paragraph(
        f"Against the composed loss: loss differs by {run.loss_error:.2g}, gradients by at "
        f"most {run.grad_error:.2g}.", muted=run.grad_error < 1e-4))
    if run.grad_error >= 1e-4 or run.loss_error >= 1e-4:
        parts.append(markup.box("warning", markup.escape(
            "Your loss or its gradients differ from the composed loss's: check the loss and "
            "the self-check's hint before reading the memory.")))
    return "".join(parts)


class ChunksFigure:
    """Peak memory and time against chunk size; the composed loss as a dashed line."""

    def __init__(self, runs: list[LossRun]):
        self.figure = new_figure(8.4, 2.8)
        self.memory, self.timing = self.figure.subplots(1, 2)
        self.figure.subplots_adjust(left=0.09, right=0.98, bottom=0.2, top=0.86, wspace=0.3)
        composed, chunked = runs[0], runs[1:]
        sizes = [run.chunk_size for run in chunked]
        for ax, values, base, title in (
                (self.memory, [r.peak_bytes / 2**20 for r in chunked], composed.peak_bytes / 2**20,
                 "peak memory (MiB), measured"),
                (self.timing, [r.ms for r in chunked], composed.ms,
                 "forward + backward (ms), best of runs")):
            ax.plot(sizes, values, "o-", color=CUSTOM, label="your chunked loss")
            ax.axhline(base, color=BUILTIN, linestyle="--", label="composed")
            ax.set_xscale("log", base=2)
            ax.set_xticks(sizes, [str(s) for s in sizes], fontsize=7)
            ax.set_ylim(0, 1.4 * max(max(values), base))  # headroom: the legend sits above the lines
            ax.set_xlabel("chunk_size", fontsize=8)
            ax.set_title(title, fontsize=9)
            ax.tick_params(labelsize=7)
            ax.grid(alpha=0.3)
        self.memory.legend(fontsize=7, loc="upper left", ncol=2, frameon=False)
        self.marks = [ax.plot([], [], "o", markersize=11, markerfacecolor="none",
                              markeredgecolor=CURRENT, markeredgewidth=2)[0]
                      for ax in (self.memory, self.timing)]
        self.frames = Frames(self.figure, self.marks)

    def show(self, run: LossRun) -> None:
        self.marks[0].set_data([run.chunk_size], [run.peak_bytes / 2**20])
        self.marks[1].set_data([run.chunk_size], [run.ms])


def fused_loss_explorer(linear_cross_entropy, *, rows: int = 512, features: int = 64,
                        vocabulary: int = 4096, chunk_sizes=(16, 32, 64, 128, 256, 512),
                        device="cpu", repeats: int = 2) -> View:
    """Chunk-size slider for the learner's ``linear_cross_entropy(x, weight, target,
    chunk_size)``: peak memory and time, measured for every chunk size when the view is built
    (and again on "measure again"), against the composed loss."""
    device = torch.device(device)
    x, weight, target = loss_inputs(rows, features, vocabulary, device)
    heading = html_pane(markup.heading(
        f"{code('linear_cross_entropy')} against {code(COMPOSED)}: N = {rows}, d = {features}, "
        f"V = {vocabulary}, float32, {device.type}"))
    readout = html_pane()
    try:
        runs = measure_chunks(linear_cross_entropy, x, weight, target, chunk_sizes, repeats)
    except Exception as error:  # the learner's code may raise anything
        readout.value = markup.box("error", markup.escape(
            error_summary(linear_cross_entropy, error)))
        return View([heading, readout], controls={}, panes={"readout": readout})
    slider = ipywidgets.SelectionSlider(options=list(chunk_sizes), value=chunk_sizes[2],
                                        description="chunk_size",
                                        layout=ipywidgets.Layout(width="420px"))
    again = ipywidgets.Button(description="measure again", icon="refresh",
                              layout=ipywidgets.Layout(width="150px"))
    drawing = ChunksFigure(runs)
    picture = image_pane(drawing.frames)

    def update():
        run = runs[1 + list(chunk_sizes).index(slider.value)]
        drawing.show(run)
        show_figure(picture, drawing.frames)
        readout.value = run_html(run, runs[0], rows, vocabulary)

    def remeasure(_):
        nonlocal drawing
        runs[:] = measure_chunks(linear_cross_entropy, x, weight, target, chunk_sizes, repeats)
        drawing = ChunksFigure(runs)
        picture.value = drawing.frames.png()
        update()

    slider.observe(lambda change: update(), names="value")
    again.on_click(remeasure)
    update()
    return View([heading, ipywidgets.HBox([slider, again]), picture, readout],
                controls={"chunk_size": slider, "measure again": again},
                panes={"plot": picture, "readout": readout})
