"""Straight-through estimator view: a slider over x shows your forward, its true derivative
(zero almost everywhere) and the surrogate gradient your backward returns instead."""

from dataclasses import dataclass

import ipywidgets
import numpy
import torch

from . import markup
from .figures import BUILTIN, CURRENT, CUSTOM, DONE, LEAF, Frames, new_figure
from .functions import apply, display_name, error_summary
from .markup import code, format_number
from .view import View, html_pane, image_pane, show_figure

STEP = 1e-6  # central-difference step for the true derivative


@dataclass
class SteCurves:
    """The Function sampled on a grid of x."""

    xs: torch.Tensor
    forward: torch.Tensor
    surrogate: torch.Tensor       # what backward returns for grad_output = 1
    true_derivative: torch.Tensor  # central differences; nan where a jump makes it undefined
    jumps: list[float]            # where forward jumps
    windows: list[tuple[float, float]]  # x ranges where the surrogate is not zero
    stand_in: torch.Tensor        # running integral of the surrogate: its slope is the surrogate


@dataclass
class StePoint:
    """The Function at one x."""

    x: float
    forward: float
    surrogate: float
    true_derivative: float | None  # None: a jump, the derivative is undefined


def _forward(function, xs: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        return apply(function, xs)


def _surrogate(function, xs: torch.Tensor) -> torch.Tensor:
    leaf = xs.detach().clone().requires_grad_(True)
    output = apply(function, leaf)
    if not output.requires_grad:
        raise ValueError(
            f"{getattr(function, '__name__', 'the Function')}'s output needs no gradient (a "
            f"{output.dtype} tensor, or one passed to ctx.mark_non_differentiable), so backward "
            "never runs and there is no surrogate to draw: return a floating tensor autograd "
            "can differentiate")
    grad, = torch.autograd.grad(output, leaf, torch.ones_like(output), allow_unused=True)
    return torch.zeros_like(xs) if grad is None else grad.detach()


def _locate_jumps(function, left: torch.Tensor, right: torch.Tensor,
                  steps: int = 40) -> list[float]:
    """Bisect every interval [left, right] at once towards where forward changes value; keep
    the places where it still changes across a vanishing interval (a jump, not a slope)."""
    low = _forward(function, left)
    for _ in range(steps):
        middle = (left + right) / 2
        same = _forward(function, middle) == low
        left, right = torch.where(same, middle, left), torch.where(same, right, middle)
    gap = (_forward(function, right) - _forward(function, left)).abs()
    return ((left + right) / 2)[gap > 1e-6].tolist()


def _windows(xs: torch.Tensor, passing: torch.Tensor) -> list[tuple[float, float]]:
    windows, start = [], None
    for i, flag in enumerate(passing.tolist() + [False]):
        if flag and start is None:
            start = i
        elif not flag and start is not None:
            windows.append((xs[start].item(), xs[i - 1].item()))
            start = None
    return windows


def running_integral(xs: torch.Tensor, slope: torch.Tensor) -> torch.Tensor:
    """f(x) = integral of ``slope`` from 0 to x, by trapezoids on the grid ``xs``: the stand-in
    whose derivative is the surrogate (0 at x = 0, or at the end of ``xs`` nearest 0)."""
    pieces = (slope[1:] + slope[:-1]) / 2 * xs.diff()
    integral = torch.cat([pieces.new_zeros(1), pieces.cumsum(0)])
    return integral - float(numpy.interp(0.0, xs.numpy(), integral.numpy()))


def ste_curves(function, x_range=(-2.0, 2.0), points: int = 401) -> SteCurves:
    """Sample forward, surrogate gradient and true derivative over ``x_range`` in float64."""
    xs = torch.linspace(*x_range, points, dtype=torch.float64)
    forward = _forward(function, xs)
    surrogate = _surrogate(function, xs)
    slope = (_forward(function, xs + STEP) - _forward(function, xs - STEP)) / (2 * STEP)
    changes = torch.nonzero(forward[1:] != forward[:-1]).flatten()
    jumps: list[float] = []
    for jump in _locate_jumps(function, xs[changes], xs[changes + 1]):
        if not jumps or jump - jumps[-1] > 1e3 * STEP:  # sign(0) = 0 makes two jumps at 0
            jumps.append(jump)
    near_jump = torch.zeros_like(xs, dtype=torch.bool)
    for jump in jumps:
        near_jump |= (xs - jump).abs() <= 2 * STEP
    true_derivative = torch.where(near_jump, torch.nan, slope)
    return SteCurves(xs, forward, surrogate, true_derivative, jumps,
                     _windows(xs, surrogate != 0), running_integral(xs, surrogate))


def ste_point(function, x: float) -> StePoint:
    """Forward, surrogate and true derivative at a single x."""
    at = torch.tensor([x - STEP, x, x + STEP], dtype=torch.float64)
    values = _forward(function, at)
    surrogate = _surrogate(function, at[1:2]).item()
    left, right = values[0].item(), values[2].item()
    jump = abs(right - left) > 1e3 * STEP
    return StePoint(x, values[1].item(), surrogate,
                    None if jump else (right - left) / (2 * STEP))


def window_text(curves: SteCurves) -> str:
    """The clipping window in words."""
    low, high = curves.xs[0].item(), curves.xs[-1].item()
    if not curves.windows:
        return "your backward returns zero for every x in view: nothing would learn"
    if curves.windows == [(low, high)]:
        return "no clipping: your backward passes the gradient for every x in view"
    spans = " and ".join(f"{format_number(a)} ≤ x ≤ {format_number(b)}"
                         for a, b in curves.windows)
    return f"clipping window: the gradient passes only for {spans}"


def point_html(function, point: StePoint, curves: SteCurves) -> str:
    """Readout for the slider's x."""
    true = ("undefined: forward jumps here" if point.true_derivative is None
            else format_number(point.true_derivative))
    rows = [[code("x"), format_number(point.x)],
            [code(f"{display_name(function)}.apply(x)"),
             format_number(point.forward, zero_sign=True)],  # round(-0.4) is -0
            ["true derivative d forward / dx", true],
            ["surrogate gradient (your backward, grad_output = 1)",
             format_number(point.surrogate)]]
    low, high = curves.xs[0].item(), curves.xs[-1].item()
    clipped = bool(curves.windows) and curves.windows != [(low, high)]
    if point.surrogate != 0:
        verdict = "inside the window: the gradient passes" if clipped else "the gradient passes"
    else:
        verdict = "outside the window: no gradient reaches x" if clipped else \
            "no gradient reaches x"
    return (markup.table(["", "value"], rows, numeric={1}) +
            markup.paragraph(f"{markup.escape(window_text(curves))}. At this x: {verdict}."))


class SteFigure:
    """Forward on the left, gradients on the right, a marker at the slider's x."""

    def __init__(self, function, curves: SteCurves):
        self.figure = new_figure(8.4, 3.0)
        left, right = self.figure.subplots(1, 2)
        self.figure.subplots_adjust(left=0.07, right=0.98, bottom=0.16, top=0.88, wspace=0.25)
        xs = curves.xs.numpy()
        forward = curves.forward.clone()
        forward[1:][curves.forward[1:] != curves.forward[:-1]] = torch.nan  # no risers at jumps
        left.plot(xs, forward.numpy(), color=BUILTIN, linewidth=2,
                  label=f"{display_name(function)}.apply(x)")
        left.plot(xs, curves.stand_in.numpy(), linestyle=":", color=CUSTOM, linewidth=1.5,
                  label="stand-in: its slope is your surrogate")
        shown = torch.cat([curves.forward, curves.stand_in])
        shown = shown[shown.isfinite()]
        if shown.numel():  # headroom above the curves for the legend
            low, high = shown.min().item(), shown.max().item()
            span = max(high - low, 1e-3)
            left.set_ylim(low - 0.1 * span, high + 0.5 * span)
        left.set_title("forward", fontsize=9)
        self.forward_dot, = left.plot([], [], "o", color=CURRENT, markersize=6)
        for a, b in curves.windows:
            if (a, b) != (xs[0], xs[-1]):
                right.axvspan(a, b, color=LEAF, alpha=0.12, linewidth=0,
                              label="clipping window")
        right.plot(xs, curves.true_derivative.numpy(), color=DONE, linewidth=2,
                   label="true derivative (0 a.e.)")
        peak = max(1.0, curves.surrogate.abs().max().item())
        for jump in curves.jumps:
            right.annotate("", xy=(jump, 1.35 * peak), xytext=(jump, 0), annotation_clip=False,
                           arrowprops=dict(arrowstyle="-|>", color=DONE, linewidth=1.2))
        if curves.jumps:
            right.plot([], [], marker="^", linestyle="", color=DONE,
                       label="jump: undefined (a spike)")
        right.plot(xs, curves.surrogate.numpy(), color=CUSTOM, linewidth=2,
                   label="surrogate (your backward)")
        self.grad_dot, = right.plot([], [], "o", color=CURRENT, markersize=6)
        right.set_title("backward, grad_output = 1", fontsize=9)
        right.set_ylim(-0.2 * peak, 2.0 * peak)  # headroom for the legend
        self.lines = [ax.axvline(0, color=CURRENT, linewidth=1, alpha=0.6)
                      for ax in (left, right)]
        for ax in (left, right):
            ax.set_xlabel("x", fontsize=8)
            ax.tick_params(labelsize=7)
        left.legend(fontsize=7, loc="upper left", frameon=False)
        entries = len(right.get_legend_handles_labels()[0])  # two columns fit four labels
        right.legend(fontsize=7, loc="upper left", frameon=False, ncol=2 if entries >= 4 else 1)
        self.frames = Frames(self.figure, [*self.lines, self.forward_dot, self.grad_dot])

    def show(self, point: StePoint) -> None:
        """Move the markers to ``point``."""
        self.forward_dot.set_data([point.x], [point.forward])
        self.grad_dot.set_data([point.x], [point.surrogate])
        for line in self.lines:
            line.set_xdata([point.x, point.x])


def ste_explorer(function, x_range=(-2.0, 2.0), x: float = 0.5) -> View:
    """Slider over x for a straight-through estimator such as ``SignSTE`` or ``RoundSTE``."""
    readout = html_pane()
    slider = ipywidgets.FloatSlider(value=x, min=x_range[0], max=x_range[1], step=0.01,
                                    description="x", continuous_update=True,
                                    readout_format=".2f",
                                    layout=ipywidgets.Layout(width="420px"))
    heading = html_pane(markup.heading(
        f"{code(display_name(function))}: forward, true derivative and surrogate gradient"))
    try:
        curves = ste_curves(function, x_range)
    except Exception as error:  # the learner's Function may raise anything
        readout.value = markup.box("error", markup.escape(error_summary(function, error)))
        return View([heading, readout], controls={"x": slider}, panes={"readout": readout})
    drawing = SteFigure(function, curves)
    picture = image_pane(drawing.frames)

    def update():
        point = ste_point(function, slider.value)
        drawing.show(point)
        show_figure(picture, drawing.frames)
        readout.value = point_html(function, point, curves)

    slider.observe(lambda change: update(), names="value")
    update()
    return View([heading, slider, picture, readout], controls={"x": slider},
                panes={"plot": picture, "readout": readout})
