"""The Jacobian view's words: entries named in the output's and the inputs' own indices, the
verdict for one input (``summary_html``) and, under a failed self-check, what the view checks
and whether it shows that failure (``failure_html``)."""

import math

import torch

from . import markup
from .gradcheck_verdict import (AGREES_KIND, ATOL, CHANGES_INPUT, DISAGREES, LARGEST_EPS,
                                NOISY_KIND, RTOL, UNJUDGEABLE)
from .markup import code, format_number


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


def _worst_entry(comparison, k: int, numerical: torch.Tensor) -> tuple[str, str, str, str]:
    """The largest |analytic - numerical| of input k: (its size, where, backward's value,
    central differences' value), in words."""
    name = comparison.names[k]
    error = (comparison.analytic[k] - numerical).abs().nan_to_num(nan=math.inf)
    flat = int(torch.argmax(error)) if error.numel() else 0
    row, column = divmod(flat, max(error.shape[1], 1))
    analytic = comparison.analytic[k][row, column].item()
    measured = numerical[row, column].item()
    where = (f"d {output_element(row, comparison.output_shapes)} / "
             f"d {element_name(name, column, comparison.input_shapes[k])}")
    return (format_number(abs(analytic - measured)), code(where), format_number(analytic),
            format_number(measured))


def _worst_words(comparison, k: int, numerical: torch.Tensor, eps: float) -> str:
    """The largest |analytic - numerical| of input k, central differences taken at step
    ``eps`` (said, so that a number is never read against heatmaps drawn at another step)."""
    size, where, analytic, measured = _worst_entry(comparison, k, numerical)
    return (f"Largest difference at eps = {eps:g}: {size} at {where}: backward gives "
            f"{analytic}, central differences give {measured}.")


def _drawn_words(comparison, k: int) -> str:
    """Where the verdict's step is not the slider's: the largest difference the heatmaps show,
    at the slider's eps (learner trial 81: text at one eps beside a picture at another)."""
    size, where, analytic, measured = _worst_entry(comparison, k, comparison.numerical[k])
    return (f" The heatmaps are drawn at the slider's eps = {comparison.eps:g}, where the "
            f"largest difference is {size} at {where}: backward gives {analytic}, central "
            f"differences give {measured}.")


def changed_words(comparison) -> str:
    """Forward changed an input in place: why central differences cannot be taken."""
    names = " and ".join(code(n) for n in comparison.changed)
    return (f"Your forward changed {names} in place (after one call its values or its version "
            f"counter differ): every call of forward moves its input, so central differences, "
            f"which call forward again and again at the same x, cannot be taken for such a "
            f"forward. This view draws no verdict "
            f"and no heatmaps from them: make forward leave its inputs as it got them "
            f"(Function contract, rule 5), then look again.")


def precision_words(comparison) -> str:
    """The digits the forward's output carries: its dtype where below float64."""
    low = [str(d).removeprefix("torch.") for d in dict.fromkeys(comparison.output_dtypes)
           if torch.finfo(d).eps > torch.finfo(torch.float64).eps]
    if low:
        return f"a {' and '.join(low)} output"
    return "the digits your forward computes in (fewer than its float64 output carries)"


def summary_html(comparison, k: int, failed: bool = False) -> str:
    """Verdict for input k and the worst entry, in words. ``failed``: shown under a failed
    self-check, where agreement here is no tick (the failure lies elsewhere)."""
    name = comparison.names[k]
    verdict = comparison.verdict(k)
    if verdict.kind == CHANGES_INPUT:
        return markup.box("warning", changed_words(comparison))
    worst = _worst_words(comparison, k, verdict.numerical, verdict.eps)
    if verdict.eps != comparison.eps:
        worst += _drawn_words(comparison, k)
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
             CHANGES_INPUT: "not judged",
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


def failure_html(comparison, notes: list[str]) -> str:
    """Under a failed self-check, whose message is shown just above (so never repeated here):
    what this view checks and whether it shows that failure; one line where it does not."""
    if comparison is not None and comparison.changed:
        return markup.box("warning", f"{WHAT_IT_CHECKS} It cannot check a forward that "
                                     "changes its input in place (below).")
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
