"""Lesson 04: rule 2 of the Function contract for the Function NumpyTanh's backward calls. On a
second derivative with a grad_output that needs no gradient (a Hessian-vector product, as a
second-order optimiser takes it), that Function's backward is asked for the gradient of the
saved tensor only: ctx.needs_input_grad is False for grad_output, and its backward returns None
there. The engine drops a tensor returned there, so only a record of what that backward returned
shows it (the generic rule-2 check sees NumpyTanh's own backward, never the one it calls)."""

import inspect

import torch

from ...checks import make_inputs
from ...errors import GradingError
from ...exercise import sample
from ...function_contract import rule_reference
from .numpy_tanh_graph import graph


def _input_names(cls) -> list[str]:
    """The names of the inner forward's inputs (after ctx), for the message."""
    try:
        parameters = list(inspect.signature(cls.forward).parameters.values())[1:]
    except (TypeError, ValueError):
        return []
    return [p.name for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def _spy(cls, calls: list):
    """Replace ``cls.backward`` by one that records (needs_input_grad, returned); returns the
    undo. None where the class's backward is not its own to wrap (a vjp, Function's default)."""
    if cls.backward is torch.autograd.Function.backward or \
            getattr(cls, "vjp", None) is not torch.autograd.Function.vjp:
        return None
    original, own = cls.backward, cls.__dict__.get("backward")

    def backward(ctx, *grads):
        returned = original(ctx, *grads)
        calls.append((cls, tuple(ctx.needs_input_grad),
                      returned if isinstance(returned, tuple) else (returned,)))
        return returned

    cls.backward = staticmethod(backward)

    def undo():
        if own is None:
            delattr(cls, "backward")
        else:
            cls.backward = own
    return undo


def check_inner_returns_none(function, values: dict) -> None:
    """Second derivative of ``function.apply(x)`` with a grad_output that requires no grad: each
    Function NumpyTanh's backward calls returns None where its ctx.needs_input_grad is False."""
    x = make_inputs(values)["x"]
    grad_output = sample(values["x"].shape, "cpu", seed=46).to(x.dtype)
    try:
        first, = torch.autograd.grad(function.apply(x), x, grad_output, create_graph=True)
    except RuntimeError:
        return  # the other checks name it
    if not first.requires_grad:
        return
    classes = {getattr(node, "_forward_cls", None) for node in graph(first.grad_fn)}
    classes = [cls for cls in classes if cls is not None and cls is not function]
    calls, undos = [], []
    try:
        for cls in classes:
            if (undo := _spy(cls, calls)) is not None:
                undos.append(undo)
        torch.autograd.grad(first, x, sample(first.shape, "cpu", seed=47).to(first.dtype),
                            allow_unused=True)
    except RuntimeError:
        return  # the other checks name it
    finally:
        for undo in undos:
            undo()
    for cls, needs, returned in calls:
        names = _input_names(cls)
        for index, (need, grad) in enumerate(zip(needs, returned)):
            if need or not isinstance(grad, torch.Tensor):
                continue
            name = names[index] if index < len(names) else f"input {index}"
            raise GradingError(
                f"{cls.__name__}.backward, the backward of the Function NumpyTanh's backward "
                f"calls, returned a gradient for {name} with ctx.needs_input_grad[{index}] False "
                f"(a second derivative with a grad_output that requires no grad, as a "
                f"Hessian-vector product takes it): {name} needs no gradient, so that backward "
                f"returns None for it (computing it is work thrown away) "
                f"{rule_reference('gradients')}",
                f"ctx.needs_input_grad: {needs}",
                mistake="NumpyTanh/inner-computes-frozen-gradient")
