"""The thin ipywidgets layer every view shares: named controls, named panes, and a static
snapshot for wherever the live widget cannot be shown."""

import base64

import ipywidgets

from . import markup
from .figures import Frames, css_width

SNAPSHOT_NOTE = ("A snapshot of an interactive view: run the cell (or trust the notebook) "
                 "to use its controls.")
SAVED_NOTE = "Saved view: run the cell to use its controls."
VIEW_CLASS = "autograd-course-view"

# Drawn from saved widget state with no kernel, ipywidgets marks every widget with a red
# broken-link icon; a view says it once, quietly, instead.
STYLE = f"""<style>
.{VIEW_CLASS} .jupyter-widgets-disconnected::before,
.{VIEW_CLASS}.jupyter-widgets-disconnected::before {{ display: none; }}
.{VIEW_CLASS}.jupyter-widgets-disconnected::after {{
  content: "{SAVED_NOTE}"; order: -1; margin: 2px 0 4px;
  font-size: 12px; font-style: italic; color: var(--jp-ui-font-color2, #616161);
}}
</style>"""


class View(ipywidgets.VBox):
    """A view: ``controls`` a learner operates, ``panes`` that show the result."""

    def __init__(self, children, *, controls: dict, panes: dict, **kwargs):
        style = ipywidgets.HTML(STYLE, layout=ipywidgets.Layout(display="none"))
        super().__init__(children=[style, *children], **kwargs)
        self.add_class(VIEW_CLASS)
        self.controls = controls
        self.panes = panes

    def _repr_mimebundle_(self, **kwargs):
        """The live widget, plus an HTML snapshot: JupyterLab shows a widget only in a trusted
        notebook, and GitHub or nbconvert never do."""
        bundle = super()._repr_mimebundle_(**kwargs)
        if bundle is not None:
            bundle["text/html"] = snapshot_html(self)
        return bundle


def snapshot_html(widget) -> str:
    """What ``widget`` shows now, as plain HTML: pictures inline, controls left out."""
    if isinstance(widget, View):
        return (markup.paragraph(markup.escape(SNAPSHOT_NOTE), muted=True) +
                "".join(snapshot_html(child) for child in widget.children))
    if not isinstance(widget, ipywidgets.DOMWidget):
        return ""
    if widget.layout.display == "none":
        return ""
    if isinstance(widget, ipywidgets.HTML):
        return widget.value
    if isinstance(widget, ipywidgets.Image):
        data = base64.b64encode(widget.value).decode("ascii")
        return (f'<img src="data:image/{widget.format};base64,{data}" '
                f'style="width:{widget.layout.width or "auto"};max-width:100%">')
    if isinstance(widget, ipywidgets.Box):
        if not isinstance(widget, ipywidgets.HBox):
            return "".join(snapshot_html(child) for child in widget.children)
        parts = "".join(f'<div style="flex:0 0 auto">{snapshot_html(child)}</div>'
                        for child in widget.children)
        return f'<div style="display:flex;gap:16px;align-items:flex-start">{parts}</div>'
    return ""


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


def on_change(controls, callback) -> None:
    """Call ``callback()`` whenever the value of any of ``controls`` changes."""
    for control in controls:
        control.observe(lambda change: callback(), names="value")
