"""State kept outside ctx, seen by where it lives rather than by the values it gives: one call's
forward and backward must leave the answer's module globals (the containers they hold, the
objects the answer's own classes made) and its Function classes as they were. A dict keyed by
id(ctx), a list forward appends to, a global rebound to a tensor: each is a place autograd's
version counter, saved-tensor hooks and one-ctx-per-call do not reach, though every value the
battery compares can still be right."""

import inspect

import torch

from .checks import make_inputs
from .errors import GradingError

_METHODS = ("forward", "setup_context", "backward", "vjp", "jvp")
_LIMIT = 1000  # entries of one container looked into: past it, its size alone tells


def _namespaces(function) -> list[tuple[str, dict]]:
    """(where, namespace) for the answer's module globals, the cells its methods close over and
    its own classes' dicts; inspect.unwrap first, as the grader wraps forward and backward."""
    found, seen = [], set()

    def add(where, names):
        if id(names) not in seen:
            seen.add(id(names))
            found.append((where, names))

    classes = [cls for cls in getattr(function, "__mro__", ())
               if cls is not object and not cls.__module__.startswith("torch")]
    for cls in classes:
        for method in _METHODS:
            raw = vars(cls).get(method)
            raw = inspect.unwrap(getattr(raw, "__func__", raw)) if callable(
                getattr(raw, "__func__", raw)) else None
            module = getattr(raw, "__globals__", None)
            if module is None or str(module.get("__name__", "")).startswith(("torch", "autograder")):
                continue
            add("a module global", module)
            cells = {name: cell.cell_contents for name, cell in zip(
                raw.__code__.co_freevars, raw.__closure__ or ()) if _filled(cell)}
            if cells:
                add("a variable the method closes over", cells)
        add(f"the class ({cls.__name__}", vars(cls))
    return found


def _filled(cell) -> bool:
    try:
        cell.cell_contents
    except ValueError:
        return False
    return True


def _owned(value, module: str | None) -> bool:
    """An object whose attributes count as the answer's state: a SimpleNamespace, or an instance
    of a class the answer's own module defines (not a Function class: its dict is scanned)."""
    kind = type(value)
    return (kind.__name__ == "SimpleNamespace" or (module is not None and kind.__module__ == module
            and not isinstance(value, type))) and hasattr(value, "__dict__")


def _held(value, module, depth=0):
    """(tensors by id with their versions, entries counted) that ``value`` holds, two levels deep."""
    if isinstance(value, torch.Tensor):
        return {id(value): value._version}, 0
    if depth > 2:
        return {}, 0
    if _owned(value, module):
        value = vars(value)
    if isinstance(value, dict):
        items = list(value.values())
    elif isinstance(value, (list, tuple, set, frozenset)) or type(value).__name__ == "deque":
        items = list(value)
    else:
        return {}, 0
    tensors, count = {}, len(items)
    for item in items[:_LIMIT]:
        inner, inner_count = _held(item, module, depth + 1)
        tensors.update(inner)
        count += inner_count
    return tensors, count


def _snapshot(namespaces) -> dict:
    shot = {}
    for where, names in namespaces:
        module = names.get("__name__") if where == "a module global" else None
        for key, value in list(names.items()):
            if not (key.startswith("__") and key.endswith("__")):
                shot[(where, key)] = (id(value), *_held(value, module))
    return shot


def _change(before: dict, after: dict) -> tuple[tuple[str, str], str] | None:
    """The first place that holds a new tensor, a tensor written in place, or more entries."""
    for place, (identity, tensors, count) in after.items():
        was = before.get(place)
        if was is None:
            if tensors or count:
                return place, "was bound to a new tensor or container"
            continue
        new = [t for t in tensors if t not in was[1]]
        if new:
            return place, f"holds {len(new)} new tensor(s)"
        if any(version != was[1][t] for t, version in tensors.items()):
            return place, "holds a tensor written in place"
        if count > was[2] and identity == was[0]:
            return place, f"grew from {was[2]} to {count} entries"
    return None


def check_no_state_outside_ctx(function, name: str, values: dict) -> None:
    """One call, forward then backward, on ``values``: no new or grown tensor or container in
    the answer's module globals, in what its methods close over, or on its classes. Run after
    the battery's own checks (which name a shared-state mistake by its effect, where they see
    one); a call that raises is left to them."""
    namespaces = _namespaces(function)
    if not namespaces:
        return
    inputs = make_inputs(values)
    before = _snapshot(namespaces)
    try:
        outputs = function.apply(*inputs.values())
    except Exception:  # noqa: BLE001 - the battery reports it
        return
    _raise(name, "forward", _change(before, _snapshot(namespaces)))
    outputs = [o for o in (outputs if isinstance(outputs, (tuple, list)) else (outputs,))
               if isinstance(o, torch.Tensor) and o.requires_grad]
    leaves = [v for v in inputs.values() if isinstance(v, torch.Tensor) and v.requires_grad]
    if outputs and leaves:
        try:
            torch.autograd.grad(outputs, leaves, [torch.ones_like(o) for o in outputs],
                                allow_unused=True)
        except Exception:  # noqa: BLE001 - the battery reports it
            return
    del outputs
    _raise(name, "backward", _change(before, _snapshot(namespaces)))


def _raise(name: str, phase: str, change) -> None:
    if change is None:
        return
    (where, key), what = change
    place = (f"{where}.{key}, shared by every call)" if where.startswith("the class")
             else f"{key} in {where}")
    raise GradingError(
        f"{name}.{phase} kept state outside ctx: {place} ({what} after one call); autograd "
        "guards only what goes through ctx (ctx.save_for_backward for tensors, a ctx attribute "
        "for anything else), one ctx per call: keep what backward needs there, not in a global",
        mistake=f"{name}/state-outside-ctx")
