"""Gradient-check explorer: the Jacobian your backward implies against the one central
differences measure, side by side, with the worst entry pointed at."""

import math
from dataclasses import dataclass

import ipywidgets
import torch
from matplotlib.patches import Rectangle

from . import markup
from .figures import CURRENT, new_figure
from .functions import apply, display_name, error_summary, input_names
from .markup import code, format_number
from .view import View, html_pane, image_pane, show_figure

ATOL, RTOL = 1e-5, 1e-3  # torch.autograd.gradcheck's defaults


@dataclass
class JacobianComparison:
    """Per differentiable input k, ``analytic[k]`` and ``numerical[k]`` are
    (output elements, input elements) matrices: d output[i] / d input[j]."""

    function: str
    names: list[str]
    input_shapes: list[tuple]
    output_shape: tuple
    analytic: list[torch.Tensor]
    numerical: list[torch.Tensor]
    eps: float

    def difference(self, k: int) -> torch.Tensor:
        return self.analytic[k] - self.numerical[k]

    def worst(self, k: int) -> tuple[int, int]:
        """(row, column) of the largest |analytic - numerical| for input k."""
        error = self.difference(k).abs()
        flat = int(torch.argmax(error)) if error.numel() else 0
        return divmod(flat, max(error.shape[1], 1))

    def max_error(self, k: int) -> float:
        return self.difference(k).abs().max().item() if self.analytic[k].numel() else 0.0

    def agrees(self, k: int, atol: float = ATOL, rtol: float = RTOL) -> bool:
        """gradcheck's test: |analytic - numerical| <= atol + rtol * |numerical| everywhere."""
        return bool((self.difference(k).abs() <= atol + rtol * self.numerical[k].abs()).all())

    def worst_input(self) -> int:
        """The input whose Jacobian disagrees most."""
        return max(range(len(self.names)), key=self.max_error)


def _float64(value):
    if isinstance(value, torch.Tensor) and value.is_floating_point():
        return value.detach().to(torch.float64).clone()
    return value


def _flat_output(function, args: list) -> torch.Tensor:
    output = apply(function, *args)
    outputs = output if isinstance(output, (tuple, list)) else (output,)
    tensors = [o.reshape(-1) for o in outputs
               if isinstance(o, torch.Tensor) and o.is_floating_point()]
    if not tensors:
        raise TypeError(f"forward returned {type(output).__name__}: return a floating tensor")
    return torch.cat(tensors)


def _with(args: list, positions: list[int], values) -> list:
    args = list(args)
    for position, value in zip(positions, values):
        args[position] = value
    return args


def analytic_jacobian(function, args: list, wrt: list[int]) -> list[torch.Tensor]:
    """The Jacobian your backward implies, one backward per output element."""
    def f(*tensors):
        return _flat_output(function, _with(args, wrt, tensors))

    blocks = torch.autograd.functional.jacobian(f, tuple(args[i] for i in wrt), strict=False)
    return [block.reshape(block.shape[0], -1) for block in blocks]


@torch.no_grad()
def numerical_jacobian(function, args: list, wrt: list[int], eps: float) -> list[torch.Tensor]:
    """Central differences: column j is (f(x + eps e_j) - f(x - eps e_j)) / (2 eps)."""
    blocks = []
    for position in wrt:
        base = args[position]
        columns = []
        for j in range(base.numel()):
            step = torch.zeros_like(base).view(-1)
            step[j] = eps
            step = step.view_as(base)
            plus = _flat_output(function, _with(args, [position], [base + step]))
            minus = _flat_output(function, _with(args, [position], [base - step]))
            columns.append((plus - minus) / (2 * eps))
        blocks.append(torch.stack(columns, dim=1) if columns else torch.zeros(0, 0))
    return blocks


def compare_jacobians(function, *inputs, eps: float = 1e-6, names=None) -> JacobianComparison:
    """Both Jacobians of ``function`` at ``inputs`` (floating tensors cast to float64)."""
    names = list(names) if names is not None else input_names(function, len(inputs))
    args = [_float64(value) for value in inputs]
    wrt = [i for i, value in enumerate(args)
           if isinstance(value, torch.Tensor) and value.is_floating_point()]
    if not wrt:
        raise ValueError("no floating-point tensor input to differentiate")
    with torch.no_grad():
        output_shape = tuple(_flat_output(function, args).shape)
    return JacobianComparison(display_name(function), [names[i] for i in wrt],
                              [tuple(args[i].shape) for i in wrt], output_shape,
                              analytic_jacobian(function, args, wrt),
                              numerical_jacobian(function, args, wrt, eps), eps)


def element_name(name: str, flat: int, shape: tuple) -> str:
    """``x``, 5, (2, 3) -> ``'x[1, 2]'``; a 0-dim tensor is just its name."""
    if not shape:
        return name
    index = []
    for size in reversed(shape):
        flat, rest = divmod(flat, size)
        index.append(rest)
    return f"{name}[{', '.join(map(str, reversed(index)))}]"


