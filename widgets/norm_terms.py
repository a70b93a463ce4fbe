"""Normalisation terms view: one row of a LayerNorm or RMSNorm, its mean and rstd, and the
input gradient split into its terms (direct, mean, projection), the learner's beside the
reference, so that a missing term shows at a glance.

The learner's gradient is one vector per row; it is written in the basis of the reference's
terms (least squares), so each term gets a coefficient: 1 where the learner has that term,
0 where it is missing."""

from dataclasses import dataclass, field

import ipywidgets
import torch

from autograder.exercises.lesson10_norms.norm_checks import gradient_terms, row_statistics
from autograder.probes import trace_forward

from . import markup
from .figures import BUILTIN, CUSTOM, INK, LEAF, encode_png, new_figure
from .functions import display_name, error_summary
from .markup import code, format_number
from .view import View, html_pane, on_change

KINDS = {"layer_norm": True, "rms_norm": False}  # kind -> subtracts the mean
TERMS = ("direct", "mean", "projection")
TERM_COLOURS = {"direct": BUILTIN, "mean": LEAF, "projection": CUSTOM}
GRAD_OUTPUTS = ("random", "ones", "along x_hat")
MISMATCH = "#C0392B"  # a red apart from the orange of the learner's bars


@dataclass
class TermsTrace:
    """Reference statistics and terms (float64, one row per row of x) and the learner's
    gradient for x (None when its Function failed, with ``error`` saying why)."""

    kind: str
    mean: torch.Tensor | None
    rstd: torch.Tensor
    terms: dict
    reference: torch.Tensor
    learner: torch.Tensor | None
    saved: list = field(default_factory=list)  # (shape, values per row) of per-row tensors
    error: str | None = None


def norm_inputs(rows: int, features: int, *, random_weight: bool, seed: int = 0):
    """(x, weight, bias) in float64: x with a different offset and spread per row."""
    generator = torch.Generator().manual_seed(seed)
    offsets = torch.linspace(-1.0, 2.0, rows, dtype=torch.float64)[:, None]
    spread = torch.linspace(0.5, 2.0, rows, dtype=torch.float64)[:, None]
    x = offsets + spread * torch.randn(rows, features, generator=generator, dtype=torch.float64)
    weight = (1 + 0.5 * torch.randn(features, generator=generator, dtype=torch.float64)
              if random_weight else torch.ones(features, dtype=torch.float64))
    bias = 0.1 * torch.randn(features, generator=generator, dtype=torch.float64)
    return x, weight, bias


def make_grad_output(choice: str, x: torch.Tensor, eps: float, kind: str, seed: int = 1):
    """grad_output: random, all ones, or x_hat itself (the direction the norm removes)."""
    if choice == "ones":
        return torch.ones_like(x)
    if choice == "along x_hat":
        return row_statistics(x, eps, KINDS[kind])[2]
    generator = torch.Generator().manual_seed(seed)
    return torch.randn(x.shape, generator=generator, dtype=x.dtype)


def _arguments(kind: str, x, weight, bias, eps) -> dict:
    if KINDS[kind]:
        return {"x": x, "weight": weight, "bias": bias, "eps": eps}
    return {"x": x, "weight": weight, "eps": eps}


def trace_terms(function, kind: str, x, weight, bias, eps: float, grad_output) -> TermsTrace:
    """The reference's statistics and terms, and the learner's gradient for x."""
    centred = KINDS[kind]
    mean, rstd, _ = row_statistics(x, eps, centred)
    terms = gradient_terms(x, weight, grad_output, eps, centred)
    reference = sum(terms.values())
    trace = TermsTrace(kind, None if mean is None else mean[:, 0], rstd[:, 0], terms, reference,
                       None)
    leaf = x.detach().clone().requires_grad_()
    try:
        forward = trace_forward(function, _arguments(kind, leaf, weight, bias, eps))
        grad, = torch.autograd.grad(forward.output, leaf, grad_output)
    except Exception as error:  # the learner's Function may raise anything
        trace.error = error_summary(function, error)
        return trace
    if grad is None:
        trace.error = f"{display_name(function)}.backward returned None for x"
        return trace
    trace.learner = grad.detach().double()
    rows = x.shape[0]
    trace.saved = [(tuple(s.shape), s.tensor.detach().double().reshape(rows))
                   for s in forward.saved if s.tensor.numel() == rows and s.role == "intermediate"]
    return trace


def fit_terms(trace: TermsTrace, row: int) -> tuple[dict, float, bool]:
    """(coefficient per term, residual norm, determined): the learner's row of grad_x as a
    combination of the reference's terms; ``determined`` is False when the terms are not
    independent for this grad_output (their coefficients then say nothing)."""
    names = [n for n in TERMS if trace.terms[n][row].abs().max() > 1e-12]
    basis = torch.stack([trace.terms[n][row] for n in names], dim=1)
    target = trace.learner[row]
    solution = torch.linalg.lstsq(basis, target[:, None]).solution[:, 0]
    residual = (basis @ solution - target).norm().item()
    determined = int(torch.linalg.matrix_rank(basis)) == len(names)
    return dict(zip(names, solution.tolist())), residual, determined


