"""Jacobian view: dy_o/dx_i of the learner's Function, read off its own backward one
grad_output basis vector at a time, beside autograd's Jacobian of a reference written with torch
ops. Entries that differ are outlined; a gradient returned in the wrong shape is drawn as
returned (the engine would have summed it), so a forgotten broadcast sum shows as extra
columns, a lost repeated row as a missing entry, a missing projection term as a wrong block.
A nan entry is drawn yellow, off the red-white-blue scale; differing entries are outlined in
black on a white halo. Where the learner's last self-check of this exercise failed and the two Jacobians still
match, the view says so instead of ticking: the failure lies in something it does not check."""

import textwrap
from dataclasses import dataclass

import ipywidgets
import torch
from matplotlib.patches import Rectangle

from autograder import progress
from autograder.probes import record_returned_gradients

from . import markup
from .figures import CURRENT, Frames, css_width, new_figure
from .gradcheck_explorer import heatmap_colours, mark_style
from .functions import display_name, error_summary, input_names, is_function_class
from .markup import code
from .view import View, html_pane, image_pane, show_figure

MAX_LABELS = 24  # more index labels than this on an axis and only every k-th is written
MAX_VALUES = 80  # up to this many cells per panel, each shows its value (where it fits)
VALUE_FONT, MIN_VALUE_FONT = 6.0, 4.5  # a cell's value shrinks to fit, down to this, else goes
TITLE_FONT = 9
TITLE_CHARS = 20  # a panel title wraps at this many characters (a longer word stays whole)
CHAR_INCHES = 0.075  # a character of a title at TITLE_FONT, generously
COLUMN_INCHES, VALUE_COLUMN_INCHES = 0.3, 0.42  # per column; wider where values are written
MAX_WIDTH = 11.0


@dataclass
class JacobianPair:
    """The two Jacobians of one output with respect to one input, as (outputs, entries)."""

    name: str                 # the input's name in forward's signature
    input_shape: tuple
    output_shape: tuple
    reference: torch.Tensor   # autograd through the reference: (outputs, inputs)
    learner: torch.Tensor | None  # row o: what backward returned for grad_output = e_o
    returned_shape: tuple | None  # the shape backward returned (None: it returned None)
    error: str | None = None      # what the learner's Function raised, in one line

    @property
    def same_shape(self) -> bool:
        return self.learner is not None and self.returned_shape == self.input_shape

    @property
    def mismatch(self) -> torch.Tensor | None:
        """True where the entries differ, when both have the input's shape."""
        if not self.same_shape:
            return None
        scale = 1e-6 * max(1.0, self.reference.abs().max().item() if self.reference.numel()
                           else 1.0)
        return ~torch.isclose(self.learner, self.reference, rtol=1e-5, atol=scale)


def _function_class(function):
    """The Function class behind ``function`` (a class or its ``.apply``), else None."""
    if is_function_class(function):
        return function
    owner = getattr(function, "__self__", None)
    return owner if is_function_class(owner) else None


def _leaves(inputs, wanted: int | None = None) -> list:
    """Fresh float64 leaves for the floating tensors (all of them, or only input ``wanted``)."""
    return [value.detach().to(torch.float64).clone().requires_grad_(wanted in (None, i))
            if isinstance(value, torch.Tensor) and value.is_floating_point() else value
            for i, value in enumerate(inputs)]


def _first_tensor(output) -> torch.Tensor:
    return output[0] if isinstance(output, (tuple, list)) else output


def _basis(output: torch.Tensor):
    """grad_output = e_o for every output index o, in row-major order."""
    for o in range(output.numel()):
        basis = torch.zeros(output.numel(), dtype=output.dtype, device=output.device)
        basis[o] = 1
        yield basis.reshape(output.shape)


def reference_jacobian(reference, inputs, position: int) -> torch.Tensor:
    """Autograd's d reference / d inputs[position], as (outputs, inputs)."""
    leaves = _leaves(inputs, position)
    output = _first_tensor(reference(*leaves))
    rows = [torch.autograd.grad(output, leaves[position], e, retain_graph=True,
                                allow_unused=True)[0] for e in _basis(output)]
    rows = [torch.zeros_like(leaves[position]) if r is None else r for r in rows]
    return torch.stack([r.reshape(-1) for r in rows]) if rows else torch.zeros(
        0, leaves[position].numel(), dtype=torch.float64)


