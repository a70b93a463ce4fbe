"""Lesson 02's layers on a single vector whose feature dimension has size 1 (out = 1, a
regression head; in = 1, or n1 = 1): a forward or backward that adds a leading dimension for a
1-D input and takes it away with squeeze() (no dim) drops the feature dimension too."""

import contextlib

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