def times(coefficient: float) -> str:
    """``×0``, ``×1``, ``×0.52``: a coefficient as the tables show it."""
    rounded = round(coefficient, 2) + 0.0  # + 0.0 turns -0.0 into 0.0
    return f"×{rounded:g}"


def agrees(trace: TermsTrace, row: int) -> bool:
    return trace.learner is not None and torch.allclose(trace.learner[row], trace.reference[row],
                                                        rtol=1e-5, atol=1e-8)


def verdict(trace: TermsTrace, row: int) -> tuple[str, str]:
    """(box kind, sentence): what the learner's gradient has and lacks in this row."""
    if trace.error:
        return "error", trace.error
    if agrees(trace, row):
        return "ok", f"row {row}: your grad_x equals the reference, every term included"
    coefficients, residual, determined = fit_terms(trace, row)
    scale = max(trace.reference[row].norm().item(), 1e-12)
    if not determined:
        return "warning", (f"row {row}: your grad_x differs from the reference; with this "
                           "grad_output some terms point the same way: choose random to tell "
                           "them apart")
    if residual > 1e-6 * scale:
        return "error", (f"row {row}: your grad_x differs from the reference in a way the "
                         "three terms do not explain (a wrong rstd, a wrong dim?)")
    off = [f"the {name} term {times(c)}" for name, c in coefficients.items()
           if abs(c - 1) > 1e-4]
    missing = [name for name, c in coefficients.items() if abs(c) < 1e-4]
    lead = (f"your grad_x has no {' and no '.join(missing)} term" if missing
            else "your grad_x weighs its terms wrongly")
    return "error", f"row {row}: {lead} ({', '.join(off)}; the reference has each ×1)"


def _matches(trace: TermsTrace, values: torch.Tensor, row: int) -> str:
    """Which statistic a saved per-row value is, if any."""
    rstd = trace.rstd[row].item()
    named = {"rstd": rstd, "std": 1 / rstd, "variance + eps": 1 / rstd ** 2}
    if trace.mean is not None:
        named["mean"] = trace.mean[row].item()
    value = values[row].item()
    return next((name for name, v in named.items() if abs(value - v) <= 1e-6 * max(1, abs(v))),
                "not a row statistic")


def statistics_html(trace: TermsTrace, row: int) -> str:
    """The row's mean and rstd, and what the learner's forward kept per row."""
    cells = []
    if trace.mean is not None:
        cells.append(["mean (reference)", format_number(trace.mean[row].item())])
    cells.append(["rstd = 1/√(var + eps) (reference)" if trace.mean is not None
                  else "rstd = 1/√(mean(x²) + eps) (reference)",
                  format_number(trace.rstd[row].item())])
    for shape, values in trace.saved:
        cells.append([f"your forward saved {markup.format_shape(shape)}",
                      f"{format_number(values[row].item())} ({_matches(trace, values, row)})"])
    return markup.table(["statistic of this row", "value"], cells, numeric={1})


def terms_html(trace: TermsTrace, row: int) -> str:
    """Per term: its size in the reference, and its coefficient in the learner's gradient."""
    fitted = {}
    if trace.learner is not None and not agrees(trace, row):
        fitted, _, determined = fit_terms(trace, row)
        fitted = fitted if determined else {}
    rows = []
    for name in TERMS:
        size = trace.terms[name][row].norm().item()
        if name == "mean" and trace.mean is None:
            rows.append([name, "0 (none in this norm)", "—"])
            continue
        if size < 1e-12:  # a term the norm has, zero for this grad_output: mean(g) = 0, say
            rows.append([name, "0 for this grad_output (choose random to see it)", "—"])
            continue
        yours = ("×1" if agrees(trace, row) else times(fitted[name]) if name in fitted
                 else "—")
        rows.append([name, format_number(size), yours])
    return markup.table(["term of dL/dx", "norm in the reference", "in yours"], rows,
                        numeric={1, 2})


# a gradient below this share of its largest term is said to vanish, and the right panel says
# how small it is (on the terms' scale its bars cannot be seen)
VANISHES = 1e-2


def _limits(trace: TermsTrace, row: int) -> tuple[float, float]:
    """One y-range for both panels: every term, the sum and the learner's gradient, so that a
    gradient much smaller than its terms looks as small as it is (not rescaled to fill)."""
    values = torch.cat([*(trace.terms[name][row] for name in TERMS), trace.reference[row],
                        *([trace.learner[row]] if trace.learner is not None else [])])
    values = values[torch.isfinite(values)]
    low, high = min(values.min().item(), 0.0), max(values.max().item(), 0.0)
    margin = 0.08 * max(high - low, 1e-12)
    return low - margin, high + margin


