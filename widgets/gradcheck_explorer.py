"""Gradient-check explorer: the Jacobian your backward implies against the one central
differences measure, side by side, with the worst entry pointed at.

Under a failed self-check it also says what it checks and what it cannot see: it compares your
backward with *your own* forward, so a forward that is wrong against the reference, a gradient
of the wrong shape that the engine sums for you, or a gradient that changes when one input
alone requires grad all look right in the heatmaps. The last two it probes itself and shows;
for the rest it says in one line that the failure is elsewhere (the hint is shown just above it).
"""

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import ipywidgets
import torch
from matplotlib import colormaps, patheffects
from matplotlib.patches import Rectangle

from . import markup
from .figures import INK, Frames, css_width, new_figure
from .functions import display_name, error_summary, input_names
from .gradcheck_probes import backward_notes, flat_output, float64_copy, floating_outputs
from .gradcheck_verdict import (AGREES_KIND, ATOL, CHANGES_INPUT, DISAGREES, LARGEST_EPS,
                                NOISY_KIND, ROUNDING_ULPS, RTOL, UNJUDGEABLE, Verdict, error_bound,
                                judge)
from .gradcheck_words import (AGREES, NOISY, UNJUDGED, WHAT_IT_CHECKS, element_name,
                              failure_html, output_element, precision_words, summary_html)
from .markup import code
from .view import View, html_pane, show_figure

MAX_ENTRIES = 100_000  # beyond this the heatmaps are unreadable and the wait is long
NAN_COLOUR = "#F0E442"  # yellow: off the red-white-blue scale, so a nan entry stands out
# an entry's outline: near black on a white halo, so that one of the two stands out on every
# colour a cell can take (the halo on dark red and dark blue, the black on white and yellow)
MARK_COLOUR, MARK_HALO = INK, "white"


def mark_style() -> dict:
    """A Rectangle's keywords for an outline: unfilled, above the image and the axes' frame
    (an edge cell's outline would lie under the frame), its halo behind the black line."""
    return dict(fill=False, edgecolor=MARK_COLOUR, linewidth=2.0, zorder=3, clip_on=False,
                path_effects=[patheffects.withStroke(linewidth=5.0, foreground=MARK_HALO)])


def heatmap_colours():
    """Red-white-blue for values, yellow for nan and inf (matplotlib draws those blank)."""
    return colormaps["RdBu_r"].with_extremes(bad=NAN_COLOUR)


class JacobianTooLarge(ValueError):
    """The inputs are too big to draw a Jacobian for."""