def learner_jacobian(function, inputs, position: int) -> tuple[torch.Tensor | None, tuple | None]:
    """Row o is what the learner's backward returned for inputs[position] when handed
    grad_output = e_o: (rows, the shape returned), or (None, None) if it returned None."""
    leaves = _leaves(inputs, position)
    cls = _function_class(function)
    probe, returned = record_returned_gradients(cls) if cls else (None, [])
    output = _first_tensor(probe.apply(*leaves) if cls else function(*leaves))
    rows = []
    for e in _basis(output):
        try:
            grad, = torch.autograd.grad(output, leaves[position], e, retain_graph=True,
                                        allow_unused=True)
        except RuntimeError:  # the engine refused a shape it cannot reduce: use the raw one
            if not returned:
                raise
            grad = None
        if cls:
            grad = returned[-1][position] if len(returned[-1]) > position else None
        if grad is None:
            return None, None
        rows.append(grad.detach().to(torch.float64).reshape(-1))
    shape = tuple(returned[-1][position].shape) if cls and returned else tuple(
        leaves[position].shape)
    if not rows:
        return torch.zeros(0, leaves[position].numel(), dtype=torch.float64), shape
    return torch.stack(rows), shape


def jacobian_pairs(function, reference, *inputs) -> list[JacobianPair]:
    """One JacobianPair per floating-point tensor input of ``function``."""
    names = input_names(_function_class(function) or function, len(inputs))
    pairs = []
    for position, value in enumerate(inputs):
        if not (isinstance(value, torch.Tensor) and value.is_floating_point()):
            continue
        truth = reference_jacobian(reference, inputs, position)
        output_shape = tuple(_first_tensor(reference(*_leaves(inputs))).shape)
        try:
            mine, returned_shape = learner_jacobian(function, inputs, position)
            error = None
        except Exception as raised:  # the learner's Function may raise anything
            mine, returned_shape, error = None, None, error_summary(function, raised)
        pairs.append(JacobianPair(names[position], tuple(value.shape), output_shape, truth,
                                  mine, returned_shape, error))
    return pairs


def _expands_to(shape: tuple, target: tuple) -> bool:
    try:
        return torch.broadcast_shapes(shape, target) == torch.Size(target)
    except RuntimeError:
        return False


def index_labels(name: str, shape: tuple) -> list[str]:
    """``a[0,1]``-style labels for every entry of a tensor of ``shape``, row-major."""
    if not shape:
        return [name]
    labels = []
    for flat in range(int(torch.Size(shape).numel())):
        index = [int(i) for i in torch.unravel_index(torch.tensor(flat), shape)]
        labels.append(f"{name}[{','.join(map(str, index))}]")
    return labels


def learners(function) -> bool:
    """Is ``function`` one the learner writes (an exercise's name), not one the lesson defines
    (a worked example, a broken demo), or unknown (None)?"""
    from autograder.exercises import EXERCISES

    return function is None or display_name(function) in EXERCISES


def whose_backward(function) -> str:
    """'your backward' for an exercise, 'its backward (the lesson's, not yours)' for a Function
    the lesson defines."""
    return "your backward" if learners(function) else "its backward (the lesson's, not yours)"


def summary(pair: JacobianPair, function=None) -> str:
    """What the two pictures say, in one or two sentences of plain text."""
    who = display_name(function) if function is not None else "your Function"
    if pair.error:
        return pair.error
    if pair.learner is None:
        return f"{who}'s backward returned None for {pair.name}, which requires grad"
    if not pair.same_shape:
        returned = (f"{who}'s backward returned grad_{pair.name} of shape "
                    f"{markup.format_shape(pair.returned_shape)} for {pair.name} of shape "
                    f"{markup.format_shape(pair.input_shape)}")
        if _expands_to(pair.input_shape, pair.returned_shape):
            return (f"{returned}: each row has {pair.learner.shape[1]} entries where "
                    f"{pair.name} has {pair.reference.shape[1]}, a forgotten broadcast sum "
                    "(the engine sums it for you when it can; the contract asks for the "
                    "exact shape)")
        if pair.learner.shape[1] == pair.reference.shape[1]:
            return (f"{returned}: the same entries with a dim of size 1 lost, a sum without "
                    "keepdim=True? (the engine refuses this shape)")
        return f"{returned}: a gradient must have its input's shape"
    wrong = pair.mismatch
    total = wrong.numel()
    nans = int((~torch.isfinite(pair.learner)).sum())
    if nans:
        return (f"{nans} of {total} entries of {who}'s Jacobian are nan or inf (yellow): the "
                "backward divides by zero or overflows somewhere in these inputs")
    if not wrong.any():
        return (f"{who}'s Jacobian with respect to {pair.name} matches autograd's, entry for "
                f"entry ({total} entries)")
    o, i = (int(v) for v in wrong.nonzero()[0])
    out_label = index_labels("y", pair.output_shape)[o]
    in_label = index_labels(pair.name, pair.input_shape)[i]
    return (f"{int(wrong.sum())} of {total} entries differ (outlined); the first is "
            f"d{out_label}/d{in_label}: {'yours' if learners(function) else 'backward'} "
            f"{markup.format_number(pair.learner[o, i].item())}, "
            f"autograd's {markup.format_number(pair.reference[o, i].item())}")


