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
from .markup import code, format_number
from .view import View, html_pane, show_figure

ATOL, RTOL = 1e-5, 1e-3  # torch.autograd.gradcheck's defaults
MAX_ENTRIES = 100_000  # beyond this the heatmaps are unreadable and the wait is long
# the steps tried when central differences at the view's eps cannot judge: every power of ten
# from the view's eps up to LARGEST_EPS
LARGEST_EPS = 1e-2
# ulps of its own dtype by which a forward's output may be off: a few roundings of the last
# operations (each half an ulp), so that two outputs' difference is off by twice as many
ROUNDING_ULPS = 4
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
        """How far central differences at ``eps`` may be from the true slope, per entry: the
        output's rounding, ROUNDING_ULPS ulps of its dtype on each side, divided by the step
        (per row), plus the truncation, bounded by their change from 10 * eps (which holds
        the rounding at eps too, so that a forward rounded to fewer digits than its dtype
        is caught as well)."""
        rounding = ROUNDING_ULPS * self.ulps[k] / eps
        truncation = (self.numerical_at(eps)[k] - self.numerical_at(10 * eps)[k]).abs()
        return (rounding.unsqueeze(1) + truncation).nan_to_num(nan=math.inf)

    def verdict(self, k: int) -> "Verdict":
        """What central differences can say of input k's backward: the smallest step, from
        the view's eps up to LARGEST_EPS, whose error bound is within gradcheck's tolerance
        judges it (agrees, noisy: agrees only at a larger step, disagrees); where there is
        none, backward outside a bound's reach (the tolerance on top) disagrees, else they
        cannot judge (at the step whose bound is nearest the tolerance)."""
        if k in self._verdicts:
            return self._verdicts[k]
        if self.agrees(k) or self.measure is None or not self.analytic[k].numel():
            verdict = Verdict(AGREES_KIND if self.agrees(k) else DISAGREES, self.eps,
                              self.numerical[k], None)
        else:
            verdict = self._judge(k)
        self._verdicts[k] = verdict
        return verdict

    def _judge(self, k: int) -> "Verdict":
        steps = [self.eps] + [10.0 ** p for p in range(-12, 0)
                              if self.eps * 1.5 < 10.0 ** p <= LARGEST_EPS]
        best, best_ratio = None, math.inf
        for eps in steps:
            numerical = self.numerical_at(eps)[k]
            tolerance = ATOL + RTOL * numerical.abs()
            bound = self.error_bound(k, eps)
            difference = (self.analytic[k] - numerical).abs().nan_to_num(nan=math.inf)
            if bool((bound <= tolerance).all()):  # exact enough to judge
                if bool((difference <= tolerance).all()):
                    kind = AGREES_KIND if eps == self.eps else NOISY_KIND
                else:
                    kind = DISAGREES
                return Verdict(kind, eps, numerical, bound)
            ratio = (bound / tolerance).max().item()
            if ratio < best_ratio or best is None:
                best, best_ratio = (eps, numerical, bound, tolerance, difference), ratio
        eps, numerical, bound, tolerance, difference = best
        beyond = bool((difference > bound + tolerance).any())
        return Verdict(DISAGREES if beyond else UNJUDGEABLE, eps, numerical, bound)

    def worst_input(self) -> int:
        """The input whose Jacobian disagrees most: one that disagrees beyond the error of
        central differences first, then one they cannot judge, one they judge only at a larger
        step, by the largest difference."""
        order = (AGREES_KIND, NOISY_KIND, UNJUDGEABLE, DISAGREES)
        return max(range(len(self.names)),
                   key=lambda k: (order.index(self.verdict(k).kind), self.max_error(k)))


AGREES_KIND, NOISY_KIND, DISAGREES, UNJUDGEABLE = "agrees", "noisy", "disagrees", "unjudgeable"


