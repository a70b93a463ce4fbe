"""State kept outside ctx, seen by where it lives rather than by the values it gives: one call's
forward and backward must leave the answer's module globals (the containers they hold, the
objects the answer's own classes made) and its Function classes as they were. A dict keyed by
id(ctx), a list forward appends to, a global rebound to a tensor: each is a place autograd's
version counter, saved-tensor hooks and one-ctx-per-call do not reach, though every value the
battery compares can still be right. So is what a helper the methods call keeps (its mutable
default, its functools cache, a variable it closes over: ``autograder.helper_state``), named by
the helper."""

import inspect
import types
import weakref
from collections import deque
from contextlib import contextmanager
from collections.abc import Mapping, MutableSequence, Set as AbstractSet

import torch

from .checks import make_inputs
from .dependencies import names_used
from .errors import GradingError
from .function_contract import rule_reference
from .helper_state import HelperPlace, clear_caches, helper_hint, helper_namespaces
from .helper_state import mutable_defaults as _mutable_defaults
from .probes import reachable
from .rerun_state import IPYTHON_NAMES as _IPYTHON, as_first_found

_METHODS = ("forward", "setup_context", "backward", "vjp", "jvp")
_LIMIT = 1000  # entries of one container looked into: past it, its size alone tells
# the notebook's own history, which a cell run changes, never a forward


def _namespaces(function) -> list[tuple[str, dict]]:
    """(where, namespace) for the answer's module globals, what its code closes over and its own
    classes' dicts: a Function class's methods, or a plain function and the Function classes it
    names (a wrapper around ``apply``); inspect.unwrap first, as the grader wraps methods. Then
    the state of the answer's own helpers those methods call (``helper_state``)."""
    found, seen, helpers = [], set(), set()

    def add(where, names):
        if id(names) not in seen:
            seen.add(id(names))
            found.append((where, names))

    def add_code(raw, owner: str):
        module = getattr(raw, "__globals__", None)
        if module is None or str(module.get("__name__", "")).startswith(("torch", "autograder")):
            return
        add("a module global", module)
        cells = {name: cell.cell_contents for name, cell in zip(
            raw.__code__.co_freevars, raw.__closure__ or ()) if _filled(cell)}
        if cells:
            add("a variable the method closes over", cells)
        defaults = _mutable_defaults(raw)
        if defaults:
            add(f"{_DEFAULT} of {owner}", defaults)
        for where, names in helper_namespaces(raw, owner):  # the helpers it calls, their state
            if (where.kind, where.source) not in helpers:  # named by the first method reaching it
                helpers.add((where.kind, where.source))
                add(where, names)

    tops = [function] if isinstance(function, type) else []
    if not tops and inspect.isfunction(inspect.unwrap(function)):
        raw = inspect.unwrap(function)
        add_code(raw, raw.__name__)
        tops = [value for value in map(raw.__globals__.get, raw.__code__.co_names)
                if isinstance(value, type) and issubclass(value, torch.autograd.Function)]
    classes = [cls for top in tops for cls in top.__mro__
               if cls is not object and not cls.__module__.startswith("torch")]
    for cls in classes:
        for method in _METHODS:
            raw = vars(cls).get(method)
            raw = inspect.unwrap(getattr(raw, "__func__", raw)) if callable(
                getattr(raw, "__func__", raw)) else None
            if raw is not None:
                add_code(raw, f"{cls.__name__}.{method}")
        add(f"the class ({cls.__name__}", vars(cls))
    return found


def _method_codes(cls: type) -> list[types.CodeType]:
    """The code of the Function methods ``cls`` and its own bases (not torch's) define."""
    codes = []
    for base in cls.__mro__:
        if base is object or base.__module__.startswith("torch"):
            continue
        for method in _METHODS:
            raw = vars(base).get(method)
            raw = inspect.unwrap(getattr(raw, "__func__", raw)) if raw is not None else None
            if getattr(raw, "__code__", None) is not None:
                codes.append(raw.__code__)
    return codes


