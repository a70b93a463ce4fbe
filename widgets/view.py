"""The thin ipywidgets layer every view shares: named controls, named panes, safe updates."""

import ipywidgets

from . import markup
from .figures import css_width, figure_png


class View(ipywidgets.VBox):
    """A view: ``controls`` a learner operates, ``panes`` that show the result."""

    def __init__(self, children, *, controls: dict, panes: dict, **kwargs):
        super().__init__(children=list(children), **kwargs)
        self.controls = controls
        self.panes = panes


def html_pane(value: str = "") -> ipywidgets.HTML:
    """An HTML widget for tables, readouts and messages."""
    return ipywidgets.HTML(value=value, layout=ipywidgets.Layout(overflow="auto"))


def image_pane(figure) -> ipywidgets.Image:
    """An Image widget sized to ``figure`` and showing it."""
    return ipywidgets.Image(value=figure_png(figure), format="png",
                            layout=ipywidgets.Layout(width=css_width(figure), height="auto"))


def show_figure(pane: ipywidgets.Image, figure) -> None:
    """Put the figure's current drawing into the Image widget."""
    pane.value = figure_png(figure)


def error_html(summary: str, hint: str = "") -> str:
    """An error box: what the learner's code raised, and what to try."""
    extra = f"<br>{hint}" if hint else ""
    return markup.box("error", markup.escape(summary) + extra)


def on_change(controls, callback) -> None:
    """Call ``callback()`` whenever the value of any of ``controls`` changes."""
    for control in controls:
        control.observe(lambda change: callback(), names="value")