@dataclass
class Verdict:
    """What central differences at step ``eps`` (``numerical``, within ``bound`` of the true
    slope per entry; None where not computed) say of one input's backward: ``kind`` is one of
    AGREES_KIND, NOISY_KIND (agrees only at a step larger than the view's), DISAGREES and
    UNJUDGEABLE (at no step exact enough, and backward within their error)."""

    kind: str
    eps: float
    numerical: torch.Tensor
    bound: torch.Tensor | None


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
    with torch.no_grad():
        outputs = floating_outputs(function, args)
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
                              lambda step: numerical_jacobian(function, args, wrt, step))


def element_name(name: str, flat: int, shape: tuple) -> str:
    """``x``, 5, (2, 3) -> ``'x[1, 2]'``; a 0-dim tensor is just its name."""
    if not shape:
        return name
    index = []
    for size in reversed(shape):
        flat, rest = divmod(flat, size)
        index.append(rest)
    return f"{name}[{', '.join(map(str, reversed(index)))}]"


def output_element(row: int, shapes: list[tuple]) -> str:
    """Row ``row`` of a Jacobian in the output's own indices: ``output[1, 2]``, or
    ``outputs[1][0]`` for the second of several outputs."""
    for k, shape in enumerate(shapes):
        if row < math.prod(shape):
            return element_name("output" if len(shapes) == 1 else f"outputs[{k}]", row, shape)
        row -= math.prod(shape)
    raise IndexError(f"row {row} is past the outputs' {sum(map(math.prod, shapes))} elements")


def _worst_words(comparison: JacobianComparison, k: int, numerical: torch.Tensor) -> str:
    """The largest |analytic - numerical| of input k, in words."""
    name = comparison.names[k]
    error = (comparison.analytic[k] - numerical).abs().nan_to_num(nan=math.inf)
    flat = int(torch.argmax(error)) if error.numel() else 0
    row, column = divmod(flat, max(error.shape[1], 1))
    analytic = comparison.analytic[k][row, column].item()
    measured = numerical[row, column].item()
    where = (f"d {output_element(row, comparison.output_shapes)} / "
             f"d {element_name(name, column, comparison.input_shapes[k])}")
    return (f"Largest difference {format_number(abs(analytic - measured))} at "
            f"{code(where)}: backward gives {format_number(analytic)}, central "
            f"differences give {format_number(measured)}.")


def precision_words(comparison: JacobianComparison) -> str:
    """The digits the forward's output carries: its dtype where below float64."""
    low = [str(d).removeprefix("torch.") for d in dict.fromkeys(comparison.output_dtypes)
           if torch.finfo(d).eps > torch.finfo(torch.float64).eps]
    if low:
        return f"a {' and '.join(low)} output"
    return "the digits your forward computes in (fewer than its float64 output carries)"


