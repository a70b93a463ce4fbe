"""Lesson 13: rule 4 on a number kept in a module global by a kernel wrapper (a call counter, a
flag set on the first call). The generic state watch (autograder.outside_ctx) looks into what a
Function's methods name; an operator's body and its registrations are reached through a custom
operator it cannot see into, so this check watches the answer's module itself: one forward and
backward must leave every number, string and flag bound there as it was."""

import inspect

from ...errors import GradingError
from ...function_contract import rule_reference
from ...rerun_state import IPYTHON_NAMES

_SCALARS = (int, float, bool, str, complex, type(None))
_CONTAINERS = (dict, list, set)


def _module(submission) -> dict | None:
    """The globals the answer's code runs in: a plain function's, or a custom operator's body's."""
    submission = inspect.unwrap(submission)
    for raw in (submission, getattr(submission, "_init_fn", None)):
        found = getattr(raw, "__globals__", None)
        if isinstance(found, dict):
            return found
    return None


def _scalars(module: dict) -> dict:
    return {key: value for key, value in list(module.items())
            if type(value) in _SCALARS and key not in IPYTHON_NAMES
            and not (key.startswith("__") and key.endswith("__"))}


def _holds_tensor(container) -> bool:
    """Whether a tensor is among the container's entries (one level into tuples and lists):
    a buffer kept between calls, which check_no_tensor_kept names with where it lives."""
    import torch

    values = container.values() if isinstance(container, dict) else container
    return any(isinstance(v, torch.Tensor) or (isinstance(v, (tuple, list)) and any(
        isinstance(w, torch.Tensor) for w in v)) for v in list(values))


def _sizes(module: dict) -> dict:
    """The module's plain dicts, lists and sets holding no tensor (a cache of sizes or grids,
    a log), by name: their sizes."""
    return {key: len(value) for key, value in list(module.items())
            if type(value) in _CONTAINERS and key not in IPYTHON_NAMES
            and not key.startswith("_") and not _holds_tensor(value)}


def check_no_global_rebound(name: str, submission, call) -> None:
    """``call()`` runs one forward and backward of ``submission``: no number, string or flag of
    its module globals bound anew or rebound by it, and no dict, list or set there grown (a
    cache filled in place, never rebound)."""
    module = _module(submission)
    if module is None or str(module.get("__name__", "")).startswith(("torch", "autograder")):
        return
    before, sizes = _scalars(module), _sizes(module)
    try:
        call()
    except Exception:  # noqa: BLE001 -- a probe: the battery's own checks name a failing call
        return
    grown = next(((key, size) for key, size in _sizes(module).items()
                  if key in sizes and size > sizes[key]), None)
    if grown is not None:
        key, size = grown
        raise GradingError(
            f"{name} kept state outside ctx: the module global {key} (a "
            f"{type(module[key]).__name__}) grew from {sizes[key]} to {size} entries during "
            "one call's forward and backward. A cache in a global is shared by every call (and "
            "by two at once) and grows with every new size; compute what a call needs in that "
            f"call, and keep what backward needs on ctx {rule_reference('ctx')}",
            mistake=f"{name}/cache-in-global")
    after = _scalars(module)
    changed = next((key for key in after if key not in before or after[key] != before[key]
                    or type(after[key]) is not type(before[key])), None)
    if changed is None:
        return
    was = f"{before[changed]!r}" if changed in before else "unbound"
    raise GradingError(
        f"{name} kept state outside ctx: the module global {changed} went from {was} to "
        f"{after[changed]!r} during one call's forward and backward. A call counter or a flag "
        "in a global is shared by every call (and by two at once); keep what backward needs on "
        f"ctx, one per call, and nothing else {rule_reference('ctx')}",
        mistake=f"{name}/state-outside-ctx")
