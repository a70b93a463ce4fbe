"""Lesson 02's layers on a single vector whose feature dimension has size 1 (out = 1, a
regression head; in = 1, or n1 = 1): a forward or backward that adds a leading dimension for a
1-D input and takes it away with squeeze() (no dim) drops the feature dimension too."""

import contextlib
import itertools

import torch

from ...checks import Spec, make_inputs
from ...errors import GradingError


REFERENCE = {"MyLinearFunction": "F.linear", "FusedLinearReLU": "F.linear",
             "Bilinear": "F.bilinear"}


def _squeezed(got: tuple, want: tuple) -> bool:
    """``got`` is ``want`` with its dimensions of size 1 dropped, and is not ``want``."""
    return got != want and got == tuple(size for size in want if size != 1)


def _squeezed_shape(function, spec: Spec, values: dict) -> str | None:
    """What the answer gave a squeezed shape to ('the output', 'grad_x'), or None. The raw
    backward is called, so that its own gradients are seen before the engine refuses them."""
    try:
        inputs = make_inputs(values)
        output = function.apply(*inputs.values())
        expected = spec.reference(**make_inputs(values, requires_grad=False))
        if _squeezed(tuple(output.shape), tuple(expected.shape)):
            return (f"the output has shape {tuple(output.shape)} where "
                    f"{REFERENCE.get(spec.name, 'the reference')} gives {tuple(expected.shape)}")
        grads = output.grad_fn.apply(torch.ones_like(output))  # the user's backward, unchecked
    except Exception:  # noqa: BLE001 - a probe: any failure proves nothing
        return None
    grads = grads if isinstance(grads, tuple) else (grads,)
    for name, grad in zip(inputs, grads):
        want = tuple(inputs[name].shape)
        if isinstance(grad, torch.Tensor) and _squeezed(tuple(grad.shape), want):
            return f"grad_{name} has shape {tuple(grad.shape)} for {name} of shape {want}"
    return None


@contextlib.contextmanager
def squeeze_named(function, spec: Spec, values: dict, sizes: str):
    """Around a case with 1-D inputs and a feature dimension of size 1 (``sizes``: 'out = 1'):
    a failure is named when a probe shows a dimension of size 1 dropped."""
    try:
        yield
    except GradingError as error:
        what = _squeezed_shape(function, spec, values)
        if what is None:
            raise
        raise GradingError(
            f"{spec.name} drops a dimension of size 1 for inputs with no leading dimension and "
            f"{sizes}: {what}. A squeeze() with no dim removes every dimension of size 1, the "
            "feature dimension as well as the one you added; which dimension did you mean to "
            "remove, and can you avoid adding it at all?", error.details or error.hint,
            mistake=f"{spec.name}/squeezes-feature-dim") from error


def check_gradients_are_new(function, spec: Spec, values_for) -> None:
    """'each gradient it returns is a new tensor': with one row, x of shape (in,) or (1, in),
    grad_output itself, grad_output[0] or grad_output.reshape(out) already has grad_bias's shape
    and values, and a view of grad_output returned as a gradient passes every value check. The
    raw backward is called for every subset of the inputs requiring grad (``values_for(leading)``
    gives the inputs, the first of them x or x1), and no gradient it returns may share
    grad_output's memory."""
    for leading in ((), (1,)):
        values = values_for(leading)
        names = tuple(values)
        first = names[0]
        for wanted in itertools.product((False, True), repeat=len(names)):
            if not any(wanted):
                continue
            inputs = {name: value.detach().clone().requires_grad_(want)
                      for (name, value), want in zip(values.items(), wanted)}
            try:
                output = function.apply(*inputs.values())
                grad_output = torch.ones_like(output).mul_(0.5)
                grads = output.grad_fn.apply(grad_output)
            except Exception:  # noqa: BLE001 - other checks name a backward that fails
                continue
            grads = grads if isinstance(grads, tuple) else (grads,)
            memory = grad_output.untyped_storage().data_ptr()
            for name, grad in zip(names, grads):
                if (isinstance(grad, torch.Tensor) and grad.numel()
                        and grad.untyped_storage().data_ptr() == memory):
                    raise GradingError(
                        f"grad_{name} shares grad_output's memory (it is a view of grad_output, "
                        f"not a new tensor), for {first} of shape {tuple(values[first].shape)}: with "
                        "one row, indexing, reshaping or an einsum that sums over nothing gives the "
                        "right values as a view, but "
                        f"the caller's {name}.grad is then grad_output itself, and zeroing "
                        f"{name}.grad in place wipes grad_output too. Which of your gradients "
                        "is a view of grad_output rather than a computation on it, and what "
                        "would make it one for a single row as for many?",
                        mistake=f"{spec.name}/returns-view-of-grad-output")
