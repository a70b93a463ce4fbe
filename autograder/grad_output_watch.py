"""grad_output belongs to the caller: every backward a battery runs leaves it as it came.

The battery's own checks look at grad_output on the calls they choose; a backward that writes
into it only on some calls (a large tensor, float32, an input that needs no gradient, the second
call) slipped past them. While an exercise runs, ``grad_output_watched`` puts a wrapper in front
of the learner's backward that compares each grad_output's version counter (bumped by every
in-place op on it or a view of it, and costing no op or allocation a probe could count) before
and after the call. The first write seen is held to the end of the battery, so that the
battery's finer words come first, and raised then, or instead of a later failure the battery
does not name (a value that differs, an error: the write's consequence)."""

import functools
from contextlib import contextmanager
from contextvars import ContextVar

import torch

from .errors import GradingError
from .mistakes import mistake_of

# the writes seen while an exercise runs, or None outside one
_held: ContextVar[list | None] = ContextVar("grad_output_writes", default=None)


def _version(tensor: torch.Tensor) -> int | None:
    """The version counter, where the tensor has one (not a functorch wrapper's)."""
    try:
        return tensor._version
    except (RuntimeError, NotImplementedError):
        return None


def _described(grad_output: torch.Tensor) -> str:
    said = [f"of shape {tuple(grad_output.shape)}", str(grad_output.dtype).removeprefix("torch.")]
    if not grad_output.is_contiguous():
        said.append("not contiguous")
    return ", ".join(said)


def _watched(name: str, backward):
    @functools.wraps(backward)
    def watched(ctx, *grad_outputs):
        held = _held.get()
        if held is None or torch.compiler.is_compiling():
            return backward(ctx, *grad_outputs)
        before = [(position, g, _version(g)) for position, g in enumerate(grad_outputs)
                  if isinstance(g, torch.Tensor)]
        result = backward(ctx, *grad_outputs)
        for position, g, version in before:
            if version is not None and _version(g) != version and not held:
                which = "grad_output" if len(grad_outputs) == 1 else f"grad_output {position}"
                held.append(GradingError(
                    f"{name}.backward modified {which} in place on one of the grader's calls "
                    f"({which} {_described(g)}): grad_output is the caller's tensor and must "
                    "come back unchanged on every call, whatever its size, dtype or layout and "
                    "whichever inputs need a gradient; compute a new tensor instead",
                    mistake=f"{name}/writes-grad-output"))
        return result

    return watched


@contextmanager
def grad_output_watched(name: str, submission):
    """While the block runs, every call of ``submission.backward`` (an autograd.Function's)
    is watched for writes into grad_output; the first is raised at the end of the block."""
    backward = getattr(submission, "backward", None)
    if not (isinstance(submission, type) and issubclass(submission, torch.autograd.Function)
            and callable(backward) and backward is not torch.autograd.Function.backward):
        yield
        return
    own = vars(submission).get("backward")  # put back as it was, inherited or not
    held: list[GradingError] = []
    token = _held.set(held)
    submission.backward = staticmethod(_watched(name, backward))
    try:
        yield
    except GradingError as error:  # named by the battery: its words; else the write's symptom
        if held and not mistake_of(error).startswith(f"{name}/"):
            raise held[0] from error
        raise
    finally:
        _held.reset(token)
        if own is None:
            del submission.backward
        else:
            submission.backward = own
    if held:
        raise held[0]
