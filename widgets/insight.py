"""What the class got wrong in one lesson, for an instructor's notebook in the course root: the
lesson's figure (each exercise's full marks, named mistakes and unnamed failures) and its table
of mistakes, counts only unless learner ids are asked for. It reads what ``make autograde``
recorded (``grader.insight``) and never grades. ``grader`` is imported only when the view is
made: a learner's kernel, which has no ``grader``, imports ``widgets`` as before."""

from pathlib import Path

import ipywidgets

from . import markup
from .view import View, html_pane


def insight_parts(lesson: str, root=None, names: bool = False) -> dict:
    """The view's contents as plain data: ``summary`` (HTML), ``figure`` (PNG bytes, or None
    when there is nothing to draw) and ``table`` (HTML, learner ids only with ``names``)."""
    from grader.insight import default_root, has_autograded, lesson_insight
    from grader.insight_figures import figure_bytes, lesson_figure
    from grader.insight_report import lesson_summary, lesson_table

    root = Path(root) if root is not None else default_root()
    if not has_autograded(root):
        return _message(f"{root} has no autograde run yet: run `make autograde` first.")
    insight = lesson_insight(root, lesson)
    if insight is None:
        return _message(f"{lesson}: nobody has handed it in yet.")
    return {"summary": markup.paragraph(markup.escape(lesson_summary(insight))),
            "figure": figure_bytes(lesson_figure(insight)) if insight.exercises else None,
            "table": lesson_table(insight, names=names)}


def _message(text: str) -> dict:
    return {"summary": markup.paragraph(markup.escape(text), muted=True), "figure": None,
            "table": ""}


def insight_view(lesson: str, root=None) -> View:
    """The lesson's figure and table of mistakes, with a box that shows learner ids and a
    button that reads what grading recorded again."""
    summary, table = html_pane(), html_pane()
    figure = ipywidgets.Image(format="png", layout=ipywidgets.Layout(width="100%",
                                                                     max_width="960px"))
    names = ipywidgets.Checkbox(description="show learner ids", value=False, indent=False)
    refresh = ipywidgets.Button(description="Refresh", icon="refresh")

    def show(_=None) -> None:
        parts = insight_parts(lesson, root, names=names.value)
        summary.value, table.value = parts["summary"], parts["table"]
        figure.value = parts["figure"] or b""
        figure.layout.display = None if parts["figure"] else "none"

    names.observe(show, names="value")
    refresh.on_click(show)
    show()
    return View([ipywidgets.HBox([refresh, names]), summary, figure, table],
                controls={"names": names, "refresh": refresh},
                panes={"summary": summary, "figure": figure, "table": table})
