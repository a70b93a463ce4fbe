"""Forward-save inspector: what a Function's forward kept for backward, and what it costs."""

from dataclasses import dataclass, field, replace

import ipywidgets
import re

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

from autograder.checks import make_inputs
from autograder.probes import SavedTensor, trace_forward

from . import markup
from .functions import display_name, error_summary, input_names
from .markup import code, format_bytes, format_dtype, format_shape
from .view import View, html_pane, on_change


@dataclass
class Inspection:
    """What one forward call saved, read off ``ctx`` and the saved-tensor hooks."""

    function: str
    inputs: dict  # name -> the tensor or value passed to forward
    saved: list[SavedTensor]
    ctx_attributes: dict  # name -> value, non-tensor attributes only
    ctx_tensor_attributes: dict  # e.g. {"ctx.mask": False}: path -> holds a floating tensor
    needs_input_grad: tuple | None  # None when autograd recorded nothing
    warnings: list[str] = field(default_factory=list)
    # ctx.saved_tensors as backward will read it: None where save_for_backward was given None
    slots: list = field(default_factory=list)

    @property
    def recorded(self) -> bool:
        """False when no input required grad, so forward's ctx was thrown away."""
        return self.needs_input_grad is not None

    @property
    def saved_bytes(self) -> int:
        return sum(s.nbytes for s in self.saved)

    @property
    def input_bytes(self) -> int:
        return sum(t.numel() * t.element_size() for t in self.inputs.values()
                   if isinstance(t, torch.Tensor))

    @property
    def new_bytes(self) -> int:
        """Bytes of saved intermediates: memory kept alive only for backward."""
        return sum(s.nbytes for s in self.saved if s.role in ("intermediate", "constant"))


class _Provenance(TorchDispatchMode):
    """Which tensors forward made from no input at all (``torch.tensor(scale)``, a ``full``),
    by the storages each op read and wrote. A tensor read before any op made it (an input, a
    NumPy result) is not a constant, nor is anything computed from one; nor is a tensor made
    from Python data once forward has read a number out of one with ``.item()`` (a number
    taken out through NumPy is not seen: such a 0-d tensor counts as a constant)."""

    def __init__(self, inputs):
        super().__init__()
        self.not_constant = {_storage(t) for t in inputs if isinstance(t, torch.Tensor)}
        self.constants: set[int] = set()
        self.numbers_escaped = False

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        result = func(*args, **(kwargs or {}))
        tensors = [t for t in tree_leaves((args, kwargs)) if isinstance(t, torch.Tensor)]
        read = {_storage(t) for t in tensors}
        made_of_constants = read <= self.constants - self.not_constant
        if func is torch.ops.aten._local_scalar_dense.default and not made_of_constants:
            self.numbers_escaped = True
        if func is torch.ops.aten.lift_fresh.default:  # torch.tensor(number)
            made_of_constants = tensors[0].dim() == 0 and not self.numbers_escaped
        written = {_storage(t) for t in tree_leaves(result) if isinstance(t, torch.Tensor)}
        (self.constants if made_of_constants else self.not_constant).update(written)
        return result

    def is_constant(self, tensor: torch.Tensor) -> bool:
        return _storage(tensor) in self.constants - self.not_constant


OUTPUT_ALIAS = "intermediate (the output's memory)"


def _storage(tensor: torch.Tensor) -> int:
    return tensor.untyped_storage().data_ptr()


def is_risky_intermediate(saved: SavedTensor) -> bool:
    """A floating intermediate breaks double backward; a boolean or integer mask does not."""
    return saved.role == "intermediate" and (saved.dtype.is_floating_point
                                             or saved.dtype.is_complex)


