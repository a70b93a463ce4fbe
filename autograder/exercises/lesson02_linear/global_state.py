"""Lesson 02: state kept in a global between calls, named by what it does. Two calls with
bias=None on inputs of the same shapes, in one graph (a buffer kept per shape is then the same
buffer: the first output overwritten, or a saved mask written over), and the weight changed in
place between two calls, as an optimizer step changes it (a copy of weight.T cached under
id(weight) is then stale)."""

import torch

from ...checks import Spec, make_inputs
from ...errors import GradingError

_OVERWRITE = "inplace operation"  # autograd's version-counter error, a saved tensor written over


def _apply(function, inputs: dict):
    return function.apply(*inputs.values())


def _first_line(name: str, what: str) -> str:
    return (f"{name} keeps state in a global: one call's {what} is a buffer another call "
            f"reuses (two calls with bias=None on inputs of the same shapes, in one graph)")


def check_same_shape_calls(function, spec: Spec, first: dict, second: dict) -> None:
    """Both forwards, then the first call's backward: its output unchanged by the second call
    and its gradients those of its own inputs. A failure that one call alone also shows is left
    to the checks that name it."""
    name = spec.name
    a, b = make_inputs(first), make_inputs(second)
    try:
        y1 = _apply(function, a)
        kept = y1.detach().clone()
        y2 = _apply(function, b)
        if not torch.equal(y1.detach(), kept) or (
                y1.numel() and y1.untyped_storage().data_ptr() == y2.untyped_storage().data_ptr()):
            raise GradingError(
                _first_line(name, "output") + ": the second call wrote its output over the "
                "first's: where is the tensor each call returns allocated?",
                mistake=f"{name}/output-buffer-in-global")
        leaves = [v for v in a.values() if isinstance(v, torch.Tensor)]
        grad = torch.randn(y1.shape, generator=torch.Generator().manual_seed(3),
                           dtype=y1.dtype).to(y1.device)
        got = torch.autograd.grad(y1, leaves, grad, allow_unused=True)
    except GradingError:
        raise
    except RuntimeError as error:
        if _OVERWRITE not in str(error):
            return
        raise GradingError(
            _first_line(name, "saved tensor") + ": the second call wrote into a tensor the "
            "first call saved for backward, so autograd refused its backward: where was the "
            "tensor each call saves made?", str(error),
            mistake=f"{name}/saved-buffer-in-global") from error
    except Exception:  # noqa: BLE001 - the learner's own error: the battery names it
        return
    fresh = make_inputs(first)
    want = torch.autograd.grad(spec.reference(**fresh), list(fresh.values()), grad)
    if all(g is not None and torch.allclose(g, w) for g, w in zip(got, want)):
        return
    alone = make_inputs(first)
    try:
        right = torch.autograd.grad(_apply(function, alone), list(alone.values()), grad)
    except Exception:  # noqa: BLE001
        return
    if all(g is not None and torch.allclose(g, w) for g, w in zip(right, want)):
        raise GradingError(
            _first_line(name, "state") + ": the first call's gradients are right alone but "
            "wrong after the second call: what does the first call's backward read that the "
            "second call changed, and where does it live?",
            mistake=f"{name}/state-shared-between-calls")


def check_weight_stepped(function, spec: Spec, values: dict) -> None:
    """Forward, weight changed in place (an optimizer step), forward again: the second output
    is that of the new weight. One that is the old weight's comes from a copy of weight (weight.T,
    say) cached in a global under id(weight), which an in-place step leaves stale."""
    name = spec.name
    inputs = make_inputs(values)
    try:
        _apply(function, inputs)
        old = spec.reference(**{n: v.detach() for n, v in inputs.items()})
        with torch.no_grad():
            inputs["weight"].mul_(-0.5).add_(0.25)
        got = _apply(function, inputs).detach()
    except Exception:  # noqa: BLE001 - the battery names the learner's own error
        return
    want = spec.reference(**{n: v.detach() for n, v in inputs.items()})
    if (got.shape == want.shape and not torch.allclose(got, want)
            and torch.allclose(got, old)):
        raise GradingError(
            f"{name} keeps state in a global: a copy of weight (weight.T, say) cached under "
            "id(weight) between calls is stale once the weight changes in place, as an "
            "optimizer step changes it, and the second call's output was the old weight's: "
            "what does the second call read that the step left stale?",
            mistake=f"{name}/weight-cached-in-global")
