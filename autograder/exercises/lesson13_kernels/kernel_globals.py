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


def check_no_global_rebound(name: str, submission, call) -> None:
    """``call()`` runs one forward and backward of ``submission``: no number, string or flag of
    its module globals bound anew or rebound by it."""
    module = _module(submission)
    if module is None or str(module.get("__name__", "")).startswith(("torch", "autograder")):
        return
    before = _scalars(module)
    try:
        call()
    except Exception:  # noqa: BLE001 -- a probe: the battery's own checks name a failing call
        return
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