def save_warnings(inspection: Inspection) -> list[str]:
    """Plain-text warnings about what forward saved and where."""
    warnings = []
    for path, floating in inspection.ctx_tensor_attributes.items():
        consequence = ("skips autograd's in-place version check and breaks double backward"
                       if floating else "skips autograd's in-place version check: a change "
                       "made to it before backward would go unnoticed")
        warnings.append(f"{path} holds a tensor: pass it to ctx.save_for_backward instead. "
                        f"A tensor kept as a ctx attribute {consequence}.")
    for saved in inspection.saved:
        if saved.role == OUTPUT_ALIAS:
            warnings.append(
                "a tensor in the output's memory was saved, but not the output itself "
                "(y.detach(), or a view or reshape of y): save the tensor forward returns. "
                "Autograd links a saved output back to its node; an alias is cut from the "
                "graph, so double backward cannot go through it.")
        if is_risky_intermediate(saved):
            warnings.append(
                f"a {format_dtype(saved.dtype)} intermediate of shape {format_shape(saved.shape)} "
                "was saved: it was computed with autograd off, so double backward cannot "
                "differentiate through it. Save inputs or outputs and recompute it in backward, "
                "or return it as an extra output."
            )
    return warnings


def _holds_floating(value) -> bool:
    if isinstance(value, torch.Tensor):
        return value.is_floating_point() or value.is_complex()
    if isinstance(value, (list, tuple)):
        return any(_holds_floating(item) for item in value)
    if isinstance(value, dict):
        return any(_holds_floating(item) for item in value.values())
    return False


def inspect_forward(function, *inputs, names=None, requires_grad=None) -> Inspection:
    """Run ``function`` on fresh copies of ``inputs`` and record what forward saved.

    ``requires_grad`` is True (default: every floating tensor), False, or a set of input names.
    """
    names = list(names) if names is not None else input_names(function, len(inputs))
    values = make_inputs(dict(zip(names, inputs)),
                         requires_grad=True if requires_grad is None else requires_grad)
    with _Provenance(values.values()) as provenance:
        trace = trace_forward(function, values)
    outputs = trace.output if isinstance(trace.output, tuple) else (trace.output,)
    ctx = next((o.grad_fn for o in outputs
                if isinstance(o, torch.Tensor) and o.grad_fn is not None), None)
    # an output's memory saved as another tensor (y.detach(), a view of y): not y itself,
    # which autograd links back to ctx
    saved = [replace(s, role="constant") if s.role == "intermediate"
             and provenance.is_constant(s.tensor) else
             replace(s, role=OUTPUT_ALIAS) if s.role == "output" and s.tensor.grad_fn is not ctx
             else s for s in trace.saved]
    needs = tuple(ctx.needs_input_grad) if ctx is not None and hasattr(ctx, "needs_input_grad") \
        else None
    tensor_roots = {_attribute_of(path) for path in trace.ctx_tensor_attributes}
    plain = {k: v for k, v in trace.ctx_attributes.items() if k not in tensor_roots}
    floating = {path: _holds_floating(trace.ctx_attributes[_attribute_of(path)])
                for path in trace.ctx_tensor_attributes}
    inspection = Inspection(display_name(function), values, saved, plain, floating, needs)
    inspection.warnings = save_warnings(inspection)
    inspection.slots = _slots(ctx, saved)
    return inspection


def _attribute_of(path: str) -> str:
    """The ctx attribute a path to a tensor starts from: "ctx.cache[0]" and "ctx.get's closure
    variable x" start from cache and get."""
    return re.match(r"\w+", path.removeprefix("ctx."))[0]


def _slots(ctx, saved: list[SavedTensor]) -> list:
    """``saved`` laid out as ``ctx.saved_tensors``, with a None where forward saved None (the
    hooks see only the tensors); ``saved`` itself where the tuple cannot be read."""
    try:
        entries = ctx.saved_tensors if ctx is not None else ()
    except (RuntimeError, AttributeError):  # e.g. a saved tensor modified in place since
        return list(saved)
    if sum(entry is not None for entry in entries) != len(saved):
        return list(saved)
    tensors = iter(saved)
    return [None if entry is None else next(tensors) for entry in entries]


def _role_note(saved: SavedTensor) -> str:
    if saved.role.startswith("input"):
        return "already in memory (the caller holds it)"
    if saved.role == "output":
        return "already in memory (the result)"
    if saved.role == OUTPUT_ALIAS:
        return ("no new memory, but not the output itself (y.detach() or a view of y): saved "
                "cut from the graph, so double backward cannot go through it")
    if is_risky_intermediate(saved):
        return "new memory; breaks double backward"
    if saved.role == "constant":
        return "new memory; made from no input, so double backward is fine"
    return "new memory; a mask carries no gradient, so double backward is fine"