def vanishing_note(trace: TermsTrace, row: int) -> str | None:
    """What the right panel says when the gradient is too small to see on the terms' scale:
    its size, and its share of the largest term."""
    def size(values: torch.Tensor) -> float:
        finite = values[torch.isfinite(values)]
        return finite.abs().max().item() if finite.numel() else float("inf")

    largest = max(trace.terms[name][row].abs().max().item() for name in TERMS)
    shown = trace.learner[row] if trace.learner is not None else trace.reference[row]
    if largest <= 0 or size(shown) >= VANISHES * largest:
        return None
    why = ("the terms cancel" if size(trace.reference[row]) < VANISHES * largest
           else "the reference's does not: see its ticks")
    whose = "your dL/dx" if trace.learner is not None else "dL/dx"
    return (f"{whose} vanishes at this scale: at most {size(shown):.1e},\n"
            f"{size(shown) / largest:.0e} of the largest term ({why})")


def terms_figure_png(trace: TermsTrace, row: int) -> bytes:
    """Left: the reference's terms per feature and their sum. Right: the learner's gradient
    (bars) against the reference (ticks), mismatching features in red. Both on one scale,
    so a gradient whose terms cancel looks as small as it is, and says how small."""
    figure = new_figure(9.6, 3.0)
    left, right = figure.subplots(1, 2)
    features = trace.reference.shape[1]
    positions = torch.arange(features, dtype=torch.float64).numpy()
    width = 0.8 / len(TERMS)
    for k, name in enumerate(TERMS):
        left.bar(positions + (k - 1) * width, trace.terms[name][row].tolist(), width,
                 color=TERM_COLOURS[name], label=name)
    left.plot(positions, trace.reference[row].tolist(), "o", color=INK, markersize=4, label="sum")
    left.set_title(f"reference dL/dx of row {row}, by term", fontsize=10)
    left.legend(fontsize=8, ncol=4, loc="upper center", bbox_to_anchor=(0.5, -0.15),
                frameon=False)
    right.set_title("yours (bars, hatched red if wrong), reference (ticks)", fontsize=10)
    if trace.learner is not None:
        wrong = ~torch.isclose(trace.learner[row], trace.reference[row], rtol=1e-5, atol=1e-8)
        bars = right.bar(positions, trace.learner[row].tolist(), 0.6, color=CUSTOM)
        for bar, bad in zip(bars, wrong.tolist()):
            if bad:
                bar.set(facecolor=MISMATCH, hatch="///", edgecolor=INK, linewidth=0.6)
    else:
        right.text(0.5, 0.5, "no gradient: see the message below", ha="center",
                   transform=right.transAxes, fontsize=9)
    right.plot(positions, trace.reference[row].tolist(), "_", color=INK, markersize=18, mew=2)
    note = vanishing_note(trace, row)
    if note:
        right.text(0.5, 0.92, note, ha="center", va="top", transform=right.transAxes,
                   fontsize=8.5, color=INK)
    limits = _limits(trace, row)
    for ax in (left, right):
        ax.set_ylim(*limits)
        ax.axhline(0, color=INK, linewidth=0.6)
        ax.set_xticks(range(features), [f"x[{i}]" for i in range(features)], fontsize=8)
        ax.tick_params(axis="y", labelsize=8)
    figure.subplots_adjust(left=0.06, right=0.99, top=0.9, bottom=0.28, wspace=0.18)
    figure.canvas.draw()
    return encode_png(figure)


def norm_terms_explorer(function, kind: str = "layer_norm", *, rows: int = 4,
                        features: int = 8, eps: float = 1e-5) -> View:
    """Pick a row, a grad_output and a weight: see that row's statistics and the terms of its
    input gradient, your Function's beside the reference's."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {list(KINDS)}, not {kind!r}")
    heading = html_pane(markup.heading(f"{code(display_name(function))}: the terms of dL/dx, "
                                       "row by row"))
    row = ipywidgets.IntSlider(value=0, min=0, max=rows - 1, description="row",
                               continuous_update=False)
    choice = ipywidgets.Dropdown(options=GRAD_OUTPUTS, value="random",
                                 description="grad_output")
    random_weight = ipywidgets.Checkbox(value=True, description="random weight", indent=False)
    picture = ipywidgets.Image(format="png", layout=ipywidgets.Layout(width="960px"))
    message, statistics, terms = html_pane(), html_pane(), html_pane()

    def update():
        x, weight, bias = norm_inputs(rows, features, random_weight=random_weight.value)
        grad_output = make_grad_output(choice.value, x, eps, kind)
        trace = trace_terms(function, kind, x, weight, bias, eps, grad_output)
        picture.value = terms_figure_png(trace, row.value)
        message.value = markup.box(*verdict(trace, row.value))
        statistics.value = statistics_html(trace, row.value)
        terms.value = terms_html(trace, row.value)

    controls = {"row": row, "grad_output": choice, "random weight": random_weight}
    on_change(controls.values(), update)
    update()
    statistics.layout.margin = "0 24px 0 0"
    tables = ipywidgets.HBox([statistics, terms])
    return View([heading, ipywidgets.HBox([row, choice, random_weight]), picture, message,
                 tables], controls=controls,
                panes={"figure": picture, "message": message, "statistics": statistics,
                       "terms": terms})
