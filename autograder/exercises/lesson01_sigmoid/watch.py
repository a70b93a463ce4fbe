"""Lesson 01: every call a battery makes, watched. ``Watch.wrap`` gives a subclass of the
learner's Function whose ``apply`` looks at each call: whether it returned x itself, what it
saved and which ops it ran (handed to the exercise's ``judge``). A finding is kept, the first
one, until ``settle`` raises it at the end of the battery: the battery's own checks, with their
finer words, run first, and a forward that saves x only on a large, float16 or non-leaf x, or
only when x needs no gradient, still fails (the domain's checks, after the battery, raise at
once). A call that raises is left to the battery. Writes into x or grad_output, and state set on
a tensor, are the Function contract's rules, watched on every call by ``autograder.untouched``."""

from contextlib import nullcontext
from dataclasses import dataclass

import torch

from ...checks import Spec, case, check_is_function
from ...composite_ops import OpLog
from ...errors import GradingError
from ...probes import SavedTensor, _role


@dataclass
class Call:
    """One call of the learner's forward, as the watch saw it."""

    inputs: dict  # name -> what the call was given
    output: object
    saved: list[SavedTensor] | None  # None where no graph was recorded (grad off, no grad asked)
    ops: list[str]  # the ops forward ran, where the watch logs them


def described(x: torch.Tensor, grad_enabled: bool) -> str:
    """The call's x in words: 'x of 1601 entries, float64, not a leaf'."""
    said = [f"x of {x.numel()} entr{'y' if x.numel() == 1 else 'ies'}",
            str(x.dtype).removeprefix("torch.")]
    if not x.is_leaf:
        said.append("not a leaf (an earlier op's output)")
    elif not x.requires_grad:
        said.append("x needing no gradient (requires_grad=False)")
    if not grad_enabled:
        said.append("grad disabled")
    return ", ".join(said)


class Watch:
    """Watches one exercise's calls; ``judge(call)`` raises GradingError for a broken clause."""

    def __init__(self, spec: Spec, judge=None, *, ops: bool = False):
        self.spec, self.judge, self.ops = spec, judge, ops
        self.finding: GradingError | None = None
        self.deferred = True

    def wrap(self, function: type, *, deferred: bool = True) -> type:
        """``function`` with every call watched; ``deferred``: keep findings for ``settle``."""
        watch, watched = self, None

        def apply(cls, *args, **kwargs):
            return watch._call(function, super(watched, cls).apply, args, kwargs)

        watched = type(function.__name__, (function,), {"apply": classmethod(apply),
                                                        "__module__": function.__module__})
        self.deferred, self.finding = deferred, None
        return watched

    def prepare(self, submission) -> type:
        """The domain's ``prepare``: the submission watched, each finding raised at once."""
        return self.wrap(check_is_function(submission, self.spec), deferred=False)

    def settle(self) -> None:
        """Raise the first finding kept, if any."""
        finding, self.finding = self.finding, None
        if finding is not None:
            raise finding

    def _found(self, error: GradingError, where: str, *, now: bool = False) -> None:
        """Raise ``error`` now (the check around the call says which inputs), or keep it, the
        first one, for ``settle``, saying which call it came from."""
        if now or not self.deferred:
            raise error
        if self.finding is None:
            try:
                with case(where):
                    raise error
            except GradingError as said:
                self.finding = said

    def _call(self, function: type, apply, args: tuple, kwargs: dict):
        names = self.spec.input_names
        tensors = {n: v for n, v in zip(names, args) if isinstance(v, torch.Tensor)}
        x = next(iter(tensors.values()), None)
        grad_enabled = torch.is_grad_enabled()
        log = OpLog() if self.ops else nullcontext()
        with log:
            output = apply(*args, **kwargs)
        where = described(x, grad_enabled) if x is not None else "this call"
        for name, value in tensors.items():
            if (isinstance(output, torch.Tensor) and output.numel() and value.numel()
                    and output.untyped_storage().data_ptr()
                    == value.untyped_storage().data_ptr()):
                self._found(GradingError(
                    f"{self.spec.name} returned {name} itself: its output shares {name}'s "
                    f"memory, so a caller who writes into the output writes into {name}; what "
                    f"must forward return, whatever {name} holds?",
                    mistake=f"{self.spec.name}/returns-input"), where)
        if self.judge is not None:
            try:
                self.judge(Call(dict(zip(names, args)), output, _saved(function, output, args,
                                                                       names),
                                log.ops if self.ops else []))
            except GradingError as error:
                self._found(error, where)
        return output


def _saved(function: type, output, args: tuple, names) -> list[SavedTensor] | None:
    """What the call saved with ctx.save_for_backward, each with its role; None where the call
    recorded no graph, or its saved tensors cannot be read (the battery says why)."""
    node = output.grad_fn if isinstance(output, torch.Tensor) else None
    if node is None or not issubclass(getattr(node, "_forward_cls", type), function):
        return None
    try:
        tensors = [t for t in node.saved_tensors if isinstance(t, torch.Tensor)]
    except RuntimeError:
        return None
    inputs = dict(zip(names, args))
    return [SavedTensor(_role(t, inputs, [output]), tuple(t.shape), t.dtype,
                        t.numel() * t.element_size(), t) for t in tensors]