def _named_globals(function, module: dict) -> set[str] | None:
    """The globals of ``module`` that the answer's code reads, directly or through a function
    or Function class of the same module it names; None (every global) where it calls
    ``globals()``. A global the answer never names (a dict an earlier answer left in the
    kernel) is not its state."""
    raw = inspect.unwrap(function)
    codes = _method_codes(raw) if isinstance(raw, type) else [raw.__code__]
    named, seen = set(), set()
    while codes:
        code = codes.pop()
        if code in seen:
            continue
        seen.add(code)
        for name in names_used(code) - named:
            named.add(name)
            value = module.get(name)
            if inspect.isfunction(value) and value.__globals__ is module:
                codes.append(value.__code__)
            elif isinstance(value, type) and issubclass(value, torch.autograd.Function):
                codes += _method_codes(value)
    return None if "globals" in named else named


def _ctx_watched(function, namespaces) -> list[tuple[str, dict]]:
    """``namespaces`` as the check for this call's ctx (or its id) reads them: module globals
    only those the answer names, since ids are reused and a stale global may hold a freed one."""
    watched = []
    for where, names in namespaces:
        if where == "a module global":
            named = _named_globals(function, names)
            if named is not None:
                names = {key: names[key] for key in named if key in names}
        watched.append((where, names))
    return watched


_DEFAULT = "a mutable default argument"
# values a counter or a flag takes: rebound, not grown, so compared by value
_SCALARS = (int, float, bool, str, type(None))
_NOT_SCALAR = object()


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


def _entries(value) -> list[tuple] | None:
    """(key, item) pairs of a container, keys by position for a sequence and None for a set;
    weak containers read through (their live entries); None for anything else."""
    if isinstance(value, (weakref.WeakKeyDictionary, weakref.WeakValueDictionary, Mapping)):
        return list(value.items())
    if isinstance(value, (list, tuple, MutableSequence, deque)):
        return list(enumerate(value))
    if isinstance(value, (set, frozenset, weakref.WeakSet, AbstractSet)):
        return [(None, item) for item in value]
    return None


def _held(value, module, depth=0, arrays=False):
    """(tensors by id with their versions, entries counted, (container, key, value) identities)
    that ``value`` holds, two levels deep: a key seen for the first time or a value replaced
    under an old key shows in the last, where a dict keyed by a reused id(ctx) does not grow."""
    if isinstance(value, torch.Tensor):
        return {id(value): value._version}, 0, set()
    if arrays and type(value).__name__ == "ndarray":
        return {id(value): 0}, 0, set()
    if depth > 2:
        return {}, 0, set()
    if _owned(value, module):
        value = vars(value)
    try:
        items = _entries(value)
    except Exception:  # noqa: BLE001 - a container that cannot be read is not looked into
        items = None
    if items is None:
        return {}, 0, set()
    tensors, count, marks = {}, len(items), set()
    for key, item in items[:_LIMIT]:
        marks.add((id(value), _key(key), id(item)))
        inner, inner_count, inner_marks = _held(item, module, depth + 1, arrays)
        tensors.update(inner)
        count += inner_count
        marks |= inner_marks
    return tensors, count, marks


def _key(key):
    """A key as a mark holds it: by value where it hashes (an int id(ctx) reused compares
    equal), by identity otherwise."""
    try:
        hash(key)
    except TypeError:
        return ("id", id(key))
    return key if isinstance(key, (int, str, float, bytes, type(None))) else ("id", id(key))


def _snapshot(namespaces) -> dict:
    shot = {}
    for where, names in namespaces:
        module = names.get("__name__") if where == "a module global" else None
        for key, value in list(names.items()):
            if not (key.startswith("__") and key.endswith("__")) and key not in _IPYTHON:
                shot[(where, key)] = (id(value), *_held(value, module,
                                                       arrays=where.startswith(_DEFAULT)),
                                      value if type(value) in _SCALARS else _NOT_SCALAR)
    return shot


def _refers_to(value, ctx, depth=0) -> bool:
    """Whether ``value`` holds this call's ctx, a weak reference to it or id(ctx), as a key or
    an entry, two levels deep: a dict keyed by id(ctx) whose key an earlier, freed ctx left
    (ids are reused) neither grows nor shows a new key."""
    if value is ctx or (type(value) is int and value == id(ctx)):
        return True
    if isinstance(value, weakref.ref) and value() is ctx:
        return True
    if depth > 2 or isinstance(value, torch.Tensor):
        return False
    try:
        items = _entries(value)
    except Exception:  # noqa: BLE001
        return False
    return any(_refers_to(key, ctx, depth + 1) or _refers_to(item, ctx, depth + 1)
               for key, item in (items or ())[:_LIMIT])


