"""Lesson 06: the scale a Function is given. Every exercise takes any Python float as
``scale``, 0 and negative ones included, as ``F.scaled_dot_product_attention`` does: a forward
that takes the scale's square root or its inverse raises there, and one that puts a number of
its own in its place (``d ** -0.5``, 1) gives the same output whatever it is given."""

import torch

from ...checks import make_inputs
from ...errors import GradingError

# scales the contract allows that a square root, an inverse or a logarithm of them refuses
EDGE_SCALES = (0.0, -0.7)
# two scales whose outputs differ on any inputs that are not degenerate
OTHER_SCALES = (0.3, 1.7)


def _forward_backward(function, values: dict, scale: float) -> None:
    inputs = make_inputs(dict(values, scale=scale))
    output = function.apply(*inputs.values())
    output.backward(torch.ones_like(output))


def check_any_scale(function, name: str, values: dict, reference) -> None:
    """Forward uses the scale it is given (its output moves with it), and forward and backward
    run at scale 0 and at a negative scale (their values are the domain's checks); an error
    there is named with the scale that raised it."""
    hint = scale_ignored(function, name, values, reference)
    if hint is not None:
        raise GradingError(hint, mistake=f"{name}/scale-ignored")
    for scale in EDGE_SCALES:
        hint = mask_filled_before_scaling(function, name, values, reference, scale)
        if hint is not None:
            raise GradingError(hint, mistake=f"{name}/mask-filled-before-scaling")
    for scale in EDGE_SCALES:
        try:
            _forward_backward(function, values, scale)
        except (GradingError, NotImplementedError):
            raise
        except Exception as error:
            try:
                _forward_backward(function, values, values["scale"])
            except Exception:
                return  # it raises at the usual scale too: the other checks name that
            first = str(error).partition("\n")[0]
            raise GradingError(
                f"{name} raised {type(error).__name__} at scale={scale!r} ({first}): the "
                "contract takes any Python float as scale, 0 and negative ones included, as "
                "F.scaled_dot_product_attention does; multiply the scores Q K^T by scale "
                "itself (its square root or its inverse does not exist there)",
                mistake=f"{name}/scale-out-of-range") from error


def scale_ignored(function, name: str, values: dict, reference) -> str | None:
    """The hint for a forward whose output does not move with the scale it is given."""
    outputs, expected = [], []
    for scale in OTHER_SCALES:
        inputs = dict(values, scale=scale)
        with torch.no_grad():
            outputs.append(function.apply(*make_inputs(inputs, requires_grad=False).values()))
        expected.append(reference(**make_inputs(inputs, requires_grad=False)))
    if not all(isinstance(o, torch.Tensor) for o in outputs):
        return None
    if (outputs[0].shape == outputs[1].shape and torch.equal(outputs[0], outputs[1])
            and not torch.allclose(expected[0], expected[1])):
        low, high = OTHER_SCALES
        return (f"{name} ignores the scale it is given: its output is the same at "
                f"scale={low} and scale={high}; multiply Q K^T by the scale argument, not by a "
                "number of your own (d ** -0.5 is SDPA's default only when scale is None)")
    return None


def causal_or_given_mask(values: dict):
    """The mask given, or FlashAttention's causal one (query i sees keys j <= i + Lk - Lq)."""
    if values.get("causal"):
        Lq, Lk = values["Q"].shape[-2], values["K"].shape[-2]
        return torch.ones(Lq, Lk, dtype=torch.bool, device=values["Q"].device).tril(Lk - Lq)
    return values.get("mask")


def _filled_then_scaled(values: dict, scale: float) -> torch.Tensor:
    """Attention whose masked scores are filled with -inf before the scale multiplies them."""
    Q, K, V, mask = values["Q"], values["K"], values["V"], causal_or_given_mask(values)
    scores = (Q @ K.transpose(-2, -1)).masked_fill(~mask, float("-inf")) * scale
    return torch.softmax(scores, dim=-1) @ V


def mask_filled_before_scaling(function, name: str, values: dict, reference,
                               scale: float) -> str | None:
    """The hint for a forward that fills the masked scores with -inf and then scales them: at
    scale 0 they become 0 * -inf = nan, at a negative scale +inf, which takes every weight.
    Proven when the output at ``scale`` differs from the reference and matches that order."""
    if causal_or_given_mask(values) is None:
        return None
    inputs = dict(values, scale=scale)
    try:
        with torch.no_grad():
            output = function.apply(*make_inputs(inputs, requires_grad=False).values())
    except Exception:  # noqa: BLE001 - raising at this scale is check_any_scale's to name
        return None
    expected = reference(**make_inputs(inputs, requires_grad=False))
    suspect = _filled_then_scaled(make_inputs(inputs, requires_grad=False), scale)
    if (not isinstance(output, torch.Tensor) or output.shape != expected.shape
            or torch.allclose(output, expected, equal_nan=True)
            or not torch.allclose(output, suspect, equal_nan=True)):
        return None
    what = "0 * -inf = nan" if scale == 0 else "-inf times a negative number = +inf"
    return (f"{name} fills the masked scores with -inf before multiplying them by scale: at "
            f"scale={scale!r} its output is softmax(scale * Q K^T filled with -inf) V, where "
            f"{what} (a masked key then gets a weight, or the row is nan); multiply by scale "
            "first, then fill the masked scores with -inf")