def _value_text(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def inspection_html(inspection: Inspection) -> str:
    """The inspection as an HTML report: saved tensors, ctx attributes, warnings, totals."""
    name = inspection.function
    parts = [markup.heading(f"What {code(name + '.forward')} saved for backward")]
    if not inspection.recorded:
        parts.append(markup.box(
            "note", "No input requires grad, so autograd recorded nothing: forward ran, but its "
            f"{code('ctx')} was thrown away and nothing was saved. Tick an input's "
            f"{code('requires_grad')} to see what backward would get."))
        return "".join(parts)
    if inspection.slots:
        rows = [[code(f"saved_tensors[{i}]"), code("None"), "—", "—", format_bytes(0),
                 "nothing kept: forward saved None here"] if s is None else
                [code(f"saved_tensors[{i}]"), markup.escape(s.role), format_shape(s.shape),
                 format_dtype(s.dtype), format_bytes(s.nbytes), markup.escape(_role_note(s))]
                for i, s in enumerate(inspection.slots)]
        headers = ["ctx.saved_tensors", "role", "shape", "dtype", "bytes", "memory"]
        parts.append(markup.table(headers, rows, numeric={4}, monospace={2, 3}))
    else:
        parts.append(markup.paragraph(
            f"Nothing was passed to {code('ctx.save_for_backward')}: fine when backward needs "
            "no tensor (a constant derivative), a bug otherwise."))
    attributes = [[code(f"ctx.{k}"), markup.escape(type(v).__name__),
                   code(_value_text(v))] for k, v in inspection.ctx_attributes.items()]
    attributes += [[code(path), "Tensor", "⚠ see below"] for path in
                   inspection.ctx_tensor_attributes]
    attributes.append([code("ctx.needs_input_grad"), "tuple",
                       code(str(inspection.needs_input_grad))])
    parts.append(markup.table(["ctx attribute", "type", "value"], attributes))
    for warning in inspection.warnings:
        parts.append(markup.box("warning", markup.escape(warning)))
    if inspection.saved and not inspection.warnings:
        # no word of double backward here: lesson 00 shows this line, lesson 04 teaches that
        parts.append(markup.box("ok", "Everything went through save_for_backward, so autograd "
                                      "will notice if any of it is changed in place before "
                                      "backward runs."))
    ratio = (f", {inspection.saved_bytes / inspection.input_bytes:.2g}× the inputs' "
             f"{format_bytes(inspection.input_bytes)}" if inspection.input_bytes else "")
    new = (f"of that, {format_bytes(inspection.new_bytes)} is new memory held until backward "
           "runs" if inspection.new_bytes else "none of it is new memory")
    parts.append(markup.paragraph(
        f"<b>Saved {len(inspection.saved)} tensor{'s' * (len(inspection.saved) != 1)}, "
        f"{format_bytes(inspection.saved_bytes)}</b>{ratio}; {new}."))
    return "".join(parts)


def inspect_saved(function, *inputs, names=None) -> View:
    """A view of what ``function``'s forward saved for ``inputs``, with a requires_grad toggle
    per floating-point tensor input."""
    names = list(names) if names is not None else input_names(function, len(inputs))
    toggles = {name: ipywidgets.Checkbox(value=True, description=f"{name}.requires_grad",
                                         indent=False,
                                         layout=ipywidgets.Layout(width="auto",
                                                                  margin="0 16px 0 0"))
               for name, value in zip(names, inputs)
               if isinstance(value, torch.Tensor) and value.is_floating_point()}
    report = html_pane()

    def update():
        wanted = {name for name, toggle in toggles.items() if toggle.value}
        try:
            report.value = inspection_html(
                inspect_forward(function, *inputs, names=names, requires_grad=wanted))
        except Exception as error:  # the learner's forward may raise anything
            report.value = markup.box("error", markup.escape(error_summary(function, error)))

    on_change(toggles.values(), update)
    update()
    return View([ipywidgets.HBox(list(toggles.values())), report],
                controls=toggles, panes={"report": report})
