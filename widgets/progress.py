"""Where a learner stands in the course: every exercise with its last self-check, and the next
one to do, read from the progress file that ``self_check`` keeps beside the notebooks."""

import ipywidgets

from autograder import progress

from . import markup
from .view import View, html_pane

_OUTCOME_STYLE = {progress.PASSED: "#2e7d32", progress.FAILED: "#d32f2f",
                  progress.NOT_STARTED: "#e69500", progress.NOT_TRIED: markup.MUTED}


def _zone(rows: list[dict]) -> str:
    """The time zone every recorded time shares ('UTC+01:00', 'UTC' for an offset of 0), said
    once in the column's heading; '' where the times differ in zone or name none."""
    zones = {row["when"].rpartition(" ")[2] for row in rows if row["when"]}
    if len(zones) != 1 or not next(iter(zones)).startswith("UTC"):
        return ""
    zone = zones.pop()
    return "UTC" if zone in ("UTC+00:00", "UTC-00:00") else zone


def progress_html(rows: list[dict]) -> str:
    """The progress table as HTML: lesson, exercise, last self-check (and its hint), when (the
    time zone said once, in the heading, where every time shares it)."""
    zone = _zone(rows)
    cells = []
    for row in rows:
        colour = _OUTCOME_STYLE[row["outcome"]]
        outcome = (f'<span style="color:{colour};font-weight:600">'
                   f'{progress.SYMBOLS[row["outcome"]]} {markup.escape(row["outcome"])}</span>')
        if row["outcome"] == progress.FAILED and row["hint"]:
            outcome += f"<br>{markup.escape(row['hint'])}"
        name = markup.code(row["exercise"]) + (" <b>← next</b>" if row["next"] else "")
        when = row["when"].rpartition(" ")[0] if zone and row["when"] else row["when"]
        cells.append([markup.escape(row["lesson"]), name, outcome, markup.escape(when)])
    done = sum(row["outcome"] == progress.PASSED for row in rows)
    upcoming = next((row for row in rows if row["next"]), None)
    status = (f"Next: {markup.code(upcoming['exercise'])} in {markup.escape(upcoming['lesson'])}."
              if upcoming else "Every exercise passes its self-check.")
    return (markup.heading(f"Your progress: {done} of {len(rows)} exercises pass their "
                           "self-check") +
            markup.table(["lesson", "exercise", "last self-check",
                          f"when ({zone})" if zone else "when"], cells, wrap={2}) +
            markup.paragraph(status))


def progress_view(folder=None, lesson: str | None = None) -> View:
    """The progress table with a button that reads the progress file again; ``lesson``: the
    one the learner is in, whose first unfinished exercise is the next one."""
    pane = html_pane(progress_html(progress.table(folder, lesson)))
    refresh = ipywidgets.Button(description="Refresh", icon="refresh")
    refresh.on_click(lambda _: setattr(pane, "value",
                                       progress_html(progress.table(folder, lesson))))
    return View([refresh, pane], controls={"refresh": refresh}, panes={"table": pane})
