"""Checkpointing view: a segments slider against measured saved-activation bytes and the
cost of recomputation, in measured time or counted FLOPs."""

import time
from dataclasses import dataclass, field

import ipywidgets
import torch


from . import markup
from .figures import BUILTIN, CURRENT, CUSTOM, DONE, Frames, new_figure
from .functions import display_name, error_summary
from .markup import code, format_bytes
from .meters import ActivationBytes, CountFlops
from .view import View, html_pane, image_pane, show_figure

PEAK = "#F3D9A4"  # a light tint of CUSTOM: the peak contains what is kept


@dataclass
class CheckpointRun:
    """One forward and backward of the model; ``segments`` None means no checkpointing."""

    segments: int | None
    saved_bytes: int   # activations kept from forward until backward, parameters excluded
    peak_bytes: int    # the most kept at once, recomputed segments included
    forward_flops: int  # matmul FLOPs, counted
    backward_flops: int  # including the recomputed forwards
    forward_ms: float = 0.0
    backward_ms: float = 0.0
    params_without_grad: list[str] = field(default_factory=list)

    def cost(self, unit: str) -> tuple[float, float]:
        """(forward, backward) in ms for "time", in MFLOP for "flops"."""
        if unit == "time":
            return self.forward_ms, self.backward_ms
        return self.forward_flops / 1e6, self.backward_flops / 1e6

    @property
    def label(self) -> str:
        if self.segments is None:
            return "no checkpoints"
        return f"{self.segments} segment" + "s" * (self.segments != 1)


def _timed(run, x: torch.Tensor, parameters: list, repeats: int) -> tuple[float, float]:
    forward_times, backward_times = [], []
    for _ in range(repeats):
        start = time.perf_counter()
        output = run(x)
        middle = time.perf_counter()
        torch.autograd.backward(output, torch.ones_like(output))
        end = time.perf_counter()
        forward_times.append(middle - start)
        backward_times.append(end - middle)
        for parameter in parameters:
            parameter.grad = None
    return 1000 * min(forward_times), 1000 * min(backward_times)


def measure_run(checkpoint_sequential, layers, x: torch.Tensor, segments: int | None,
                repeats: int = 3) -> CheckpointRun:
    """Measure ``checkpoint_sequential(layers, segments, x)``, or the plain model for None;
    ``repeats=0`` counts bytes and FLOPs only, without timing."""
    named = [(n, p) for n, p in torch.nn.Sequential(*layers).named_parameters()
             if p.requires_grad]
    parameters = [p for _, p in named]
    x = x.detach().clone().requires_grad_(True)

    def run(inputs):
        if segments is None:
            for layer in layers:
                inputs = layer(inputs)
            return inputs
        return checkpoint_sequential(layers, segments, inputs)

    with CountFlops() as counter, ActivationBytes(parameters) as meter:
        output = run(x)
        kept, forward_flops = meter.now, counter.total
        torch.autograd.backward(output, torch.ones_like(output))
        backward_flops = counter.total - forward_flops
    del output
    missing = [n for n, p in named if p.grad is None]
    for parameter in parameters:
        parameter.grad = None
    forward_ms, backward_ms = _timed(run, x, parameters, repeats) if repeats else (0.0, 0.0)
    return CheckpointRun(segments, kept, meter.peak, forward_flops, backward_flops, forward_ms,
                         backward_ms, missing)


def layers_of(build_model) -> list:
    """The layers of a model, built by ``build_model()`` (or given as a Sequential)."""
    model = build_model if isinstance(build_model, torch.nn.Module) else build_model()
    return list(model.children()) if isinstance(model, torch.nn.Sequential) else list(model)


def run_html(function, run: CheckpointRun, plain: CheckpointRun, layer_count: int,
             unit: str = "time") -> str:
    """What the selected run measured, against no checkpointing."""
    if run.segments is None:
        return markup.paragraph("Without checkpointing every layer's activations stay saved.")
    saving = plain.saved_bytes / run.saved_bytes if run.saved_bytes else float("inf")
    recompute = run.backward_flops / max(plain.backward_flops, 1)
    cost = (f"backward does {recompute:.2f}× the FLOPs of a plain backward, because it runs "
            "each checkpointed segment's forward again")
    if unit == "time":
        slower = sum(run.cost("time")) / max(sum(plain.cost("time")), 1e-9)
        cost += f"; forward + backward take {slower:.2f}× as long"
    parts = [markup.paragraph(
        f"<b>{run.label} over {layer_count} layers</b>: forward keeps "
        f"{format_bytes(run.saved_bytes)} for backward, {saving:.1f}× less than the "
        f"{format_bytes(plain.saved_bytes)} kept without checkpointing; while backward "
        f"recomputes one segment at a time the most kept at once is "
        f"{format_bytes(run.peak_bytes)}. The price: {cost}."),
        markup.paragraph("Fewer segments keep less between the passes but recompute bigger "
                         "pieces, each alive during its own backward: the peak is about "
                         "what is kept plus the largest segment's activations.", muted=True)]
    if run.params_without_grad:
        names = ", ".join(run.params_without_grad[:4])
        parts.append(markup.box("warning", markup.escape(
            f"{len(run.params_without_grad)} parameters got no gradient ({names}): "
            f"{display_name(function)} must let .grad accumulate on parameters used inside "
            "the block, e.g. torch.autograd.backward(outputs, grad_outputs) after "
            "recomputing, not torch.autograd.grad(outputs, inputs=input).")))
    return "".join(parts)


