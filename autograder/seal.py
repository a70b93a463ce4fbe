"""A grading kernel whose verdicts the learner's code cannot fake.

nbgrader runs hidden tests in the learner's own kernel and trusts any cell without an error.
Here the grader starts the kernel with ``boot()``, which runs before any learner code:
it reads a one-time key (from a file it deletes at once), snapshots the functions grading
relies on, and replaces ``autograder.grade`` with a sealed version that restores that
snapshot, runs the checks, notices tampering during them, and publishes an HMAC-signed
verdict (``autograder.verdict``). The grader (``grader.execute``) believes signed verdicts only.
"""

import builtins
import copy
import math
import os
import sys
import types

from .mistakes import TAMPERED
from .verdict import KEY_FILE_VARIABLE, VERDICT_MIME, sign, verdict_payload

# Modules whose callables grading trusts; each is checked and restored before every verdict.
TRUSTED_MODULES = (
    "torch", "torch.autograd", "torch.autograd.function", "torch.autograd.gradcheck",
    "torch.autograd.graph", "torch.nn.functional", "torch.functional", "torch.random",
    "torch.testing", "torch.utils.flop_counter", "torch.utils._python_dispatch", "torch.linalg",
)


def _trusted_namespaces():
    import torch  # noqa: F401  (loads every trusted module)
    from autograder.devices import interpret_triton_without_gpu

    interpret_triton_without_gpu()  # before torch._dynamo imports triton
    # torch._dynamo's first import (often from inside grading) rebinds torch.manual_seed:
    # import it before the snapshot, or a correct first submission reads as tampering.
    import torch._dynamo  # noqa: F401
    import autograder.exercises  # noqa: F401

    names = [*TRUSTED_MODULES, *(m for m in sys.modules if m.split(".")[0] == "autograder")]
    namespaces = [sys.modules[name] for name in names if name in sys.modules]
    namespaces += [builtins, math, torch.Tensor, torch.autograd.Function,
                   torch.autograd.function.FunctionCtx]
    namespaces += [value for module in list(namespaces) if isinstance(module, types.ModuleType)
                   and module.__name__.startswith("autograder")
                   for value in vars(module).values()
                   if isinstance(value, type) and value.__module__.startswith("autograder")]
    return namespaces


# Names torch itself rebinds: torch.set_default_dtype points torch.Storage at the new dtype's
# storage class (a learner's default dtype is legitimate, and grading switches it).
REBOUND_BY_TORCH = {"torch.Storage"}


def _label(namespace, name: str) -> str:
    return f"{getattr(namespace, '__name__', namespace)}.{name}"


class Snapshot:
    """The callables of the trusted namespaces, and the code of every Python function among them."""

    def __init__(self, namespaces):
        self.bindings = [(ns, name, value) for ns in namespaces
                         for name, value in list(vars(ns).items()) if callable(value)
                         and _label(ns, name) not in REBOUND_BY_TORCH]
        self.added_allowed = {id(ns): set(vars(ns)) for ns in namespaces if isinstance(ns, type)}
        self.namespaces = list(namespaces)
        self.codes = [(f, f.__code__, f.__defaults__, f.__kwdefaults__)
                      for _, _, f in self.bindings if isinstance(f, types.FunctionType)]

    def restore(self) -> list[str]:
        """Put every changed binding and function body back; return what had changed."""
        changed = []
        for namespace, name, value in self.bindings:
            if vars(namespace).get(name) is not value:
                changed.append(_label(namespace, name))
                setattr(namespace, name, value)
        for namespace in self.namespaces:
            allowed = self.added_allowed.get(id(namespace))
            if allowed is not None:
                for name in set(vars(namespace)) - allowed:
                    changed.append(_label(namespace, name))
                    delattr(namespace, name)
        for function, code, defaults, kwdefaults in self.codes:
            if (function.__code__ is not code or function.__defaults__ is not defaults
                    or function.__kwdefaults__ is not kwdefaults):
                changed.append(f"{function.__module__}.{function.__qualname__}")
                function.__code__, function.__defaults__ = code, defaults
                function.__kwdefaults__ = kwdefaults
        return changed


