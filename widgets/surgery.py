"""Gradient surgery view: one backward of a domain-adversarial model with the learner's
GradientReversal and ClipGradientNorm switched on or off between the features and the critic;
each layer's weight-gradient norm, and the log of what every hook saw."""

import warnings
from dataclasses import dataclass, field

import ipywidgets
import torch
from torch import nn

from . import markup
from .figures import BUILTIN, CUSTOM, DONE, INK, Frames, new_figure
from .functions import error_summary
from .markup import code, format_number
from .view import View, html_pane, image_pane, on_change, show_figure


@dataclass(frozen=True)
class Surgery:
    """What sits between the features and the critic: ``critic(reversal(clip(h)))``."""

    reversal: bool = False
    alpha: float = 1.0
    clipping: bool = False
    max_norm: float = 0.05


@dataclass
class HookRecord:
    """What one hook saw, in the order backward ran the hooks."""

    where: str
    kind: str  # "module hook" or "tensor hook"
    norm: float
    largest_row: float  # the largest L2 norm of a row (last dim) of the gradient
    cosine: float | None = None  # with what the critic sent back (tensor hooks only)


@dataclass
class SurgeryTrace:
    norms: dict[str, float] = field(default_factory=dict)  # layer name -> weight-grad norm
    log: list[HookRecord] = field(default_factory=list)
    error: str | None = None


def _row_norms(grad: torch.Tensor) -> torch.Tensor:
    return torch.linalg.vector_norm(grad.detach().double(), dim=-1)


def _record(log, where, kind, grad, sent=None):
    cosine = None
    if sent is not None:
        cosine = torch.nn.functional.cosine_similarity(
            grad.detach().double().flatten(), sent.double().flatten(), dim=0).item()
    log.append(HookRecord(where, kind, grad.detach().double().norm().item(),
                          _row_norms(grad).max().item(), cosine))


def surgery_trace(model: nn.Module, batch, losses, reversal_function, clip_function,
                  surgery: Surgery) -> SurgeryTrace:
    """One backward of ``sum(losses(model, batch, transform))`` with ``surgery`` applied by
    the learner's Functions; every hook registered here is removed again."""
    log: list[HookRecord] = []
    handles = []
    sent: dict[str, torch.Tensor] = {}

    def transform(h):
        branch = h.view_as(h)  # the critic's branch of h: its hook sees what surgery passed on
        handles.append(branch.register_hook(
            lambda grad: _record(log, "features ← surgery", "tensor hook", grad,
                                 sent.get("critic"))))
        out = branch
        if surgery.clipping:
            out = clip_function.apply(out, surgery.max_norm)
        if surgery.reversal:
            out = reversal_function.apply(out, surgery.alpha)
        out = out.view_as(out)  # the critic's input: its hook sees what the critic sent

        def critic_sent(grad):
            sent["critic"] = grad.detach()
            _record(log, "surgery ← critic", "tensor hook", grad)
        handles.append(out.register_hook(critic_sent))
        return out

    for name, layer in model.named_modules():
        if isinstance(layer, nn.Linear):
            handles.append(layer.register_full_backward_hook(
                lambda module, grad_input, grad_output, name=name:
                _record(log, name, "module hook", grad_output[0])))
    try:
        model.zero_grad(set_to_none=True)
        with warnings.catch_warnings():  # the first layer's input (the data) needs no grad
            warnings.filterwarnings("ignore", message="Full backward hook is firing")
            sum(losses(model, batch, transform)).backward()
    except Exception as error:  # the learner's Functions may raise anything
        function = clip_function if surgery.clipping else reversal_function
        return SurgeryTrace(error=error_summary(function, error))
    finally:
        for handle in handles:
            handle.remove()
    norms = {name: layer.weight.grad.norm().item() for name, layer in model.named_modules()
             if isinstance(layer, nn.Linear) and layer.weight.grad is not None}
    return SurgeryTrace(norms, log)


def reversal_cosine(trace: SurgeryTrace) -> float | None:
    """The cosine between what the features got from the surgery and what the critic sent."""
    return next((r.cosine for r in trace.log if r.cosine is not None), None)


def summary_text(trace: SurgeryTrace, surgery: Surgery) -> str:
    """One sentence on what the surgery did to the critic's gradient."""
    passed = next((r for r in trace.log if r.where == "features ← surgery"), None)
    if passed is None:
        return "no gradient reached the features from the critic"
    cosine = reversal_cosine(trace)
    direction = ("reversed" if cosine is not None and cosine < -0.99 else
                 "kept" if cosine is not None and cosine > 0.99 else "turned")
    text = (f"the features received the critic's gradient {direction} (cosine "
            f"{format_number(cosine)}), largest row norm {format_number(passed.largest_row)}")
    if surgery.clipping:
        text += f" (max_norm {format_number(surgery.max_norm)})"
    return text


