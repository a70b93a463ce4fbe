"""Lesson 04: what NumpyTanh's backward builds for a second derivative: the inner Function
it calls, what that saves, and whether the graph reaches x."""


import numpy as np
import torch

from ...errors import GradingError
from ...class_state import class_state
from ..shared.saved_reads import doubled_saved_tensors, stayed


def name_saved_copy(output: torch.Tensor, x: torch.Tensor) -> None:
    """A saved tensor with y's (or x's) values that comes back from ctx.saved_tensors with no
    graph: forward saved a copy, not the very tensor it returns (or receives)."""
    try:
        saved = output.grad_fn.saved_tensors  # the Function's node, even for a returned view
    except (AttributeError, RuntimeError):
        return
    for tensor in saved:
        if tensor.requires_grad or tensor.shape != x.shape:
            continue
        if torch.allclose(tensor, output.detach()):
            raise GradingError(
                "the tensor NumpyTanh's forward saves holds y's values but is not the tensor "
                "forward returns (a second torch.from_numpy of the same array, a .clone(), a "
                ".view_as()): to autograd it is an intermediate, so ctx.saved_tensors gives it "
                "back with no graph and the second derivative with respect to x is lost; of "
                "the tensors forward handles, which ones does ctx.saved_tensors give back "
                "linked to the graph, and is the one you save among them?",
                f"saved tensor requires grad: False; same object as the output: "
                f"{tensor is output}; same memory: {tensor.data_ptr() == output.data_ptr()}",
                mistake="NumpyTanh/saves-copy-of-output")
        if torch.allclose(tensor, x.detach()):
            raise GradingError(
                "the x NumpyTanh's forward saves is a copy cut from the graph (x.detach(), a "
                "clone, a tensor made from its NumPy array): ctx.saved_tensors gives it back "
                "with no graph, so the second derivative with respect to x is lost; save x "
                "itself (ctx.save_for_backward(x))", mistake="NumpyTanh/saves-detached-input")


def graph(node):
    """Every node of the graph from ``node``, each once."""
    seen, stack = set(), [node]
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        yield node
        stack.extend(next_node for next_node, _ in node.next_functions)


def check_inner_ctx(node) -> None:
    """The Function backward calls keeps its tensors through save_for_backward too (a custom
    Function's node is its ctx: attributes set in forward sit in the node's __dict__)."""
    for node in graph(node):
        kept = [(name, "a tensor" if isinstance(value, torch.Tensor) else "a NumPy array")
                for name, value in getattr(node, "__dict__", {}).items()
                if isinstance(value, (torch.Tensor, np.ndarray))]
        if kept:
            raise GradingError(
                f"the Function your backward calls ({type(node).__name__.removesuffix('Backward')})"
                f" stores {kept[0][1]} as ctx.{kept[0][0]}: use ctx.save_for_backward there too "
                "(a tensor; torch.from_numpy of an array), so autograd can detect in-place "
                "changes and saved-tensor hooks see it",
                mistake="NumpyTanh/inner-tensor-on-ctx" if kept[0][1] == "a tensor"
                else "NumpyTanh/inner-array-on-ctx")


def reaches(node, leaf: torch.Tensor) -> bool:
    """Whether the graph from ``node`` reaches the leaf ``leaf`` (its AccumulateGrad node)."""
    return any(getattr(node, "variable", None) is leaf for node in graph(node))


def check_inner_class_state(function, first: torch.Tensor, call_again) -> None:
    """The Function backward calls keeps each call's state on its own ctx: a second call's
    first backward (which runs that Function's forward again) leaves the attributes of its
    class as they were. ``first`` is the first call's gradient, ``call_again`` makes the second
    call's."""
    classes = []
    for node in graph(first.grad_fn):
        cls = getattr(node, "_forward_cls", None)
        if cls is not None and cls is not function and cls not in classes:
            classes.append(cls)
    before = {cls: class_state(cls) for cls in classes}
    call_again()
    for cls in classes:
        after = class_state(cls)
        changed = [key for key in after if key not in before[cls]
                   or after[key] is not before[cls][key]]
        if changed:
            owner, attribute = changed[0]
            raise GradingError(
                f"the Function your backward calls ({cls.__name__}) sets {owner}.{attribute} "
                "each time it runs: a class attribute is shared by every call, so a second call "
                "in the same graph overwrites the first's, and the first call's second "
                "derivative reads the second call's values; keep its tensors with "
                "ctx.save_for_backward, one set per call",
                mistake="NumpyTanh/inner-state-on-class")


def check_inner_reads_saved(function, x: torch.Tensor, grad_output: torch.Tensor,
                            direction: torch.Tensor) -> None:
    """The Function NumpyTanh's backward calls saves its tensors while the first backward runs:
    with saved-tensor hooks doubling what it saves there, both second derivatives must change.
    One that stays the true one came from tensors kept aside (a dict keyed by id(ctx))."""
    x, grad_output = x.detach().requires_grad_(), grad_output.detach().requires_grad_()
    output = function.apply(x)
    with doubled_saved_tensors():
        first, = torch.autograd.grad(output, x, grad_output, create_graph=True)
    grads = torch.autograd.grad(first, (x, grad_output), direction, allow_unused=True)
    y, g = torch.tanh(x.detach()), grad_output.detach()
    truths = (-2 * g * direction * y * (1 - y * y), direction * (1 - y * y))
    for name, grad, truth in zip(("x", "grad_output"), grads, truths):
        if stayed(grad, truth):
            raise GradingError(
                "the Function NumpyTanh's backward calls reads its tensors from somewhere other "
                "than ctx.saved_tensors: handed other values for what its forward saved (as "
                "saved-tensor hooks may hand them), its backward gave the second derivative "
                f"with respect to {name} of the values it was called with, so it used a copy "
                "kept aside (on the class, in a global, in a dict keyed by id(ctx)); keep its "
                "tensors only with ctx.save_for_backward and read them from ctx.saved_tensors",
                mistake="NumpyTanh/inner-bypasses-saved-tensors")
