"""Lesson 04: rule 2 of the Function contract for the Function NumpyTanh's backward calls. On a
second derivative with a grad_output that needs no gradient (a Hessian-vector product, as a
second-order optimiser takes it), that Function's backward is asked for the gradient of the
saved tensor only: ctx.needs_input_grad is False for grad_output, and its backward returns None
there. The engine drops a tensor returned there, so only a record of what that backward returned
shows it (the generic rule-2 check sees NumpyTanh's own backward, never the one it calls); the
same record, in float32, holds each gradient it returns to its input's dtype (rule 2's dtype,
which the engine's cast hides too)."""

import inspect

import torch

from ...checks import make_inputs
from ...errors import GradingError
from ...exercise import sample
from ...function_contract import rule_reference
from ...returned_dtypes import returned_dtype_hint
from .numpy_tanh_graph import graph


def _input_names(cls) -> list[str]:
    """The names of the inner forward's inputs (after ctx), for the message."""
    try:
        parameters = list(inspect.signature(cls.forward).parameters.values())[1:]
    except (TypeError, ValueError):
        return []
    return [p.name for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def _input_dtypes(ctx) -> tuple:
    """The dtype of each forward input of the node ``ctx``, as the node its gradient flows into
    records it (None where no gradient flows there); read before the engine casts a gradient."""
    dtypes = []
    for node, index in getattr(ctx, "next_functions", ()):
        try:
            dtypes.append(node._input_metadata[index].dtype if node is not None else None)
        except (AttributeError, IndexError, RuntimeError):
            dtypes.append(None)
    return tuple(dtypes)


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
                      returned if isinstance(returned, tuple) else (returned,), _input_dtypes(ctx),
                      {grad.dtype for grad in grads if isinstance(grad, torch.Tensor)}))
        return returned

    cls.backward = staticmethod(backward)

    def undo():
        if own is None:
            delattr(cls, "backward")
        else:
            cls.backward = own
    return undo


def _inner_calls(function, x: torch.Tensor, grad_output: torch.Tensor, wrt) -> list:
    """(class, needs_input_grad, returned, input dtypes, the dtypes of the gradients it was
    handed) for each backward call of a Function
    NumpyTanh's backward calls, in a second derivative of ``function.apply(x)`` with respect to
    ``wrt``; [] where a derivative raised or has no graph (the other checks name it)."""
    try:
        first, = torch.autograd.grad(function.apply(x), x, grad_output, create_graph=True)
    except RuntimeError:
        return []
    if not first.requires_grad:
        return []
    classes = {getattr(node, "_forward_cls", None) for node in graph(first.grad_fn)}
    classes = [cls for cls in classes if cls is not None and cls is not function]
    calls, undos = [], []
    try:
        for cls in classes:
            if (undo := _spy(cls, calls)) is not None:
                undos.append(undo)
        torch.autograd.grad(first, wrt, sample(first.shape, "cpu", seed=47).to(first.dtype),
                            allow_unused=True)
    except RuntimeError:
        return []
    finally:
        for undo in undos:
            undo()
    return calls


def check_inner_returns_none(function, values: dict) -> None:
    """Second derivative of ``function.apply(x)`` with a grad_output that requires no grad: each
    Function NumpyTanh's backward calls returns None where its ctx.needs_input_grad is False."""
    x = make_inputs(values)["x"]
    grad_output = sample(values["x"].shape, "cpu", seed=46).to(x.dtype)
    for cls, needs, returned, _, _ in _inner_calls(function, x, grad_output, x):
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


def check_inner_returned_dtypes(function, values: dict) -> None:
    """Rule 2's dtype for each Function NumpyTanh's backward calls: in a float32 second
    derivative (with respect to x and grad_output), what that Function's backward returns has
    the dtype of the input it is for, recorded before autograd casts it. A gradient in the
    dtype that backward was handed passes: a Function computing wider throughout (its output
    too, cast back by NumpyTanh's backward) is catalogued correct; one that widens on its own
    (a NumPy float64 scalar, under NumPy 2's promotion) is not."""
    x = make_inputs(values)["x"]
    grad_output = sample(values["x"].shape, "cpu", seed=46).to(x.dtype).requires_grad_()
    for cls, _, returned, dtypes, handed in _inner_calls(function, x, grad_output,
                                                         (x, grad_output)):
        names = _input_names(cls)
        for index, (grad, dtype) in enumerate(zip(returned, dtypes)):
            if not isinstance(grad, torch.Tensor) or dtype is None or grad.dtype == dtype \
                    or grad.dtype in handed:
                continue
            name = names[index] if index < len(names) else f"input {index}"
            raise GradingError(
                returned_dtype_hint(f"{cls.__name__}.backward (the backward of the Function "
                                    "NumpyTanh's backward calls)", name, grad.dtype, dtype),
                f"x of shape {tuple(x.shape)}, {str(x.dtype).removeprefix('torch.')}",
                mistake="NumpyTanh/inner-wrong-gradient-dtype")