def summary_html(comparison: JacobianComparison, k: int, failed: bool = False) -> str:
    """Verdict for input k and the worst entry, in words. ``failed``: shown under a failed
    self-check, where agreement here is no tick (the failure lies elsewhere)."""
    name = comparison.names[k]
    verdict = comparison.verdict(k)
    worst = _worst_words(comparison, k, verdict.numerical)
    nans = comparison.nans(k)
    if nans:
        worst += (f" {nans} entr{'y' if nans == 1 else 'ies'} of the analytic Jacobian "
                  f"{'is' if nans == 1 else 'are'} nan or inf, drawn yellow.")
    if verdict.kind == AGREES_KIND:
        box = markup.box("note" if failed else "ok",
                         f"For {code(name)} the two Jacobians agree within gradcheck's "
                         f"tolerance (atol {ATOL:g}, rtol {RTOL:g}). " + worst)
    elif verdict.kind == NOISY_KIND:
        box = markup.box("note", f"For {code(name)} backward agrees with central "
                                 f"differences at eps = {verdict.eps:g}, not at eps = "
                                 f"{comparison.eps:.0e}: {NOISY} {worst}")
    elif verdict.kind == UNJUDGEABLE:
        reach = format_number(verdict.bound.max().item())
        box = markup.box("note", f"For {code(name)} central differences cannot judge your "
                                 f"backward at {precision_words(comparison)}: at every step "
                                 f"eps from {comparison.eps:.0e} to {LARGEST_EPS:g} their error "
                                 f"(the output's rounding divided by the step, or the "
                                 f"truncation of a large step) exceeds gradcheck's tolerance "
                                 f"(atol {ATOL:g}, rtol {RTOL:g}); at best, at eps = "
                                 f"{verdict.eps:g}, it reaches {reach}. Within that error your "
                                 f"backward matches them everywhere: this view cannot say it "
                                 f"is wrong, nor prove it right. {worst}")
    elif verdict.eps != comparison.eps:
        reach = format_number(verdict.bound.max().item())
        box = markup.box("warning", f"For {code(name)} backward disagrees with central "
                                    f"differences by more than their error: at eps = "
                                    f"{comparison.eps:.0e} they measure the rounding of "
                                    f"{precision_words(comparison)}, so they are taken at eps = "
                                    f"{verdict.eps:g}, where they are within {reach} of the "
                                    f"slope. {worst}")
    else:
        box = markup.box("warning", f"For {code(name)} backward disagrees with central "
                                    f"differences. {worst} The black outline marks it.")
    words = {AGREES_KIND: "agrees", NOISY_KIND: "agrees at a larger eps",
             UNJUDGEABLE: "cannot be judged by central differences", DISAGREES: "differs"}
    others = [f"{code(n)} {words[comparison.verdict(i).kind]}"
              for i, n in enumerate(comparison.names)]
    return box + markup.paragraph("Each input: " + ", ".join(others) +
                                  f" (eps = {comparison.eps:.0e})", muted=True)


WHAT_IT_CHECKS = ("This view compares your backward with central differences of <b>your own</b> "
                  "forward, at small example inputs, every input requiring grad.")
NOISY = ("at this small a step, central differences measure how your forward rounds, not its "
         "slope: your forward's outputs carry fewer digits than float64 (a step in float32?), "
         "while your backward is right for the forward you wrote.")
AGREES = ("At these small example inputs your backward agrees with central differences of your "
          "own forward, for every input: the failure is in a case above (another shape, value or "
          "dtype) or in something this view cannot show.")
UNJUDGED = ("At no step are central differences of your forward exact enough to judge your "
            "backward (the input selected below): your forward's outputs carry fewer digits "
            "than float64 (a step in float32?). Within their error your backward matches them, "
            "so the failure is one this view cannot show.")


def failure_html(comparison: JacobianComparison | None, notes: list[str]) -> str:
    """Under a failed self-check, whose message is shown just above (so never repeated here):
    what this view checks and whether it shows that failure; one line where it does not."""
    if notes:
        listed = "".join(f"<li>{markup.escape(n[0].upper() + n[1:])}</li>" for n in notes)
        return markup.box("warning", f"{WHAT_IT_CHECKS} What your backward returned shows what "
                                     f"the heatmaps cannot:<ul style='margin:4px 0'>{listed}"
                                     "</ul>")
    if comparison is None:
        return markup.box("warning", f"{WHAT_IT_CHECKS} Your Function raised an error at these "
                                     "inputs (below).")
    kinds = [comparison.verdict(k).kind for k in range(len(comparison.names))]
    if DISAGREES in kinds:
        return markup.box("warning", f"{WHAT_IT_CHECKS} It finds a disagreement: the input "
                                     "selected below.")
    if UNJUDGEABLE in kinds:
        return markup.box("note", f"{WHAT_IT_CHECKS} {UNJUDGED}")
    if NOISY_KIND in kinds:
        return markup.box("note", f"{WHAT_IT_CHECKS} It finds your backward right for your "
                                  f"forward once eps is large enough (the input selected "
                                  f"below): {NOISY}")
    return markup.box("note", AGREES)


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
        drawing.show(comparison, k)
        show_figure(picture, drawing.frames)
        picture.layout.display = None
        summary.value = summary_html(comparison, k, failed=failure is not None)

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