def _private(function):
    """A copy of ``function`` with its own copies of its globals and builtins, so that
    rebinding names in its module or in builtins later cannot change what it calls."""
    scope = dict(function.__globals__)
    scope["__builtins__"] = dict(vars(builtins))
    return types.FunctionType(function.__code__, scope, function.__name__,
                              function.__defaults__, function.__closure__)


def make_publisher(key: bytes, publish):
    """``publish_verdict(name, passed, message, score, mistake)``: sign a verdict and display
    it."""
    payload_of, signature = _private(verdict_payload), _private(sign)

    def publish_verdict(name: str, passed: bool, message: str, score, mistake: str = "") -> None:
        payload = payload_of(name, passed, message, score, mistake)
        publish({VERDICT_MIME: {"payload": payload, "signature": signature(key, payload)}})

    return publish_verdict


def make_sealed_grade(key: bytes, restore, verdict, report, publish, published=None):
    """The hidden-test entry point of a sealed kernel (see the module docstring). ``verdict``
    returns (passed, message), optionally followed by the score (partial credit) and the
    mistake (``autograder.mistakes``). Each verdict is also appended to ``published`` (for the
    test cell that called it) as (name, passed, message, score, mistake)."""
    publish_verdict = make_publisher(key, publish)

    def grade(name: str, submission) -> None:
        restore()
        passed, message, score, mistake = (*verdict(name, submission), None, "")[:4]
        tampered = restore()
        if tampered:
            passed, message, score, mistake = False, (
                f"{name}'s code replaced {tampered[0]} while it was being graded: "
                "a submission must not modify torch or the grading library"), None, TAMPERED
        mistake = "" if passed else mistake or ""
        publish_verdict(name, passed, message, score, mistake)
        if published is not None:
            published.append((name, passed, message, score, mistake))
        report(passed, message)

    return grade


def skipped_self_check(name: str, submission) -> None:
    """In a sealed grading kernel the hidden tests decide: the visible self-check, the same
    battery, is skipped, so neither a failing nor a sabotaged self-check can stop the verdict
    (and the battery runs once)."""


def boot() -> None:
    """Seal this kernel; run by the grader before any learner code. Without a key, do nothing."""
    key_file = os.environ.pop(KEY_FILE_VARIABLE, None)
    if not key_file:
        return
    with open(key_file, "rb") as handle:
        key = handle.read()
    os.unlink(key_file)

    from IPython import get_ipython
    from IPython.display import publish_display_data

    import autograder
    from autograder import grading, partial, test_cells
    from autograder.exercises import EXERCISES

    verdict = _private(grading.classified_verdict)
    verdict.__globals__["EXERCISES"] = {name: copy.copy(e) for name, e in EXERCISES.items()}
    verdict = partial.scored_verdict(verdict, verdict.__globals__["EXERCISES"])
    restorers, published = [], []
    sealed = make_sealed_grade(key, lambda: restorers[0](), verdict, _private(grading.report),
                               publish_display_data, published)
    grading.grade = autograder.grade = sealed
    shell = get_ipython()
    autograder.run_test_cell = test_cells.make_sealed_test_cell(
        lambda: restorers[0](), published, make_publisher(key, publish_display_data),
        lambda: shell.user_ns if shell is not None else vars(sys.modules["__main__"]))
    grading.self_check = autograder.self_check = skipped_self_check
    snapshot = Snapshot(_trusted_namespaces())
    restorers.append(_private(Snapshot.restore).__get__(snapshot))
    # Before every cell too, so that a test cell's `from autograder import grade` finds the
    # sealed grade even after learner code rebound it.
    _restore_before_every_cell(lambda: restorers[0]())


def _restore_before_every_cell(restore) -> None:
    """Register ``restore`` to run before each cell, when there is an IPython shell to run it."""
    from IPython import get_ipython

    shell = get_ipython()
    if shell is not None:
        shell.events.register("pre_run_cell", lambda info: restore())