def _change(before: dict, after: dict, ctx=None,
            namespaces=()) -> tuple[tuple[str, str], str] | None:
    """The first place that holds a new tensor, a tensor written in place, more entries, a new
    entry or a replaced one, or this call's ctx (or its id)."""
    for place, (identity, tensors, count, marks, scalar) in after.items():
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
        if scalar is not _NOT_SCALAR and was[4] is not _NOT_SCALAR and scalar != was[4]:
            return place, f"went from {was[4]!r} to {scalar!r}"  # a counter, a flag
        if identity != was[0]:
            continue
        if count > was[2]:
            return place, f"grew from {was[2]} to {count} entries"
        if marks - was[3]:
            return place, "holds a new or replaced entry"
    for where, names in namespaces if ctx is not None else ():
        for key, value in list(names.items()):
            if (not key.startswith("__") and key not in _IPYTHON and not where.startswith(_DEFAULT)
                    and _refers_to(value, ctx)):
                return (where, key), "holds this call's ctx or id(ctx) as an entry"
    return None


def check_no_state_outside_ctx(function, name: str, values: dict) -> None:
    """One call, forward then backward, on ``values``: no new or grown tensor or container in
    the answer's module globals, in what its methods close over, or on its classes; and no
    tensor backward put on ctx, which outlives it with the graph (rule 4). Run after
    the battery's own checks (which name a shared-state mistake by its effect, where they see
    one); a call that raises is left to them."""
    namespaces = _namespaces(function)
    inputs = make_inputs(values)
    before = _snapshot(namespaces)
    try:
        outputs = function.apply(*inputs.values())
    except Exception:  # noqa: BLE001 - the battery reports it
        return
    outputs = [o for o in (outputs if isinstance(outputs, (tuple, list)) else (outputs,))
               if isinstance(o, torch.Tensor) and o.requires_grad]
    ctx = next((o.grad_fn for o in outputs if o.grad_fn is not None), None)
    if namespaces:
        _raise(name, "forward", _change(before, _snapshot(namespaces), ctx,
                                        _ctx_watched(function, namespaces)))
    given = list(inputs.values())
    on_ctx = _ctx_tensors(ctx, given)  # what forward (or setup_context) left on ctx
    leaves = [v for v in inputs.values() if isinstance(v, torch.Tensor) and v.requires_grad]
    if outputs and leaves:
        try:
            torch.autograd.grad(outputs, leaves, [torch.ones_like(o) for o in outputs],
                                allow_unused=True)
        except Exception:  # noqa: BLE001 - the battery reports it
            return
    del outputs
    if namespaces:
        _raise(name, "backward", _change(before, _snapshot(namespaces)))
    _raise_kept_by_backward(name, on_ctx, _ctx_tensors(ctx, given))


def _ctx_tensors(ctx, inputs: list) -> dict[str, int]:
    """id of each tensor ctx's attributes hold, however wrapped (``probes.reachable``), by
    path; none for a ctx that is not a Python Function's (a view's grad_fn has no attributes)."""
    try:
        attributes = dict(vars(ctx)) if ctx is not None else {}
    except TypeError:
        return {}
    return {path: id(tensor) for key, value in attributes.items()
            for path, tensor in reachable(value, f"ctx.{key}", inputs=inputs)}


def _raise_kept_by_backward(name: str, before: dict[str, int], after: dict[str, int]) -> None:
    """A tensor backward put on ctx (an attribute forward did not set, or one it rebound to
    another tensor): a cache of one backward for the next. It outlives backward as long as the
    graph does (ctx.saved_tensors is freed after it), and no version counter guards it: after
    an in-place change of an input between two backwards of a retained graph, autograd raises
    where the cache gives a stale gradient."""
    kept = [path for path, tensor in after.items() if before.get(path) != tensor
            and tensor not in before.values()]
    if kept:
        raise GradingError(
            f"{name}'s backward stores a tensor as {', '.join(kept)}: it lives as long as the "
            "graph, after backward too, out of autograd's sight (no version counter guards it: "
            "after an in-place change of an input, a second backward of a retained graph reads "
            "it stale where autograd raises); compute it in each backward from "
            f"ctx.saved_tensors, and keep only numbers, shapes and flags on ctx "
            f"{rule_reference('ctx')}", mistake=f"{name}/tensor-on-ctx")


