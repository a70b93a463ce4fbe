"""One figure per lesson: for each exercise a horizontal bar of the class, stacked as full marks,
each named mistake (most frequent first), the other failures (tried, no probe named why), the
exercises not attempted (the stub still raises), the notebooks handed in before the exercise's
test was added, and the learners who did not hand the lesson in.
Counts only, never learner ids. Each named segment carries a letter, and a key under the axes
says which mistake each letter of each row is (a letter stands for a different mistake on each
row, and the legend says so); colours are colour-blind safe and hatched, so a greyscale print
still reads."""

import io
import string
import textwrap

from autograder.mistakes import NOT_IMPLEMENTED

from .insight import BEFORE_ADDED, UNANSWERED, LessonInsight

FULL_MARKS = "#009E73"
UNNAMED = "#999999"
NOT_ATTEMPTED = "#FFFFFF"
UNNAMED_LABEL = "failed, no named mistake"
NOT_ATTEMPTED_LABEL = "not attempted"
NOT_HANDED_IN = "#FFFFFF"
NOT_HANDED_IN_LABEL = "not handed in"
HANDED_IN_BEFORE = "#FFFFFF"
# lines 3 pt apart: a legend swatch (about 5.6 pt high at 8 pt type) always shows one, where
# "--" (6 pt apart, laid on the figure's own grid) could fall wholly outside it, leaving a
# plain white swatch like "not attempted"'s beside a hatched bar
HANDED_IN_BEFORE_HATCH = "----"
HANDED_IN_BEFORE_LABEL = "handed in before the test was added"
NAMED = ["#E69F00", "#56B4E9", "#D55E00", "#CC79A7", "#0072B2", "#F0E442"]
HATCHES = ["", "//", "..", "xx", "\\\\", "++"]
KEY_WIDTH = 118  # characters per line of the key


