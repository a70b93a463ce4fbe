"""Lesson 01: every call a battery makes, watched. ``Watch.wrap`` gives a subclass of the
learner's Function whose ``apply`` looks at each call: whether forward set an attribute on its
input x (named at once: a backward reading it back breaks under the grader's hooks with an
AttributeError that names nothing), whether it wrote into x or returned x itself, what it saved
and which ops it ran (handed to the exercise's ``judge``); and whose backward looks at each
grad_output it is given: whether backward wrote into it. A finding is kept, the first one, until ``settle``
raises it at the end of the battery: the battery's own checks, with their finer words, run
first, and a forward that saves x or writes into it only on a large, float16 or non-leaf x, or
only when x needs no gradient, or a backward that writes into a large grad_output, still fails (the domain's checks, after the battery, raise at
once). A call that raises is left to the battery."""

from contextlib import nullcontext
from dataclasses import dataclass

import torch
from torch.utils._python_dispatch import _disable_current_modes

from ...checks import Spec, case, check_is_function
from ...class_state import changed
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

        # the learner's backward (or vjp, where that is the one written), each call watched
        name = "vjp" if function.vjp is not torch.autograd.Function.vjp else "backward"
        original = getattr(function, name)

        def backward(ctx, *grad_outputs):
            return watch._backward(original, ctx, grad_outputs)

        watched = type(function.__name__, (function,), {"apply": classmethod(apply),
                                                        name: staticmethod(backward),
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

    def _backward(self, original, ctx, grad_outputs: tuple):
        """Run the learner's backward; a grad_output it wrote into (values or version) is a
        finding, on every call: a backward that writes only into a large one included."""
        with _disable_current_modes():  # the snapshot is no op of the learner's backward
            before = [(g, g.detach().clone(), g._version) for g in grad_outputs
                      if isinstance(g, torch.Tensor)]
        grads = original(ctx, *grad_outputs)
        with _disable_current_modes():
            for g, was, version in before:
                if g._version != version or changed(g.detach(), was):
                    self._found(GradingError(
                        f"{self.spec.name}'s backward modified grad_output in place: compute a "
                        "new tensor instead (an out-of-place op, or write into a fresh tensor); "
                        "grad_output belongs to autograd, and the rest of the graph may read it",
                        mistake=f"{self.spec.name}/writes-grad-output"),
                        f"grad_output of {g.numel()} entr{'y' if g.numel() == 1 else 'ies'}, "
                        f"{str(g.dtype).removeprefix('torch.')}")
                    break
        return grads

    def _call(self, function: type, apply, args: tuple, kwargs: dict):
        names = self.spec.input_names
        tensors = {n: v for n, v in zip(names, args) if isinstance(v, torch.Tensor)}
        before = {n: (v.detach().clone(), v._version, set(vars(v))) for n, v in tensors.items()}
        x = next(iter(tensors.values()), None)
        grad_enabled = torch.is_grad_enabled()
        log = OpLog() if self.ops else nullcontext()
        with log:
            output = apply(*args, **kwargs)
        where = described(x, grad_enabled) if x is not None else "this call"
        for name, value in tensors.items():
            was, version, attributes = before[name]
            if (added := sorted(set(vars(value)) - attributes)):
                self._found(GradingError(
                    f"{self.spec.name}.forward set {name}.{added[0]} on its input {name}: an "
                    f"attribute of a tensor is state shared between calls, every call on that "
                    f"{name} reads the last one set (two calls on one {name} with different "
                    "values: the first call's backward gets the second's); keep it on ctx "
                    f"(ctx.{added[0]} = ...), one per call",
                    mistake=f"{self.spec.name}/state-shared-between-calls"), where, now=True)
            if value._version != version or changed(value.detach(), was):
                self._found(GradingError(
                    f"{self.spec.name}.forward modified its input {name} in place: inputs must "
                    f"stay untouched, whether {name} needs a gradient or not, leaf or not",
                    mistake=f"{self.spec.name}/writes-input"), where)
            elif (isinstance(output, torch.Tensor) and output.numel() and value.numel()
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