def _raise(name: str, phase: str, change) -> None:
    if change is None:
        return
    (where, key), what = change
    if isinstance(where, HelperPlace):
        hint, kind = helper_hint(where, key, what, f"after one call's {phase}")
        raise GradingError(f"{hint} {rule_reference('ctx')}", mistake=f"{name}/{kind}")
    if where.startswith(_DEFAULT):
        method = where.rsplit(".", 1)[1]
        raise GradingError(
            f"{name}.{method} kept state in its mutable default argument {key} ({what} after "
            f"one call's {phase}): a default such as {{}} or [] is made once, when "
            "the def runs, and every call shares it, as a global, even a call counter: keep "
            "what backward needs on ctx (ctx.save_for_backward for tensors), one per call "
            f"{rule_reference('ctx')}",
            mistake=f"{name}/state-in-default-argument")
    place = (f"{where}.{key}, shared by every call)" if where.startswith("the class")
             else f"{key} in {where}")
    raise GradingError(
        f"{name}.{phase} kept state outside ctx: {place} ({what} after one call); autograd "
        "guards only what goes through ctx (ctx.save_for_backward for tensors, a ctx attribute "
        "for anything else), one ctx per call: keep what backward needs there, not in a global "
        f"{rule_reference('ctx')}", mistake=f"{name}/state-outside-ctx")


@contextmanager
def state_watched(submission, name: str):
    """The whole battery, watched as ``check_no_state_outside_ctx`` watches one call: a cache a
    global gains an entry for during grading, whose key an earlier call already put there when
    that one call ran, still shows as grown or replaced against the state before the battery.
    So does a change of grad mode or of the default dtype that one of the calls never undid
    (rule 6), which a check of one call sees only when it is that call: both are put back.
    A place an earlier battery in this process changed starts as it was before that battery
    (``rerun_state.as_first_found``): a rerun in the same kernel gets the first run's verdict."""
    namespaces = _namespaces(submission)
    clear_caches(namespaces)
    with as_first_found(submission, namespaces) as remember:
        before = _snapshot(namespaces) if namespaces else None
        grad_mode, default_dtype = torch.is_grad_enabled(), torch.get_default_dtype()
        try:
            yield
        finally:
            changed = [what for what, was, now in (
                ("grad mode", grad_mode, torch.is_grad_enabled()),
                ("default dtype", default_dtype, torch.get_default_dtype())) if was != now]
            torch.set_grad_enabled(grad_mode)
            torch.set_default_dtype(default_dtype)
            after = _snapshot(namespaces) if before is not None else None
            if after is not None:
                remember({place[1] for place in after if _change(
                    {place: before[place]} if place in before else {},
                    {place: after[place]}) is not None})
    if changed:
        raise GradingError(
            f"{name} left the caller's {' and '.join(changed)} changed after the calls grading "
            f"made (it was {grad_mode if 'grad mode' in changed else default_dtype} before): "
            "put back what forward or backward changes before it returns "
            f"{rule_reference('caller')}", mistake=f"{name}/changes-caller-state")
    if before is None:
        return
    change = _change(before, after)
    if change is not None:
        (where, key), what = change
        if isinstance(where, HelperPlace):
            hint, kind = helper_hint(where, key, what, "over the calls grading made")
            raise GradingError(f"{hint} {rule_reference('ctx')}", mistake=f"{name}/{kind}")
        place = (f"{where}.{key}, shared by every call)" if where.startswith("the class")
                 else f"{key} in {where}")
        raise GradingError(
            f"{name} kept state outside ctx: {place} ({what} over the calls grading made); "
            "every call shares it, so one call's entry is read by another of another shape, "
            "dtype or device: keep what backward needs on ctx, one per call "
            f"{rule_reference('ctx')}", mistake=f"{name}/state-outside-ctx")