def summary_html(comparison: JacobianComparison, k: int) -> str:
    """Verdict for input k and the worst entry, in words."""
    name = comparison.names[k]
    row, column = comparison.worst(k)
    analytic = comparison.analytic[k][row, column].item()
    numerical = comparison.numerical[k][row, column].item()
    where = (f"d {element_name('output', row, comparison.output_shape)} / "
             f"d {element_name(name, column, comparison.input_shapes[k])}")
    worst = (f"Largest difference {format_number(abs(analytic - numerical))} at "
             f"{code(where)}: your backward gives {format_number(analytic)}, central "
             f"differences give {format_number(numerical)}.")
    if comparison.agrees(k):
        verdict = markup.box("ok", f"For {code(name)} the two Jacobians agree within gradcheck's "
                                   f"tolerance (atol {ATOL:g}, rtol {RTOL:g}). " + worst)
    else:
        verdict = markup.box("warning", f"For {code(name)} your backward disagrees with central "
                                        f"differences. {worst} The red square marks it.")
    others = [f"{code(n)} {'✓' if comparison.agrees(i) else '✗'}"
              for i, n in enumerate(comparison.names)]
    return verdict + markup.paragraph("All inputs: " + ", ".join(others) +
                                      f" (eps = {comparison.eps:.0e})", muted=True)


def draw_comparison(figure, comparison: JacobianComparison, k: int) -> None:
    """Three heatmaps for input k: analytic, numerical (one colour scale) and their difference."""
    figure.clear()
    analytic, numerical = comparison.analytic[k], comparison.numerical[k]
    difference = comparison.difference(k)
    limit = max(analytic.abs().max().item(), numerical.abs().max().item(), 1e-12)
    spread = max(difference.abs().max().item(), 1e-12)
    row, column = comparison.worst(k)
    name = comparison.names[k]
    panels = [(analytic, limit, "analytic: your backward"),
              (numerical, limit, f"numerical: central differences"),
              (difference, spread, "analytic − numerical")]
    axes = figure.subplots(1, 3)
    for ax, (matrix, scale, title) in zip(axes, panels):
        image = ax.imshow(matrix.numpy(), cmap="RdBu_r", vmin=-scale, vmax=scale,
                          interpolation="nearest", aspect="auto")
        ax.set_title(title, fontsize=9)
        ax.set_xlabel(f"{name} element", fontsize=8)
        ax.tick_params(labelsize=7)
        _integer_ticks(ax, matrix.shape)
        colorbar = figure.colorbar(image, ax=ax, fraction=0.08, pad=0.03)
        colorbar.ax.tick_params(labelsize=7)
        ax.add_patch(Rectangle((column - 0.5, row - 0.5), 1, 1, fill=False, edgecolor=CURRENT,
                               linewidth=2.0))
    axes[0].set_ylabel("output element", fontsize=8)


def _integer_ticks(ax, shape) -> None:
    rows, columns = shape
    ax.set_xticks(range(0, columns, max(1, math.ceil(columns / 8))))
    ax.set_yticks(range(0, rows, max(1, math.ceil(rows / 8))))


def explore_gradients(function, *inputs, eps: float = 1e-6, names=None) -> View:
    """Analytic vs numerical Jacobian heatmaps of ``function`` at ``inputs``, with an input
    selector and a slider for the finite-difference step eps."""
    names = list(names) if names is not None else input_names(function, len(inputs))
    summary = html_pane()
    figure = new_figure(9.0, 2.9)
    picture = image_pane(figure)
    choices = [n for n, v in zip(names, inputs)
               if isinstance(v, torch.Tensor) and v.is_floating_point()]
    which = ipywidgets.Dropdown(options=choices, description="d output / d",
                                style={"description_width": "initial"},
                                layout=ipywidgets.Layout(width="220px"))
    step = ipywidgets.FloatLogSlider(value=eps, base=10, min=-10, max=-1, step=0.5,
                                     description="eps", readout_format=".0e",
                                     layout=ipywidgets.Layout(width="340px"))
    state = {}

    def recompute():
        try:
            state["comparison"] = compare_jacobians(function, *inputs, eps=step.value,
                                                    names=names)
        except Exception as error:  # the learner's Function may raise anything
            state["comparison"] = None
            summary.value = markup.box("error", markup.escape(error_summary(function, error)))
            return
        redraw()

    def redraw():
        comparison = state.get("comparison")
        if comparison is None:
            return
        k = comparison.names.index(which.value)
        draw_comparison(figure, comparison, k)
        figure.subplots_adjust(left=0.06, right=0.97, bottom=0.17, top=0.88, wspace=0.45)
        show_figure(picture, figure)
        summary.value = summary_html(comparison, k)

    recompute()
    if state.get("comparison") is not None and not state["comparison"].agrees(
            which.index or 0):
        pass
    elif state.get("comparison") is not None:
        worst = state["comparison"].worst_input()
        if not state["comparison"].agrees(worst):
            which.value = state["comparison"].names[worst]
    which.observe(lambda change: redraw(), names="value")
    step.observe(lambda change: recompute(), names="value")
    heading = markup.heading(f"Jacobian check of {code(display_name(function))}: "
                             "each entry is d output[row] / d input[column]")
    return View([html_pane(heading), ipywidgets.HBox([which, step]), summary, picture],
                controls={"input": which, "eps": step},
                panes={"summary": summary, "heatmaps": picture})