@dataclass
class JacobianComparison:
    """Per differentiable input k, ``analytic[k]`` and ``numerical[k]`` are
    (output elements, input elements) matrices: d output[i] / d input[j], the floating outputs
    (of shapes ``output_shapes``) flattened one after another into the rows."""

    function: str
    names: list[str]
    input_shapes: list[tuple]
    output_shapes: list[tuple]
    analytic: list[torch.Tensor]
    numerical: list[torch.Tensor]
    eps: float
    # per input, per output element (row): the unit roundoff of the output's own dtype times
    # the output's magnitude, |y| * finfo(dtype).eps: the rounding of one output value
    ulps: list[torch.Tensor] | None = None
    output_dtypes: list[torch.dtype] = field(default_factory=list)
    # central differences at any step: measure(eps) -> one matrix per input
    measure: Callable | None = field(default=None, repr=False, compare=False)
    # the inputs one call of forward changed in place (version counter or values): central
    # differences of such a forward cannot be taken, each call moving the input
    changed: list[str] = field(default_factory=list)
    _measured: dict = field(default_factory=dict, repr=False, compare=False)
    _verdicts: dict = field(default_factory=dict, repr=False, compare=False)

    def difference(self, k: int) -> torch.Tensor:
        return self.analytic[k] - self.numerical[k]

    def worst(self, k: int) -> tuple[int, int]:
        """(row, column) of the largest |analytic - numerical| for input k (a nan first)."""
        error = self.difference(k).abs().nan_to_num(nan=math.inf)
        flat = int(torch.argmax(error)) if error.numel() else 0
        return divmod(flat, max(error.shape[1], 1))

    def max_error(self, k: int) -> float:
        if not self.analytic[k].numel():
            return 0.0
        return self.difference(k).abs().nan_to_num(nan=math.inf).max().item()

    def nans(self, k: int) -> int:
        """How many entries of input k's analytic Jacobian are nan or inf."""
        return int((~torch.isfinite(self.analytic[k])).sum())

    def agrees(self, k: int, atol: float = ATOL, rtol: float = RTOL) -> bool:
        """gradcheck's test: |analytic - numerical| <= atol + rtol * |numerical| everywhere."""
        return bool((self.difference(k).abs() <= atol + rtol * self.numerical[k].abs()).all())

    def noisy(self, k: int) -> bool:
        """Backward disagrees with central differences at eps but agrees at a larger step
        where they can judge: the differences at eps measure the forward's rounding (a forward
        carrying fewer digits than float64), not its slope."""
        return self.verdict(k).kind == NOISY_KIND

    def unjudgeable(self, k: int) -> bool:
        """At no step tried are central differences exact to gradcheck's tolerance (the
        rounding of a float32 output divided by a small step, the truncation of a large one),
        and backward is within their error everywhere: they cannot judge it."""
        return self.verdict(k).kind == UNJUDGEABLE

    def numerical_at(self, eps: float) -> list[torch.Tensor]:
        if eps == self.eps:
            return self.numerical
        if eps not in self._measured:
            self._measured[eps] = self.measure(eps)
        return self._measured[eps]

    def error_bound(self, k: int, eps: float) -> torch.Tensor:
        return error_bound(self, k, eps)

    def verdict(self, k: int) -> Verdict:
        """What central differences can say of input k's backward (``judge``), kept."""
        if k not in self._verdicts:
            self._verdicts[k] = judge(self, k)
        return self._verdicts[k]

    def worst_input(self) -> int:
        """The input whose Jacobian disagrees most: one that disagrees beyond the error of
        central differences first, then one they cannot judge, one they judge only at a larger
        step, by the largest difference."""
        order = (CHANGES_INPUT, AGREES_KIND, NOISY_KIND, UNJUDGEABLE, DISAGREES)
        return max(range(len(self.names)),
                   key=lambda k: (order.index(self.verdict(k).kind), self.max_error(k)))


def _with(args: list, positions: list[int], values) -> list:
    args = list(args)
    for position, value in zip(positions, values):
        args[position] = value
    return args


def analytic_jacobian(function, args: list, wrt: list[int]) -> list[torch.Tensor]:
    """The Jacobian your backward implies, one backward per output element."""
    def f(*tensors):
        return flat_output(function, _with(args, wrt, tensors))

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
            plus = flat_output(function, _with(args, [position], [base + step]))
            minus = flat_output(function, _with(args, [position], [base - step]))
            columns.append((plus - minus) / (2 * eps))
        blocks.append(torch.stack(columns, dim=1) if columns else torch.zeros(0, 0))
    return blocks


def compare_jacobians(function, *inputs, eps: float = 1e-6, names=None) -> JacobianComparison:
    """Both Jacobians of ``function`` at ``inputs`` (floating tensors cast to float64)."""
    names = list(names) if names is not None else input_names(function, len(inputs))
    args = [float64_copy(value) for value in inputs]
    wrt = [i for i, value in enumerate(args)
           if isinstance(value, torch.Tensor) and value.is_floating_point()]
    if not wrt:
        raise ValueError("no floating-point tensor input to differentiate")
    with torch.no_grad():  # on copies: a forward that writes into its input changes only them
        probe = [value.clone() if isinstance(value, torch.Tensor) else value for value in args]
        versions = [value._version if isinstance(value, torch.Tensor) else None
                    for value in probe]
        outputs = floating_outputs(function, probe)
    changed = [names[i] for i, (value, after) in enumerate(zip(args, probe))
               if isinstance(value, torch.Tensor) and _changed(value, after, versions[i])]
    output_shapes = [tuple(o.shape) for o in outputs]
    output_dtypes = [o.dtype for o in outputs]
    entries = sum(math.prod(shape) for shape in output_shapes) * sum(args[i].numel()
                                                                     for i in wrt)
    if entries > MAX_ENTRIES:
        raise JacobianTooLarge(f"the Jacobian would have {entries:,} entries, one backward per "
                               f"output element: explore with smaller inputs (at most "
                               f"{MAX_ENTRIES:,} entries)")
    # one output value's rounding in its own dtype (a float32 output: about 1e-7 of it)
    ulps = torch.cat([o.detach().to(torch.float64).abs().reshape(-1) * torch.finfo(o.dtype).eps
                      for o in outputs]) if outputs else torch.zeros(0, dtype=torch.float64)
    return JacobianComparison(display_name(function), [names[i] for i in wrt],
                              [tuple(args[i].shape) for i in wrt], output_shapes,
                              analytic_jacobian(function, args, wrt),
                              numerical_jacobian(function, args, wrt, eps), eps,
                              [ulps] * len(wrt), output_dtypes,
                              lambda step: numerical_jacobian(function, args, wrt, step),
                              changed=changed)


