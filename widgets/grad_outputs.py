"""Several outputs view: choose which outputs of a Function feed the loss, and see what
autograd handed its backward for each one (a tensor, None, or zeros it materialised), and
what backward made of each."""

import inspect
from dataclasses import dataclass

import ipywidgets
import torch

from autograder.probes import record_grad_outputs

from . import markup
from .functions import display_name, error_summary, is_function_class
from .markup import code
from .view import View, html_pane

TENSOR, NONE, ZEROS, NOT_CALLED = "tensor", "None", "zeros (materialised)", "backward not called"


@dataclass
class OutputRow:
    """One output of the Function, and what its backward received for it."""

    name: str
    shape: tuple
    dtype: torch.dtype
    differentiable: bool  # requires_grad after forward
    used: bool  # feeds the loss
    received: str  # TENSOR, NONE, ZEROS or NOT_CALLED
    grad_output: object  # the tensor received, or None
    share: object  # this output's part of the input gradient (used alone), or None


@dataclass
class OutputsTrace:
    """One forward and one backward with a chosen set of outputs in the loss."""

    rows: list[OutputRow]
    called: bool  # backward ran
    input_grad: object  # the gradient of the first tensor input, or None
    error: str | None = None


def output_names(function, count: int) -> list[str]:
    """Names from ``backward(ctx, grad_values, grad_indices)``: values, indices; else y0, y1."""
    names = []
    if is_function_class(function):
        try:
            parameters = list(inspect.signature(function.backward).parameters.values())[1:]
        except (TypeError, ValueError):
            parameters = []
        names = [p.name.removeprefix("grad_") for p in parameters
                 if p.kind is p.POSITIONAL_OR_KEYWORD]
    if len(names) != count:
        names = [f"y{i}" for i in range(count)]
    return names


def _weights(output: torch.Tensor, index: int) -> torch.Tensor:
    """Fixed random weights, so the loss sum(w * y) gives each output its own grad_output."""
    generator = torch.Generator().manual_seed(100 + index)
    return torch.randn(output.shape, generator=generator, dtype=output.dtype).to(output.device)


def _run(function, inputs: tuple, used: list[bool]):
    """Forward on fresh copies of ``inputs``, backward from the used outputs: (outputs,
    gradients received, input gradient)."""
    probe, received = record_grad_outputs(function)
    leaves = [t.detach().clone().requires_grad_(t.is_floating_point())
              if isinstance(t, torch.Tensor) else t for t in inputs]
    passed = [t.clone() if isinstance(t, torch.Tensor) else t for t in leaves]  # not leaves:
    outputs = probe.apply(*passed)  # an in-place Function may write into them
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    terms = [(_weights(o, i) * o).sum() for i, (o, wanted) in enumerate(zip(outputs, used))
             if wanted and isinstance(o, torch.Tensor) and o.requires_grad]
    if not terms:
        return outputs, None, None
    first = next(t for t in leaves if isinstance(t, torch.Tensor))
    grad, = torch.autograd.grad(sum(terms), first, allow_unused=True)
    return outputs, (received[-1] if received else None), grad


def _kind(grad_output, used: bool) -> str:
    if grad_output is None:
        return NONE
    if not used and not grad_output.any():
        return ZEROS
    return TENSOR


def trace_outputs(function, inputs: tuple, used) -> OutputsTrace:
    """Run ``function`` with the outputs flagged in ``used`` feeding the loss."""
    try:
        outputs, received, grad = _run(function, inputs, list(used))
        names = output_names(function, len(outputs))
        used = [bool(u) and o.requires_grad for u, o in zip(used, outputs)]
        rows = []
        for i, output in enumerate(outputs):
            share = None
            if used[i]:
                only = [j == i for j in range(len(outputs))]
                share = _run(function, inputs, only)[2]
            grad_output = received[i] if received is not None else None
            rows.append(OutputRow(
                names[i], tuple(output.shape), output.dtype, output.requires_grad, used[i],
                NOT_CALLED if received is None else _kind(grad_output, used[i]),
                grad_output, share))
    except Exception as error:  # the learner's Function may raise anything
        return OutputsTrace([], False, None, error_summary(function, error))
    return OutputsTrace(rows, received is not None, grad)


def _received_html(row: OutputRow) -> str:
    if row.received == NOT_CALLED:
        return "—"
    text = {NONE: "None", ZEROS: "zeros, materialised by autograd",
            TENSOR: markup.escape(markup.describe_tensor(row.grad_output))}[row.received]
    return text if row.received == TENSOR else f"<b>{text}</b>"


def summary_text(function, trace: OutputsTrace) -> str:
    """One sentence on what backward saw."""
    if not trace.called:
        if not any(row.differentiable for row in trace.rows):
            return "no output requires grad: there is nothing to differentiate"
        return "no output feeds the loss: autograd never calls backward"
    kinds = ", ".join(f"{row.name}: {row.received}" for row in trace.rows)
    zeros = [row.name for row in trace.rows if row.received == ZEROS]
    note = (f"; autograd allocated zeros for {', '.join(zeros)}: "
            "ctx.set_materialize_grads(False) would pass None" if zeros else "")
    return f"{display_name(function)}.backward received ({kinds}){note}"


def trace_html(function, trace: OutputsTrace) -> str:
    """The table of outputs, the summary line and the input gradient."""
    if trace.error:
        return markup.box("error", markup.escape(trace.error))
    rows = [[code(row.name), markup.format_shape(row.shape) + " " + markup.format_dtype(row.dtype),
             "yes" if row.differentiable else "no (not differentiable)",
             "yes" if row.used else "no", _received_html(row),
             markup.escape(markup.describe_tensor(row.share)) if row.share is not None else "—"]
            for row in trace.rows]
    table = markup.table(["output", "shape, dtype", "requires grad", "feeds the loss",
                          "backward received", "its share of the input gradient"], rows,
                         monospace={4, 5}, wrap={4, 5})
    grad = ("no gradient (None)" if trace.input_grad is None
            else markup.describe_tensor(trace.input_grad))
    return (table + markup.paragraph(markup.escape(summary_text(function, trace))) +
            markup.paragraph(f"input gradient: {code(grad)}"))


def outputs_explorer(function, *inputs) -> View:
    """Checkboxes choose which outputs of ``function`` feed the loss; the table shows what its
    backward received for each and the gradient that came out."""
    heading = html_pane(markup.heading(
        f"{code(display_name(function))}: which outputs got a gradient"))
    readout = html_pane()
    probe = trace_outputs(function, inputs, [True] * 16)
    if probe.error:
        readout.value = trace_html(function, probe)
        return View([heading, readout], controls={}, panes={"table": readout})
    boxes = {row.name: ipywidgets.Checkbox(value=row.differentiable, description=row.name,
                                           disabled=not row.differentiable, indent=False,
                                           layout=ipywidgets.Layout(width="auto"))
             for row in probe.rows}

    def update():
        trace = trace_outputs(function, inputs, [box.value for box in boxes.values()])
        readout.value = trace_html(function, trace)

    for box in boxes.values():
        box.observe(lambda change: update(), names="value")
    update()
    label = html_pane(markup.paragraph("feed the loss:"))
    for box in boxes.values():
        box.layout.margin = "0 16px 0 0"
    controls = ipywidgets.HBox([label, *boxes.values()],
                               layout=ipywidgets.Layout(align_items="center"))
    return View([heading, controls, readout], controls=boxes, panes={"table": readout})
