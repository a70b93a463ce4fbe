"""The thin ipywidgets layer every view shares: named controls, named panes, safe updates."""

import ipywidgets

from . import markup
from .figures import Frames, css_width


class View(ipywidgets.VBox):
    """A view: ``controls`` a learner operates, ``panes`` that show the result."""

    def __init__(self, children, *, controls: dict, panes: dict, **kwargs):
        super().__init__(children=list(children), **kwargs)
        self.controls = controls
        self.panes = panes


def html_pane(value: str = "") -> ipywidgets.HTML:
    """An HTML widget for tables, readouts and messages."""
    return ipywidgets.HTML(value=value, layout=ipywidgets.Layout(overflow="auto"))


def image_pane(frames: Frames) -> ipywidgets.Image:
    """An Image widget sized to the figure and showing its current frame."""
    return ipywidgets.Image(value=frames.png(), format="png",
                            layout=ipywidgets.Layout(width=css_width(frames.figure),
                                                     height="auto"))


def show_figure(pane: ipywidgets.Image, frames: Frames) -> None:
    """Put the figure's current frame into the Image widget."""
    pane.value = frames.png()


def error_html(summary: str, hint: str = "") -> str:
    """An error box: what the learner's code raised, and what to try."""
    extra = f"<br>{hint}" if hint else ""
    return markup.box("error", markup.escape(summary) + extra)


def on_change(controls, callback) -> None:
    """Call ``callback()`` whenever the value of any of ``controls`` changes."""
    for control in controls:
        control.observe(lambda change: callback(), names="value")