def _changed(before: torch.Tensor, after: torch.Tensor, version: int) -> bool:
    """Did one call of forward change ``after`` (a copy of ``before`` it was given) in place:
    its version counter moved, or its shape or values (nan equal to nan) differ?"""
    if after._version != version or after.shape != before.shape:
        return True
    same = (after == before) | (after.isnan() & before.isnan()) if before.is_floating_point() \
        else after == before
    return not bool(same.all())


class JacobianFigure:
    """Three heatmaps: analytic, numerical (one colour scale) and their difference, with the
    worst entry boxed; drawn once, then updated in place."""

    TITLES = ("analytic: from backward", "numerical: central differences",
              "analytic − numerical")

    def __init__(self):
        self.figure = new_figure(9.0, 2.9)
        axes = self.figure.subplots(1, 3, gridspec_kw={"width_ratios": (1, 1.1, 1.1)})
        self.figure.subplots_adjust(left=0.06, right=0.93, bottom=0.17, top=0.86, wspace=0.3)
        self.axes, self.images, self.marks = list(axes), [], []
        for i, (ax, title) in enumerate(zip(axes, self.TITLES)):
            image = ax.imshow([[0.0]], cmap=heatmap_colours(), interpolation="nearest",
                              aspect="auto")
            if i > 0:  # analytic and numerical share one colour scale, hence one bar
                colorbar = self.figure.colorbar(image, ax=ax, fraction=0.08, pad=0.03)
                colorbar.ax.tick_params(labelsize=7)
                colorbar.formatter.set_powerlimits((-3, 3))
                colorbar.ax.yaxis.get_offset_text().set(fontsize=7, x=3.0)
            ax.set_title(title, fontsize=9)
            ax.tick_params(labelsize=7, labelleft=i == 0)
            self.images.append(image)
            self.marks.append(ax.add_patch(Rectangle((0, 0), 1, 1, **mark_style())))
        axes[0].set_ylabel("output element", fontsize=8)
        self.frames = Frames(self.figure, [*self.images, *self.marks])
        self.layout = None  # what the still parts show: shape, name and colour scales

    def show(self, comparison: JacobianComparison, k: int) -> None:
        """Draw input k's Jacobians."""
        analytic, numerical = comparison.analytic[k], comparison.numerical[k]
        difference = comparison.difference(k)
        limit = _round_up(max(_largest(analytic), _largest(numerical), 1e-12))
        spread = _round_up(max(_largest(difference), ATOL))  # rounding noise stays pale
        rows, columns = analytic.shape
        row, column = comparison.worst(k)
        for image, mark, matrix in zip(self.images, self.marks,
                                       (analytic, numerical, difference)):
            image.set_data(matrix.numpy())
            mark.set_xy((column - 0.5, row - 0.5))
            verdict = comparison.verdict(k)  # the worst entry at this eps, where it is wrong
            mark.set_visible(verdict.kind == DISAGREES and verdict.eps == comparison.eps)
        layout = (rows, columns, comparison.names[k], limit, spread)
        if layout != self.layout:  # new axes or colour bars: redraw the still parts too
            self.layout = layout
            for ax, image, scale in zip(self.axes, self.images, (limit, limit, spread)):
                image.set_extent((-0.5, columns - 0.5, rows - 0.5, -0.5))
                image.set_clim(-scale, scale)
                ax.set_xlim(-0.5, columns - 0.5)
                ax.set_ylim(rows - 0.5, -0.5)
                ax.set_xticks(range(0, columns, max(1, math.ceil(columns / 6))))
                ax.set_yticks(range(0, rows, max(1, math.ceil(rows / 6))))
                ax.set_xlabel(f"{comparison.names[k]} element", fontsize=8)
            self.frames.restage()