class RunsFigure:
    """Bars of kept and peak bytes and of forward + backward cost per run, built once and
    restyled."""

    def __init__(self, runs: list[CheckpointRun], unit: str = "time"):
        self.unit = unit
        self.figure = new_figure(8.4, 1.1 + 0.26 * len(runs))
        self.memory, self.timing = self.figure.subplots(1, 2, sharey=True)
        height = self.figure.get_figheight()
        self.figure.subplots_adjust(left=0.13, right=0.98, bottom=0.75 / height,
                                    top=1 - 0.32 / height, wspace=0.08)
        rows = list(range(len(runs)))
        zeros = [0.0] * len(runs)
        self.peak = self.memory.barh(rows, zeros, color=PEAK, label="peak during backward")
        self.saved = self.memory.barh(rows, zeros, height=0.5, color=CUSTOM,
                                      label="kept after forward")
        self.forward = self.timing.barh(rows, zeros, color=BUILTIN, label="forward")
        self.backward = self.timing.barh(rows, zeros, color=DONE,
                                         label="backward (with recompute)")
        self.memory.set_yticks(rows, [run.label for run in runs], fontsize=8)
        self.memory.invert_yaxis()
        peak = max(run.peak_bytes for run in runs)
        self.byte_unit, self.unit_bytes = ("MiB", 2**20) if peak >= 2**20 else ("KiB", 2**10)
        self.memory.set_title(f"activations saved for backward ({self.byte_unit}), measured",
                              fontsize=9)
        self.memory.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.1), ncol=2,
                           frameon=False)
        self.timing.set_title("time (ms), best of 3" if unit == "time"
                              else "matmul work (MFLOP), counted", fontsize=9)
        self.timing.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.1), ncol=2,
                           frameon=False)
        for ax in (self.memory, self.timing):
            ax.tick_params(labelsize=7)
            ax.grid(axis="x", alpha=0.3)
            ax.set_axisbelow(True)
        self.frames = Frames(self.figure, [*self.peak, *self.saved, *self.forward,
                                           *self.backward])
        self.limits = None

    def show(self, runs: list[CheckpointRun], selected: int | None) -> None:
        """Set the bars to ``runs`` and outline the one with ``selected`` segments."""
        for k, run in enumerate(runs):
            chosen = run.segments == selected
            style = dict(alpha=1.0 if chosen else 0.5, edgecolor=CURRENT if chosen else "none",
                         linewidth=2)
            forward, backward = run.cost(self.unit)
            self.peak[k].set(width=run.peak_bytes / self.unit_bytes, **style)
            self.saved[k].set(width=run.saved_bytes / self.unit_bytes, **style)
            self.forward[k].set(width=forward, **style)
            self.backward[k].set(x=forward, width=backward, **style)
        limits = (1.05 * max(r.peak_bytes for r in runs) / self.unit_bytes or 1,
                  1.05 * max(sum(r.cost(self.unit)) for r in runs) or 1)
        if limits != self.limits:  # new measurements: new axes
            self.limits = limits
            self.memory.set_xlim(0, limits[0])
            self.timing.set_xlim(0, limits[1])
            self.frames.restage()


def measure_all(checkpoint_sequential, layers, x: torch.Tensor,
                repeats: int = 3) -> list[CheckpointRun]:
    """No checkpointing, then every segment count from 1 to one segment per layer."""
    return [measure_run(checkpoint_sequential, layers, x, s, repeats)
            for s in [None, *range(1, len(layers) + 1)]]


def checkpointing_explorer(checkpoint_sequential, build_model, x: torch.Tensor,
                           segments: int = 2, cost: str = "time") -> View:
    """Segments slider for the learner's ``checkpoint_sequential(layers, segments, x)`` on the
    layers ``build_model()`` returns: saved bytes and the price in recomputation, measured for
    every segment count when the view is built (and again on "measure again").

    ``cost="time"`` shows measured milliseconds; ``cost="flops"`` shows counted matmul FLOPs,
    which are the same on every run (for notebooks executed at build time).
    """
    if cost not in ("time", "flops"):
        raise ValueError(f'cost must be "time" or "flops", not {cost!r}')
    repeats = 3 if cost == "time" else 0
    torch.manual_seed(0)
    layers = layers_of(build_model)
    slider = ipywidgets.IntSlider(value=min(segments, len(layers)), min=1, max=len(layers),
                                  description="segments", continuous_update=True,
                                  layout=ipywidgets.Layout(width="420px"))
    readout = html_pane()
    heading = html_pane(markup.heading(
        f"{code('checkpoint_sequential')} over {len(layers)} layers, input "
        f"{markup.format_shape(x.shape)}"))
    try:
        runs = measure_all(checkpoint_sequential, layers, x, repeats)
    except Exception as error:  # the learner's code may raise anything
        readout.value = markup.box("error", markup.escape(
            error_summary(checkpoint_sequential, error)))
        return View([heading, slider, readout], controls={"segments": slider},
                    panes={"readout": readout})
    drawing = RunsFigure(runs, cost)
    drawing.show(runs, slider.value)
    picture = image_pane(drawing.frames)

    def update():
        drawing.show(runs, slider.value)
        show_figure(picture, drawing.frames)
        readout.value = run_html(checkpoint_sequential, runs[slider.value], runs[0],
                                 len(layers), cost)

    slider.observe(lambda change: update(), names="value")
    update()
    controls, bar = {"segments": slider}, [slider]
    if cost == "time":
        again = ipywidgets.Button(description="measure again", icon="refresh",
                                  layout=ipywidgets.Layout(width="150px"))

        def remeasure(_):
            runs[:] = measure_all(checkpoint_sequential, layers, x, repeats)
            update()

        again.on_click(remeasure)
        controls["measure again"] = again
        bar.append(again)
    return View([heading, ipywidgets.HBox(bar), picture, readout], controls=controls,
                panes={"plot": picture, "readout": readout})