def _label_axis(ax, labels: list[str], axis: str) -> None:
    step = max(1, -(-len(labels) // MAX_LABELS))
    ticks = list(range(0, len(labels), step))
    if axis == "x":
        ax.set_xticks(ticks, [labels[t] for t in ticks], rotation=90, fontsize=7)
    else:
        ax.set_yticks(ticks, [labels[t] for t in ticks], fontsize=7)


def caption(pair: JacobianPair) -> str:
    """What each cell is: ``d y[o] / d x[i]: rows o, columns i``, an index only where the
    tensor has one (a 0-d input such as FakeQuantize's scale reads ``d y[o] / d scale``)."""
    output = "y[o]" if pair.output_shape else "y"
    entry = f"{pair.name}[i]" if pair.input_shape else pair.name
    axes = [words for words, shown in (("rows o", pair.output_shape),
                                       ("columns i", pair.input_shape)) if shown]
    return f"d {output} / d {entry}" + (f": {', '.join(axes)}" if axes else "")


def panel_titles(pair: JacobianPair, function=None) -> tuple[str, str]:
    """The titles of the learner's panel (left, empty where it has no Jacobian) and the
    reference's, wrapped to fit panels a few columns wide."""
    who = display_name(function) if function is not None else "yours"
    left = ""
    if pair.learner is not None:
        left = _wrap(f"{who}: from {'your ' if learners(function) else ''}backward")
        if not pair.same_shape:
            left += f"\nreturned shape {markup.format_shape(pair.returned_shape)}"
    return left, _wrap("autograd (reference)")


def _wrap(title: str) -> str:
    return "\n".join(textwrap.wrap(title, TITLE_CHARS, break_long_words=False))


def _title_inches(title: str) -> float:
    return CHAR_INCHES * max((len(line) for line in title.splitlines()), default=0)


def _label_inches(labels: list[str]) -> float:
    """Room for an axis's index labels at 7 points, and its ticks."""
    return 0.15 + 0.06 * max((len(label) for label in labels), default=0)


def value_text(value: float) -> str:
    return f"{value:.2g}"


def _panel(ax, matrix: torch.Tensor, limit: float, title: str, rows: list[str],
           columns: list[str], outline=None, title_color="black") -> None:
    ax.imshow(matrix.numpy(), cmap=heatmap_colours(), vmin=-limit, vmax=limit, aspect="auto",
              interpolation="nearest")
    ax.set_title(title, fontsize=TITLE_FONT, color=title_color)
    _label_axis(ax, columns, "x")
    _label_axis(ax, rows, "y")
    if outline is not None:
        for o, i in outline.nonzero().tolist():
            ax.add_patch(_cell(o, i))


def _write_values(ax, matrix: torch.Tensor, limit: float) -> None:
    """Each nonzero cell's value, in the largest font up to VALUE_FONT that fits every cell;
    none where even MIN_VALUE_FONT would not (the colours and the readout still say it).
    Call once the figure is laid out: the fit is measured on the drawn axes."""
    if not 0 < matrix.numel() <= MAX_VALUES:
        return
    texts = []
    for (o, i), value in zip(torch.cartesian_prod(torch.arange(matrix.shape[0]),
                                                  torch.arange(matrix.shape[1])).tolist(),
                             matrix.reshape(-1).tolist()):
        if value != 0:  # nan included: it reads "nan" on its yellow cell
            texts.append(ax.text(i, o, value_text(value), ha="center", va="center",
                                 fontsize=VALUE_FONT,
                                 color="white" if abs(value) > 0.6 * limit else "black"))
    if not texts:
        return
    renderer = ax.figure.canvas.get_renderer()
    box = ax.get_window_extent(renderer)
    widest = max(text.get_window_extent(renderer).width for text in texts)
    tallest = max(text.get_window_extent(renderer).height for text in texts)
    fit = min(1.0, 0.9 * box.width / matrix.shape[1] / widest,
              0.8 * box.height / matrix.shape[0] / tallest)
    if VALUE_FONT * fit < MIN_VALUE_FONT:
        for text in texts:
            text.remove()
        return
    for text in texts:
        text.set_fontsize(VALUE_FONT * fit)


def _cell(o: int, i: int) -> Rectangle:
    """The outline of cell (o, i) of an image drawn with imshow."""
    return Rectangle((i - 0.5, o - 0.5), 1, 1, **mark_style())


def jacobian_figure(pair: JacobianPair, function=None):
    """The learner's Jacobian (left) beside autograd's (right), rows y_o and columns x_i. Each
    panel is as wide as its columns and its title need, so titles never run into each other."""
    rows = index_labels("y", pair.output_shape)
    returned_name = pair.name if pair.same_shape else f"grad_{pair.name}"  # not a's indices
    mine_columns = (index_labels(returned_name, pair.returned_shape)
                    if pair.learner is not None else [])
    columns = index_labels(pair.name, pair.input_shape)
    titles = panel_titles(pair, function)
    valued = len(rows) * len(columns) <= MAX_VALUES
    per_column = VALUE_COLUMN_INCHES if valued else COLUMN_INCHES
    widths = [max(len(mine_columns) * per_column, _title_inches(titles[0]),
                  0.0 if pair.learner is not None else 2.0),
              max(len(columns) * per_column, _title_inches(titles[1]))]
    width = min(MAX_WIDTH, sum(widths) + 2 * _label_inches(rows) + 0.5)
    height = min(7.0, 1.9 + 0.22 * max(len(rows), 1) + 0.06 * max(
        (len(c) for c in mine_columns + columns), default=0))
    figure = new_figure(width, height)
    left, right = figure.subplots(1, 2, gridspec_kw={"width_ratios": widths})
    matrices = [pair.reference] + ([pair.learner] if pair.learner is not None else [])
    finite = [m[torch.isfinite(m)] for m in matrices]
    limit = max([m.abs().max().item() for m in finite if m.numel()] + [1e-12])
    if pair.learner is None:
        left.text(0.5, 0.5, "no Jacobian:\n" + (pair.error or "backward returned None"),
                  ha="center", va="center", fontsize=8, wrap=True, transform=left.transAxes)
        left.set_axis_off()
    else:
        _panel(left, pair.learner, limit, titles[0], rows, mine_columns, pair.mismatch,
               "black" if pair.same_shape else CURRENT)
    _panel(right, pair.reference, limit, titles[1], rows, columns, pair.mismatch)
    figure.suptitle(caption(pair), fontsize=TITLE_FONT)
    figure.tight_layout()
    if pair.learner is not None:
        _write_values(left, pair.learner, limit)
    _write_values(right, pair.reference, limit)
    return figure


def last_failure(name: str) -> str | None:
    """The hint of ``name``'s last self-check if it failed, else None."""
    entry = progress.recorded().get(name, {})
    if entry.get("outcome") != progress.FAILED:
        return None
    return entry.get("hint") or "(no hint recorded)"


def readout(pair: JacobianPair, function=None, failure: str | None = None) -> tuple[str, str]:
    """(box kind, text) under the picture. ``failure``: the hint of a failed self-check of
    this Function; matching Jacobians then earn no tick, and the text says where to look."""
    text = summary(pair, function)
    if not (pair.same_shape and not pair.mismatch.any()):
        return "error", text
    if failure is None:
        return "ok", text
    failure = failure.rstrip()
    stop = "" if failure.endswith((".", "?", "!")) else "."  # a hint may end on a question
    return "note", (f"{text}, at these inputs with every input requiring grad. Your last "
                    f"self-check still failed: {failure}{stop} The failure is in something this "
                    "view does not check (other shapes or edge values, an input alone requiring "
                    "grad, forward's values, what is saved, in-place writes).")


def jacobian_view(function, reference, *inputs) -> View:
    """The learner's Jacobian beside the reference's, one input at a time, opening on the first
    input where they differ.

    ``function`` is a Function class (or its ``apply``), ``reference`` a callable written with
    torch ops taking the same arguments, ``inputs`` small example arguments (tensors, numbers).
    """
    shown = _function_class(function) or function
    heading = html_pane(markup.heading(
        f"{code(display_name(shown))}: the Jacobian from {whose_backward(shown)} beside "
        "autograd's"))
    pairs = jacobian_pairs(function, reference, *inputs)
    first = next((p for p in pairs if not p.same_shape or p.mismatch.any()), pairs[0])
    choice = ipywidgets.ToggleButtons(options=[p.name for p in pairs], value=first.name,
                                      description="with respect to",
                                      style={"description_width": "initial"})
    figures = {p.name: Frames(jacobian_figure(p, shown)) for p in pairs}
    picture = image_pane(figures[first.name])
    words = html_pane()

    def update():
        pair = next(p for p in pairs if p.name == choice.value)
        picture.layout.width = css_width(figures[pair.name].figure)
        show_figure(picture, figures[pair.name])
        kind, text = readout(pair, shown, last_failure(display_name(shown)))
        words.value = markup.box(kind, markup.escape(text))

    choice.observe(lambda change: update(), names="value")
    update()
    children = [heading] + ([choice] if len(pairs) > 1 else []) + [picture, words]
    return View(children, controls={"input": choice},
                panes={"heading": heading, "plot": picture, "readout": words})
