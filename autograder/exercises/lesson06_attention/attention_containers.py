"""Lesson 06: tensors kept in a container on the Function's class (or in a global its forward
reads) for backward to take back, e.g. ``_kept[id(ctx)] = P``: nothing is saved through
``ctx.save_for_backward``, so the saved-tensor checks see nothing, and each call's backward
finds its own entry, so every value is right. The same idea as lesson 05's
``state-in-shared-container`` (checkpoint_reuse), named from what one forward adds there.
Any other place outside ctx (an attribute of a global object, a closure) is found by live-tensor
accounting: once forward's output and its graph are gone, nothing forward made may be alive."""

import inspect
from collections import deque

from ...checks import Spec, make_inputs, run_forward
from ...errors import GradingError
from ...memory import TensorAccounting, survivors
from ...probes import reachable

_CONTAINERS = (list, dict, set, deque)
_IPYTHON = ("In", "Out", "_ih", "_oh", "_dh")  # the notebook's history, which forward never fills


def _tensors(value) -> set:
    """The ids of the tensors a container holds now, through lists, tuples and dicts."""
    items = list(value.items()) if isinstance(value, dict) else list(value)
    return {id(t) for _, t in reachable(items, "")}


def _places(function) -> dict:
    """Each container on the learner's classes and in the globals its forward reads, by name."""
    places = {}
    for cls in getattr(function, "__mro__", ()):
        if cls is not object and not cls.__module__.startswith("torch"):
            places.update({f"{cls.__name__}.{key}": value for key, value in vars(cls).items()
                           if isinstance(value, _CONTAINERS)})
    forward = getattr(inspect.unwrap(getattr(function, "forward", None)), "__globals__", {})
    places.update({key: value for key, value in list(forward.items())
                   if isinstance(value, _CONTAINERS) and not key.startswith("__")
                   and key not in _IPYTHON})
    return places


def check_no_class_containers(function, spec: Spec, values: dict) -> None:
    """One forward with every input requiring grad: no tensor added to a container on the class
    or in a global (its backward is not run: an entry popped there would hide it)."""
    before = {name: (value, _tensors(value)) for name, value in _places(function).items()}
    run_forward(function, spec, make_inputs(values))
    for name, (value, held) in before.items():
        added = _tensors(value) - held
        if added:
            where = (f"{name} (a {type(value).__name__} on the class)" if "." in name
                     else f"the global {name} (a {type(value).__name__})")
            raise GradingError(
                f"{spec.name}.forward keeps tensors in {where} for backward to take back, not "
                "through ctx.save_for_backward: a container outside ctx is shared by every "
                "call and keeps each entry until something removes it (a backward that never "
                "runs leaks it), and autograd's saved-tensor checks and hooks never see it; "
                "save what backward reads with ctx.save_for_backward",
                mistake=f"{spec.name}/state-in-shared-container")
    check_nothing_outlives_the_graph(function, spec, values)


def check_nothing_outlives_the_graph(function, spec: Spec, values: dict) -> None:
    """One forward, its output dropped: every tensor forward made must go with its graph (what
    ctx holds goes too); one still alive is kept somewhere outside ctx."""
    inputs = make_inputs(values)
    with TensorAccounting() as books:
        output = function.apply(*inputs.values())  # it ran once above: no error to explain
        del output
        left = survivors(books.live_bytes)
    if left:
        raise GradingError(
            f"{spec.name}.forward keeps {left} bytes of tensors alive after its output and "
            "graph are gone: state kept outside ctx (a global object's attribute, a closure, a "
            "function attribute) is shared by every call and outlives it, and autograd's "
            "saved-tensor checks and hooks never see it; save what backward reads with "
            "ctx.save_for_backward", mistake=f"{spec.name}/state-in-shared-container")
