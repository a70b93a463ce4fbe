"""Lesson 02: state kept in a global between calls, named by what it does. Two calls with
bias=None on inputs of the same shapes, in one graph (a buffer kept per shape is then the same
buffer: the first output overwritten, or a saved mask written over), and the weight changed in
place between two calls through weight.data, as gradcheck's perturbation changes it (a copy of
weight.T cached under id(weight), its data_ptr or its _version is then stale); last, one call on
values and a batch size no earlier call used, so that a cache reused while its key or values
match is made by this call and seen in the global (outside_ctx). That call runs too where a
check of values fails first, so that state shared between calls is named before what it gets
wrong."""

import itertools
from contextlib import contextmanager

import torch

from ...checks import Spec, make_inputs
from ...errors import GradingError
from ...outside_ctx import check_no_state_outside_ctx


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
        inputs["weight"].data.mul_(-0.5).add_(0.25)  # _version unchanged, as gradcheck's step
        got = _apply(function, inputs).detach()
    except Exception:  # noqa: BLE001 - the battery names the learner's own error
        return
    want = spec.reference(**{n: v.detach() for n, v in inputs.items()})
    if (got.shape == want.shape and not torch.allclose(got, want)
            and torch.allclose(got, old)):
        raise GradingError(
            f"{name} keeps state in a global: a stale cache. A copy of weight (weight.T, "
            "say) cached between calls, under id(weight), its data_ptr or its _version, is "
            "stale once the weight's values change in place (an optimizer step; gradcheck's "
            "perturbation through weight.data, which leaves _version as it was), and the "
            "second call's output was the old weight's: what does the second call read that "
            "the change left stale?",
            mistake=f"{name}/weight-cached-in-global")


_FRESH = itertools.count(1)


def check_fresh_call_state(function, spec: Spec, make_values) -> None:
    """Last in the battery: one call, forward then backward, on values of a seed and a batch size
    this process has not used (``make_values(rows, seed)``), so that a cache of weight.T reused
    while torch.equal (or a key) says it matches is made by this call and shows in the global
    that holds it; a rerun of the self-check probes new ones too."""
    fresh = next(_FRESH)
    check_no_state_outside_ctx(function, spec.name, make_values(4100 + fresh % 4000, 1000 + fresh))


@contextmanager
def state_before_values(function, spec: Spec, make_values, blamed):
    """A check that fails inside with no mistake proved, or with one of ``blamed`` (what state
    kept in a global can cause), where one fresh call also shows such state: the state is named
    instead. A cache keyed by a data_ptr gets values wrong only where an address repeats (an
    empty batch's is 0, a freed tensor's comes back): the cache is what to fix."""
    try:
        yield
    except GradingError as error:
        if not error.mistake or error.mistake in blamed:
            check_fresh_call_state(function, spec, make_values)
        raise