def log_html(trace: SurgeryTrace, surgery: Surgery) -> str:
    """The hook log as a table, then the summary line."""
    if trace.error:
        return markup.box("error", markup.escape(trace.error))
    rows = [[str(i), code(r.where), r.kind, format_number(r.norm), format_number(r.largest_row),
             "—" if r.cosine is None else format_number(r.cosine)]
            for i, r in enumerate(trace.log, 1)]
    table = markup.table(["#", "where", "hook", "grad norm", "largest row",
                          "cosine with what the critic sent"], rows, numeric={0, 3, 4, 5})
    return table + markup.paragraph(markup.escape(summary_text(trace, surgery)))


def _part(name: str) -> str:
    return name.split(".")[0]


class NormsFigure:
    """Horizontal bars: each layer's weight-gradient norm, and an outline without surgery."""

    def __init__(self, baseline: dict[str, float]):
        self.names = list(baseline)
        self.figure = new_figure(6.0, 0.35 * len(self.names) + 1.0)
        self.axes = self.figure.subplots()
        self.figure.subplots_adjust(left=0.28, right=0.97, top=0.9, bottom=0.22)
        positions = range(len(self.names))
        colors = [CUSTOM if _part(n) == "domain_head" else BUILTIN if _part(n) == "features"
                  else DONE for n in self.names]
        self.bars = self.axes.barh(positions, list(baseline.values()), color=colors)
        self.axes.barh(positions, list(baseline.values()), fill=False, edgecolor=INK,
                       linewidth=0.8, linestyle="--")
        self.axes.set_yticks(list(positions), self.names, fontsize=8)
        self.axes.invert_yaxis()
        self.axes.set_xscale("log")
        self.axes.tick_params(axis="x", labelsize=7)
        self.axes.set_xlabel("weight-gradient norm (dashed: no surgery)", fontsize=8)
        self.labels = [self.axes.text(0, i, "", va="center", fontsize=7, color=INK)
                       for i in positions]
        self.baseline = baseline
        self.frames = Frames(self.figure, [*self.bars, *self.labels])

    def show(self, norms: dict[str, float]) -> None:
        values = [norms.get(name, 0.0) for name in self.names]
        low = min([v for v in [*values, *self.baseline.values()] if v > 0], default=1e-3)
        high = max([*values, *self.baseline.values(), low * 10])
        self.axes.set_xlim(low / 3, high * 30)  # room for the labels
        for name, bar, label, value in zip(self.names, self.bars, self.labels, values):
            bar.set_width(max(value, low / 3))
            label.set_position((max(value, self.baseline[name]) * 1.15, label.get_position()[1]))
            label.set_text(f"{format_number(value)}  ({change_text(value, self.baseline[name])})")
        self.frames.restage()


def change_text(value: float, baseline: float) -> str:
    """``value`` against the norm without surgery: 'same', '+12%', '-40%'."""
    if baseline == 0:
        return "same" if value == 0 else "new"
    change = value / baseline - 1
    return "same" if abs(change) < 5e-4 else f"{change:+.1%}"


def surgery_formula(surgery: Surgery) -> str:
    """What the critic's input goes through, the ticked parts only: 'critic(reversal(h))'."""
    parts = ["critic"] + ["reversal"] * surgery.reversal + ["clip"] * surgery.clipping
    return "(".join(parts) + "(h" + ")" * len(parts)


def surgery_explorer(model: nn.Module, batch, losses, reversal_function,
                     clip_function) -> View:
    """Switch reversal and clipping on and off; see per-layer gradient norms and the hooks' log.
    ``losses(model, batch, surgery)`` returns the losses to add; the critic's input passes
    through ``surgery``."""
    heading = html_pane()
    controls = {
        "reversal": ipywidgets.Checkbox(value=True, description="gradient reversal",
                                        indent=False),
        "alpha": ipywidgets.FloatSlider(value=1.0, min=0.0, max=2.0, step=0.1,
                                        description="alpha"),
        "clipping": ipywidgets.Checkbox(value=False, description="clip rows", indent=False),
        "max_norm": ipywidgets.FloatLogSlider(value=2e-3, base=10, min=-5, max=-1, step=0.25,
                                              description="max_norm", readout_format=".1e"),
    }
    log = html_pane()
    baseline = surgery_trace(model, batch, losses, reversal_function, clip_function, Surgery())
    drawing = NormsFigure(baseline.norms)
    picture = image_pane(drawing.frames)

    def surgery() -> Surgery:
        return Surgery(controls["reversal"].value, controls["alpha"].value,
                       controls["clipping"].value, controls["max_norm"].value)

    def update():
        chosen = surgery()
        heading.value = markup.heading(
            f"{code(surgery_formula(chosen))}: gradient norms and what each hook saw")
        trace = surgery_trace(model, batch, losses, reversal_function, clip_function, chosen)
        if not trace.error:
            drawing.show(trace.norms)
            show_figure(picture, drawing.frames)
        log.value = log_html(trace, chosen)

    on_change(controls.values(), update)
    update()
    row = ipywidgets.HBox([controls["reversal"], controls["alpha"], controls["clipping"],
                           controls["max_norm"]])
    return View([heading, row, picture, log], controls=controls,
                panes={"heading": heading, "plot": picture, "log": log})
