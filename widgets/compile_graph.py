"""What torch.compile captured from a function: its FX graphs and its graph breaks.

``capture(function, *args)`` compiles ``function`` with a backend that records each graph dynamo
hands it (and then runs the graph eagerly), runs it forward and backward, and collects the
graph-break reasons dynamo counted meanwhile. ``compile_explorer`` toggles between functions,
for example one around a Function with a ``jvp`` and one around a custom operator.
"""

from dataclasses import dataclass, field

import ipywidgets
import torch

from . import markup
from .view import View, html_pane

DETAILS_MARK = "Developer debug context"


@dataclass
class Capture:
    """What dynamo made of one call: graph code, graph-break reasons, or the error raised."""

    graphs: list[str] = field(default_factory=list)
    breaks: list[str] = field(default_factory=list)
    error: str | None = None

    @property
    def full_graph(self) -> bool:
        return self.error is None and not self.breaks and len(self.graphs) == 1


def _break_counts() -> dict:
    from torch._dynamo.utils import counters

    return dict(counters["graph_break"])


def short_reason(reason: str) -> str:
    """A break reason without dynamo's developer context and link: the first lines and hints."""
    kept = []
    for line in reason.splitlines():
        if DETAILS_MARK in line or line.strip().startswith("For more details"):
            break
        if line.strip():
            kept.append(line.strip())
    return "\n".join(kept)


def capture(function, *args) -> Capture:
    """Compile ``function`` afresh, call it on ``args`` (and backward when the result requires
    grad), and return the graphs and graph breaks dynamo produced."""
    result = Capture()

    def recording_backend(graph_module, example_inputs):
        result.graphs.append(graph_module.code.strip())
        return graph_module.forward

    torch.compiler.reset()  # forget earlier compilations, so that every graph is seen again
    before = _break_counts()
    inputs = [a.detach().clone().requires_grad_(a.requires_grad) if isinstance(a, torch.Tensor)
              else a for a in args]
    try:
        output = torch.compile(function, backend=recording_backend)(*inputs)
        if isinstance(output, torch.Tensor) and output.requires_grad:
            output.sum().backward()
    except Exception as error:  # the learner's code may raise anything
        result.error = f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
    after = _break_counts()
    for reason, count in after.items():
        result.breaks += [short_reason(reason)] * (count - before.get(reason, 0))
    return result


def summary(result: Capture) -> str:
    """One line: how many graphs, how many breaks."""
    if result.error:
        return f"compilation failed: {result.error}"
    graphs = f"{len(result.graphs)} graph{'' if len(result.graphs) == 1 else 's'}"
    breaks = f"{len(result.breaks)} graph break{'' if len(result.breaks) == 1 else 's'}"
    return f"{graphs}, {breaks}"


def capture_text(result: Capture) -> str:
    """The whole capture as plain text: summary, break reasons, then each graph's code."""
    parts = [summary(result)]
    parts += [f"graph break: {reason}" for reason in result.breaks]
    parts += [f"--- graph {i} ---\n{code}" for i, code in enumerate(result.graphs, 1)]
    return "\n\n".join(parts)


def capture_html(label: str, result: Capture) -> str:
    """The capture as HTML: a verdict box, the break reasons, and each graph's code."""
    if result.error:
        verdict = markup.box("error", markup.escape(summary(result)))
    elif result.full_graph:
        verdict = markup.box("ok", markup.escape(f"{summary(result)}: one graph, nothing "
                                                 "left to eager Python"))
    else:
        verdict = markup.box("warning", markup.escape(summary(result)))
    reasons = "".join(markup.box("note", "<b>graph break</b><br>" +
                                 markup.escape(reason).replace("\n", "<br>"))
                      for reason in result.breaks)
    graphs = "".join(
        markup.paragraph(f"graph {i} of {len(result.graphs)}", muted=True) +
        f'<pre style="font-family:{markup.MONO};font-size:12px;margin:2px 0 8px;'
        f'white-space:pre;overflow:auto">{markup.escape(code)}</pre>'
        for i, code in enumerate(result.graphs, 1))
    return markup.heading(markup.escape(label)) + verdict + reasons + graphs


def compile_explorer(functions: dict, *args) -> View:
    """Toggle between ``functions`` (label -> callable, each called on ``args``) and show what
    torch.compile captured from each; each is compiled once, when first shown."""
    labels = list(functions)
    toggle = ipywidgets.ToggleButtons(options=labels, value=labels[0],
                                      style={"button_width": "auto"})
    pane = html_pane()
    seen: dict[str, Capture] = {}

    def update():
        label = toggle.value
        if label not in seen:
            seen[label] = capture(functions[label], *args)
        pane.value = capture_html(label, seen[label])

    toggle.observe(lambda change: update(), names="value")
    update()
    heading = html_pane(markup.heading("What torch.compile captured"))
    view = View([heading, toggle, pane], controls={"function": toggle}, panes={"graph": pane})
    view.captures = seen
    return view
