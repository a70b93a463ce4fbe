"""Backward-flow stepper: run backward once with hooks on every node, then replay it node by
node, showing the grad_output each node received and the gradients it sent on."""

from dataclasses import dataclass

import ipywidgets
import torch

from . import markup
from .graph import AutogradGraph, draw_graph, extract_graph, highlight_step
from .markup import code, describe_tensor
from .view import View, html_pane, image_pane, show_figure


@dataclass
class FlowStep:
    """One node's turn in backward: what arrived (one grad_output per forward output) and
    what it returned (one gradient per ``next_functions`` slot)."""

    node: int
    grad_outputs: tuple
    grad_inputs: tuple | None  # None if the node raised before returning


@dataclass
class BackwardFlow:
    graph: AutogradGraph
    steps: list[FlowStep]
    error: str | None = None  # what backward raised, if it did


def _copy(grads) -> tuple:
    return tuple(g.detach().clone() if isinstance(g, torch.Tensor) else g for g in grads)


def trace_backward_flow(output: torch.Tensor, grad_output: torch.Tensor | None = None, *,
                        names: dict | None = None) -> BackwardFlow:
    """Backpropagate ``grad_output`` (ones by default) through ``output``'s graph, recording
    each node's incoming and outgoing gradients in the order the engine ran them.

    The graph is retained and every leaf's ``.grad`` is restored afterwards, so the learner's
    tensors are left as they were.
    """
    graph = extract_graph(output, names)
    steps: list[FlowStep] = []
    handles = []

    def before(index):
        def hook(grad_outputs):
            steps.append(FlowStep(index, _copy(grad_outputs), None))
        return hook

    def after(index):
        def hook(grad_inputs, grad_outputs):
            step = next(s for s in reversed(steps) if s.node == index)
            step.grad_inputs = _copy(grad_inputs)
        return hook

    for index, grad_fn in enumerate(graph.grad_fns):
        handles.append(grad_fn.register_prehook(before(index)))
        handles.append(grad_fn.register_hook(after(index)))
    leaves = [fn.variable for fn in graph.grad_fns if type(fn).__name__ == "AccumulateGrad"]
    stashed = [leaf.grad for leaf in leaves]
    for leaf in leaves:
        leaf.grad = None
    if grad_output is None:
        grad_output = torch.ones_like(output)
    error = None
    try:
        torch.autograd.backward(output, grad_output, retain_graph=True)
    except RuntimeError as exc:
        if "backward through the graph a second time" in str(exc):
            raise ValueError("this output's graph was already freed by a backward call: "
                             "compute the output again, or call backward(retain_graph=True)"
                             ) from exc
        error = f"{type(exc).__name__}: {str(exc).strip().splitlines()[0]}"
    except Exception as exc:  # the learner's backward may raise anything
        error = f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc) else ''}"
    finally:
        for handle in handles:
            handle.remove()
        for leaf, grad in zip(leaves, stashed):
            leaf.grad = grad
    return BackwardFlow(graph, steps, error)


def _explain(graph: AutogradGraph, step: FlowStep, first: bool) -> str:
    node = graph.nodes[step.node]
    if node.kind == "custom":
        forward = graph.grad_fns[step.node]._forward_cls.__name__
        text = (f"Your {code(forward + '.backward(ctx, grad_output)')} runs: it gets "
                "grad_output and returns one gradient per forward input (None where "
                f"{code('ctx.needs_input_grad')} is False; non-tensor inputs are dropped here).")
    elif node.kind == "leaf":
        text = (f"{code('AccumulateGrad')} adds the gradient it receives into the leaf's "
                f"{code('.grad')}: the end of this path.")
    else:
        text = (f"PyTorch's {code(node.name)} multiplies grad_output by its op's local "
                "Jacobian and sends one gradient to each input.")
    if first:
        text = ("Backward starts at the output with grad_output = the seed you pass to "
                f"{code('backward()')} (ones here). " + text)
    return text


def one_line(label: str) -> str:
    """A drawn two-line label on one line: ``'Cube\\n.backward'`` -> ``'Cube.backward'``,
    ``'x.grad\\n(3,)'`` -> ``'x.grad (3,)'``."""
    first, _, rest = label.partition("\n")
    if not rest:
        return first
    return first + ("" if rest.startswith(".") else " ") + rest.replace("\n", " ")


def step_html(flow: BackwardFlow, position: int) -> str:
    """The ``position``-th step (from 0) as HTML: the node, what came in, what went out."""
    graph, step = flow.graph, flow.steps[position]
    node = graph.nodes[step.node]
    title = one_line(node.label)
    parts = [markup.heading(f"Step {position + 1} of {len(flow.steps)}: "
                            f"{markup.escape(title)}"),
             markup.paragraph(_explain(graph, step, position == 0))]
    rows = []
    for k, grad in enumerate(step.grad_outputs):
        label = "grad_output" if len(step.grad_outputs) == 1 else f"grad_outputs[{k}]"
        rows.append(["in", code(label), code(describe_tensor(grad))])
    children = {slot: child for parent, child, slot in graph.edges if parent == step.node}
    for k, grad in enumerate(step.grad_inputs or ()):
        target = (markup.escape(one_line(graph.nodes[children[k]].label))
                  if k in children else "nothing (needs no gradient)")
        rows.append(["out", "→ " + target, code(describe_tensor(grad))])
    if rows:
        parts.append(markup.table(["", "gradient", "value"], rows, wrap={2}))
    if step.grad_inputs is None and flow.error:
        parts.append(markup.box("error", "backward stopped here: " + markup.escape(flow.error)))
    return "".join(parts)


def backward_flow(output: torch.Tensor, grad_output: torch.Tensor | None = None, *,
                  names: dict | None = None) -> View:
    """A stepper over ``output``'s backward: the graph with the running node outlined, and
    the gradients in and out of it. ``names`` labels leaves, e.g. ``{"x": x, "w": w}``."""
    flow = trace_backward_flow(output, grad_output, names=names)
    drawing = draw_graph(flow.graph)
    count = max(len(flow.steps), 1)
    slider = ipywidgets.IntSlider(value=1, min=1, max=count, description="step",
                                  continuous_update=True,
                                  layout=ipywidgets.Layout(width="320px"))
    play = ipywidgets.Play(value=1, min=1, max=count, interval=900, description="play")
    ipywidgets.jslink((play, "value"), (slider, "value"))
    previous = ipywidgets.Button(description="◀ previous", layout=ipywidgets.Layout(width="110px"))
    following = ipywidgets.Button(description="next ▶", layout=ipywidgets.Layout(width="110px"))
    picture = image_pane(drawing.frames)
    details = html_pane()
    details.layout.width = "460px"

    def update():
        if not flow.steps:
            details.value = markup.box("error", "backward ran no node: " + markup.escape(
                flow.error or "nothing to do"))
            return
        position = slider.value - 1
        done = {s.node for s in flow.steps[:position]}
        highlight_step(drawing, flow.graph, flow.steps[position].node, done)
        show_figure(picture, drawing.frames)
        details.value = step_html(flow, position)

    previous.on_click(lambda _: setattr(slider, "value", max(slider.min, slider.value - 1)))
    following.on_click(lambda _: setattr(slider, "value", min(slider.max, slider.value + 1)))
    slider.observe(lambda change: update(), names="value")
    update()
    bar = ipywidgets.HBox([play, previous, following, slider])
    body = ipywidgets.HBox([picture, details],
                           layout=ipywidgets.Layout(align_items="flex-start"))
    return View([bar, body], controls={"step": slider, "play": play, "previous": previous,
                                       "next": following},
                panes={"graph": picture, "details": details})
