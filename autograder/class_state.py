"""The state a Function keeps on its classes, seen before and after a call: each attribute by
identity, and what it holds, copied (containers entry by entry, tensors by value), so a class
dict changed in place (a key added, an entry replaced) is seen as well as one replaced."""

from contextlib import contextmanager

import numpy as np
import torch

from .domain import Domain
from .errors import GradingError
from .function_contract import rule_reference
from .probes import reachable


def changed(now: torch.Tensor, was: torch.Tensor) -> bool:
    """Whether a tensor's shape or values (nan for nan) differ from its copy's."""
    return (now.shape != was.shape or not torch.equal(now.isnan(), was.isnan())
            or not torch.equal(now.nan_to_num(), was.nan_to_num()))


class ClassState(dict):
    """The attributes of a Function's classes, by identity, with ``frozen``: a copy of what
    each holds, containers copied and tensors cloned, to compare them by value."""

    frozen: dict


def class_state(function) -> ClassState:
    """Every attribute of the learner's classes in ``function``'s hierarchy, by identity, and
    what each holds (``ClassState.frozen``): a dict on the class changed in place (a key
    added, an entry replaced) is the same object, holding something else."""
    state = ClassState()
    if isinstance(function, type):
        state.update({(cls.__name__, key): value for cls in function.__mro__
                      if not cls.__module__.startswith("torch") and cls is not object
                      for key, value in vars(cls).items()})
    state.frozen = {key: _frozen(value) for key, value in state.items()}
    return state


# how deep into containers, and how many entries of each, the class state is copied: past
# them a container is compared by its type and size alone
_DEPTH, _ENTRIES = 4, 1000
_PLAIN = (int, float, complex, str, bytes, bool, type(None))


class _Frozen:
    """A copy of what a tensor or a container holds: ``kind`` and ``data``."""

    __slots__ = ("kind", "data")

    def __init__(self, kind: str, data):
        self.kind, self.data = kind, data


def _frozen(value, depth: int = 0):
    """What ``value`` holds, copied: a tensor's values, a container's entries (each frozen);
    anything else itself, compared by identity (a plain number or string by value)."""
    if isinstance(value, torch.Tensor):
        return _Frozen("tensor", value.detach().clone())
    if not isinstance(value, (dict, list, tuple, set, frozenset)):
        return value
    if depth >= _DEPTH or len(value) > _ENTRIES:
        return _Frozen("size", (type(value), len(value)))
    if isinstance(value, dict):
        return _Frozen("dict", [(k, _frozen(v, depth + 1)) for k, v in value.items()])
    if isinstance(value, (set, frozenset)):
        return _Frozen("set", (type(value), len(value), set(map(id, value))))
    return _Frozen(type(value).__name__, [_frozen(v, depth + 1) for v in value])


def _same(now, was) -> bool:
    """Whether two frozen values are the same."""
    if isinstance(now, _Frozen) or isinstance(was, _Frozen):
        if not (isinstance(now, _Frozen) and isinstance(was, _Frozen) and now.kind == was.kind):
            return False
        if now.kind == "tensor":
            return (now.data.dtype == was.data.dtype and now.data.device == was.data.device
                    and not changed(now.data, was.data))
        if now.kind == "dict":
            return len(now.data) == len(was.data) and all(
                _same(k, j) and _same(v, w) for (k, v), (j, w) in zip(now.data, was.data))
        if now.kind in ("size", "set"):
            return now.data == was.data
        return len(now.data) == len(was.data) and all(map(_same, now.data, was.data))
    if now is was:
        return True
    return type(now) is type(was) and isinstance(now, _PLAIN) and now == was


def changed_attributes(before: dict, after: dict) -> list:
    """The keys of ``after`` (a ``class_state``) that ``before`` lacks, holds another object
    under, or holds the same object under with other contents (by ``frozen``, where both
    have it)."""
    frozen_before, frozen_after = (getattr(state, "frozen", None) for state in (before, after))
    return [key for key in after
            if key not in before or after[key] is not before[key]
            or (frozen_before is not None and frozen_after is not None
                and not _same(frozen_after[key], frozen_before[key]))]


def _counts(was, now) -> bool:
    """An int that grew by one in one call: a count of calls, kept where every call adds to it
    (an int that a call set to its own value, an ignore_index, is no count)."""
    return (isinstance(was, int) and isinstance(now, int) and not isinstance(now, bool)
            and now == was + 1)


def check_class_state(domain: Domain, function, before: dict, phase: str) -> None:
    after = class_state(function)
    changed = changed_attributes(before, after)
    if changed:
        owner, attribute = changed[0]
        held = [item for _, item in reachable(after[changed[0]], "", (torch.Tensor, np.ndarray))]
        keep = ("where can each call keep a tensor its backward needs, its own and tracked by "
                "autograd" + (" (an array is no tensor yet)" if any(
                    isinstance(item, np.ndarray) for item in held) else "") + "?" if held
                else f"a count of calls belongs to the code that calls {domain.spec.name}.apply"
                if _counts(before.get(changed[0]), after[changed[0]])
                else "which object does each call get of its own, for what its backward needs?")
        sets = ("sets" if changed[0] not in before or after[changed[0]] is not before[changed[0]]
                else "changes what is in")
        if sets != "sets" and _grew(before, after, changed[0]):  # an entry per call: id(ctx)
            raise GradingError(
                f"{domain.spec.name}.{phase} changes what is in {owner}.{attribute}, adding an "
                "entry to a dict on the class: a call whose backward never runs (no backward, "
                "grad disabled, an error) leaves its entry there for good, and a class "
                "attribute is shared by every call; " + (keep if held else "where can each call "
                "keep what its backward needs, freed with the call's graph?") + " "
                + rule_reference("ctx"),
                mistake=f"{domain.spec.name}/state-on-class")
        raise GradingError(
            f"{domain.spec.name}.{phase} {sets} {owner}.{attribute}: a class attribute is shared "
            "by every call, so what one call keeps there every other call sees and can change; "
            f"{keep} {rule_reference('ctx')}",
            mistake=f"{domain.spec.name}/state-on-class")


def _grew(before: ClassState, after: ClassState, key) -> bool:
    """Whether a dict on the class holds more entries than it did (forward keeping one per
    call, keyed by id(ctx) say)."""
    was, now = (getattr(state, "frozen", {}).get(key) for state in (before, after))
    return (isinstance(after.get(key), dict) and isinstance(was, _Frozen)
            and isinstance(now, _Frozen) and was.kind == now.kind == "dict"
            and len(now.data) > len(was.data))


# the ids of a failure blamed on state shared between calls, where the check cannot see whether
# that state is a global or a class attribute; ``state_placed`` looks at the class
_SHARED_STATE = ("state-shared-between-calls", "-in-global")


@contextmanager
def state_placed(function):
    """Name where shared state lives: a failure blamed on "a global" is reworded when the run
    set or changed an attribute of the learner's class (``MyLinearFunction.saved = ...``),
    which the contract tells apart from a global ("nothing on the class, nothing in a
    global")."""
    before = class_state(function)
    try:
        yield
    except GradingError as error:
        if not str(error.mistake).endswith(_SHARED_STATE) or "in a global" not in error.hint:
            raise
        changed = changed_attributes(before, class_state(function))
        if not changed:
            raise
        owner, attribute = changed[0]
        place = f"on the class ({owner}.{attribute})"
        hint = (error.hint.replace("on the class or in a global", "in a global")
                .replace("not in a global", "not on the class")
                .replace("in a global", place, 1))
        raise GradingError(hint, error.details, mistake=error.mistake) from error