def _largest(matrix: torch.Tensor) -> float:
    """The largest finite magnitude in ``matrix`` (a backward that divides by zero gives nan)."""
    finite = matrix[torch.isfinite(matrix)]
    return finite.abs().max().item() if finite.numel() else 0.0


def _round_up(value: float) -> float:
    """The next of 1, 2, 5 times a power of ten: colour scales that change only in steps."""
    power = 10.0 ** math.floor(math.log10(value))
    return next(step * power for step in (1, 2, 5, 10) if step * power >= value * (1 - 1e-9))


def explore_gradients(function, *inputs, eps: float = 1e-6, names=None,
                      failure: str | None = None, notes: list[str] | None = None) -> View:
    """Analytic vs numerical Jacobian heatmaps of ``function`` at ``inputs``, with an input
    selector (opening on the worst input) and a slider for the finite-difference step eps.
    ``failure``: the hint of a failed self-check this view is shown under (its message is shown
    just above, so the view does not repeat it); the view then says what it checks and whether
    it shows that failure (pane ``failure``), with ``notes`` on what backward returned
    (``backward_notes`` when None)."""
    names = list(names) if names is not None else input_names(function, len(inputs))
    summary = html_pane()
    verdict = html_pane()
    drawing = JacobianFigure()
    choices = [n for n, v in zip(names, inputs)
               if isinstance(v, torch.Tensor) and v.is_floating_point()]
    which = ipywidgets.Dropdown(options=choices, description="d output / d",
                                style={"description_width": "initial"},
                                layout=ipywidgets.Layout(width="220px"))
    step = ipywidgets.FloatLogSlider(value=eps, base=10, min=-10, max=-1, step=0.5,
                                     description="eps", readout_format=".0e",
                                     layout=ipywidgets.Layout(width="340px"))
    picture = ipywidgets.Image(format="png", layout=ipywidgets.Layout(
        width=css_width(drawing.figure), height="auto", display="none"))
    state = {}
    if failure is not None and notes is None:
        notes = backward_notes(function, *inputs, names=names)

    def recompute():
        try:
            state["comparison"] = compare_jacobians(function, *inputs, eps=step.value,
                                                    names=names)
        except Exception as error:  # the learner's Function may raise anything
            state["comparison"] = None
            text = str(error) if isinstance(error, JacobianTooLarge) else error_summary(
                function, error)
            summary.value = markup.box("error", markup.escape(text))
            picture.layout.display = "none"
            return
        redraw()
        if failure is not None:  # the banner follows eps: noise at one step may vanish at the next
            verdict.value = failure_html(state["comparison"], notes)

    def redraw():
        comparison = state.get("comparison")
        if comparison is None:
            return
        k = comparison.names.index(which.value)
        summary.value = summary_html(comparison, k, failed=failure is not None)
        if comparison.changed:  # central differences of such a forward are no measurement
            picture.layout.display = "none"
            return
        drawing.show(comparison, k)
        show_figure(picture, drawing.frames)
        picture.layout.display = None

    recompute()
    comparison = state.get("comparison")
    if comparison is not None and not comparison.agrees(comparison.worst_input()):
        which.value = comparison.names[comparison.worst_input()]  # open where it is wrong
        redraw()
    which.observe(lambda change: redraw(), names="value")
    step.observe(lambda change: recompute(), names="value")
    heading = markup.heading(f"Jacobian check of {code(display_name(function))}: "
                             "each entry is d output[row] / d input[column]")
    children = [html_pane(heading), ipywidgets.HBox([which, step]), summary, picture]
    if failure is not None:
        verdict.value = failure_html(state.get("comparison"), notes)
        children.insert(1, verdict)
    return View(children, controls={"input": which, "eps": step},
                panes={"summary": summary, "heatmaps": picture, "failure": verdict})