def _style(rank: int) -> tuple[str, str]:
    """Colour and hatch of an exercise's ``rank``-th most frequent named mistake."""
    return NAMED[rank % len(NAMED)], HATCHES[(rank // len(NAMED) + rank) % len(HATCHES)]


def bars(insight: LessonInsight) -> dict[str, list[tuple[str, str, int]]]:
    """Per exercise, its segments as (letter, label, count): full marks (letter ""), each named
    mistake lettered A, B, ... most frequent first, then the other failures and the learners
    who did not attempt it or handed in before its test was added, and those of the class who
    did not hand the lesson in (letter "")."""
    rows = {}
    for exercise in insight.exercises:
        named = [group for group in exercise.groups if group.named]
        counts = {NOT_IMPLEMENTED: 0, BEFORE_ADDED: 0, "": 0}  # "": failed without a name
        for group in exercise.groups:
            if not group.named:  # a notebook handed in unchanged: not attempted either
                mistake = NOT_IMPLEMENTED if group.mistake == UNANSWERED else group.mistake
                counts[mistake if mistake in counts else ""] += len(group.students)
        rows[exercise.name] = ([("", "full marks", len(exercise.passed))]
                               + [(string.ascii_uppercase[rank % 26], group.mistake,
                                   len(group.students)) for rank, group in enumerate(named)]
                               + [("", UNNAMED_LABEL, counts[""]),
                                  ("", NOT_ATTEMPTED_LABEL, counts[NOT_IMPLEMENTED]),
                                  ("", HANDED_IN_BEFORE_LABEL, counts[BEFORE_ADDED]),
                                  ("", NOT_HANDED_IN_LABEL, len(insight.not_submitted))])
    return rows


def key_lines(rows: dict) -> list[str]:
    """The key under the axes: for each exercise with named mistakes, each letter's id (a
    heading line says that a letter names a different mistake on each row)."""
    lines = []
    for name, segments in rows.items():
        entries = [f"{letter} {label.partition('/')[2]} ({count})"
                   for letter, label, count in segments if letter]
        if entries:
            lines += textwrap.wrap(f"{name}: " + " · ".join(entries), KEY_WIDTH,
                                   subsequent_indent="    ")
    return [KEY_HEADING] + lines if lines else []


KEY_HEADING = "Key, row by row (a letter stands for a different mistake on each row):"


# the segments without a letter: their colour, the colour of their count, and their hatch
UNLETTERED = {"full marks": (FULL_MARKS, "white", ""), UNNAMED_LABEL: (UNNAMED, "black", ""),
              NOT_ATTEMPTED_LABEL: (NOT_ATTEMPTED, "black", ""),
              HANDED_IN_BEFORE_LABEL: (HANDED_IN_BEFORE, "black", HANDED_IN_BEFORE_HATCH),
              NOT_HANDED_IN_LABEL: (NOT_HANDED_IN, "black", "..")}


def legend_entries(rows: dict) -> list[tuple[str, str, str]]:
    """The legend's swatches as (colour, hatch, label): only those some bar draws (a lesson
    with one named mistake per exercise has no "B" to explain)."""
    drawn, ranks = set(), set()
    for segments in rows.values():
        rank = 0
        for letter, label, count in segments:
            if count:
                if letter:
                    ranks.add(rank)
                else:
                    drawn.add(label)
            rank += bool(letter)
    entries = [(FULL_MARKS, "", "full marks")] if "full marks" in drawn else []
    if 0 in ranks:
        entries.append((*_style(0), "A: the row's most frequent named mistake (which one: the "
                        "key below)"))
    if 1 in ranks:
        entries.append((*_style(1), "B: the row's next named mistake (C, D, ...: each its own "
                        "colour and hatch)" if max(ranks) > 1 else
                        "B: the row's next named mistake (which one: the key below)"))
    if UNNAMED_LABEL in drawn:
        entries.append((UNNAMED, "", "failed, no named mistake (wrong value, error, timeout, "
                        "...)"))
    if NOT_ATTEMPTED_LABEL in drawn:
        entries.append((NOT_ATTEMPTED, "", "not attempted (the stub still raises "
                        "NotImplementedError)"))
    if HANDED_IN_BEFORE_LABEL in drawn:
        entries.append((HANDED_IN_BEFORE, HANDED_IN_BEFORE_HATCH, "handed in before you added "
                        "the exercise, no answer cell (not a mistake)"))
    if NOT_HANDED_IN_LABEL in drawn:
        entries.append((NOT_HANDED_IN, "..", "not handed in (the lesson's notebook)"))
    return entries


def lesson_figure(insight: LessonInsight):
    """The lesson's figure (a matplotlib Figure, not shown). A lesson without a verdict to draw
    (``insight.exercises`` empty: nothing graded yet, or the grader failed on every notebook)
    has none: the caller says why instead."""
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    if not insight.exercises:
        raise ValueError(f"{insight.lesson} has no verdict to draw: nothing was graded yet")
    rows = bars(insight)
    key, entries = key_lines(rows), legend_entries(rows)
    # laid out by hand (inches): a layout engine costs more than drawing the figure; the legend
    # in one column, as its labels are too long for two beside each other in the figure's width
    top, axis, legend, key_band = 0.4, 0.55, 0.18 * len(entries) + 0.08, 0.16 * len(key)
    width, height = 8.0, top + 0.42 * len(rows) + axis + legend + key_band + 0.1
    left = 0.3 + 0.085 * max([len(name) for name in rows] + [4])
    figure = Figure(figsize=(width, height))
    figure.subplots_adjust(left=left / width, right=1 - 0.3 / width, top=1 - top / height,
                           bottom=(axis + legend + key_band + 0.1) / height)
    axes = figure.add_subplot()
    names = list(rows)[::-1]  # the lesson's first exercise at the top
    widest = max([sum(count for *_, count in row) for row in rows.values()] + [1])
    inches_per_learner = (width - left - 0.3) / widest
    for y, name in enumerate(names):
        start, rank = 0, 0
        for letter, label, count in rows[name]:
            if count:
                colour, hatch = (_style(rank) if letter else (UNLETTERED[label][0],
                                                              UNLETTERED[label][2]))
                axes.barh(y, count, left=start, color=colour, hatch=hatch, height=0.7,
                          edgecolor="#333333", linewidth=0.6)
                text = f"{letter} {count}" if letter else str(count)
                if count * inches_per_learner >= 0.075 * len(text) + 0.05:  # it fits
                    axes.text(start + count / 2, y, text, ha="center", va="center", fontsize=8,
                              fontweight="bold", color="black" if letter
                              else UNLETTERED[label][1],
                              backgroundcolor="white" if letter or hatch else "none")
                start += count
            rank += bool(letter)
    axes.set_yticks(range(len(names)), names)
    axes.set_ylim(-0.5, len(names) - 0.5)
    axes.set_xlim(0, widest)
    axes.set_xlabel("learners of the class (graded, or not handed in)" if insight.not_submitted
                    else "learners graded", fontsize=9)
    axes.xaxis.get_major_locator().set_params(integer=True)
    axes.set_title(f"{insight.lesson}: what the class got wrong", fontsize=11)
    for side in ("top", "right"):
        axes.spines[side].set_visible(False)
    handles = [Patch(facecolor=colour, hatch=hatch, edgecolor="#333333", label=label)
               for colour, hatch, label in entries]
    if handles:
        figure.legend(handles=handles, loc="lower left", fontsize=8, frameon=False,
                      bbox_to_anchor=(0.02, (key_band + 0.1) / height), borderaxespad=0)
    for number, line in enumerate(key):
        figure.text(0.02, (key_band + 0.02 - 0.16 * number) / height, line, fontsize=7.5,
                    va="top", family="monospace")
    return figure


def figure_bytes(figure, kind: str = "png") -> bytes:
    """The figure as PNG or SVG."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format=kind, dpi=120 if kind == "png" else None)
    return buffer.getvalue()
