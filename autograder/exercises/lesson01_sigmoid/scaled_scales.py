"""Lesson 01: ScaledSigmoid at scales of every size: 0 (where recovering sigma(x) as y / scale
is 0/0), tiny ones (where a threshold, an epsilon or a product of two scale-sized factors
shows) and 1e300."""

import torch

from ...checks import (Spec, case, check_values_and_gradients, reference_gradients,
                       run_backward, run_forward, make_inputs)
from ...contract import covers
from ...errors import GradingError
from ...exercise import sample
from .sigmoid_probes import comparable

SCALED_SIGMOID = Spec("ScaledSigmoid", ("x", "scale"), lambda x, scale: scale * torch.sigmoid(x))


def scaled_values(shape, device, scale, seed=0, dtype=torch.float64) -> dict:
    return {"x": sample(shape, device, seed=seed, dtype=dtype), "scale": scale}


def _scaled_grad_x(function, values: dict):
    """(what forward saved, grad_x, the true grad_x) for one call on ``values``."""
    inputs = make_inputs(values)
    forward = run_forward(function, SCALED_SIGMOID, inputs)
    grad_output = 0.5 + torch.rand(forward.output.shape, dtype=forward.output.dtype,
                                   generator=torch.Generator().manual_seed(6))
    grad_output = grad_output.to(forward.output.device)
    grad = run_backward(SCALED_SIGMOID, forward.output, inputs, grad_output).grads[0]
    return forward.saved, grad, reference_gradients(SCALED_SIGMOID, inputs, grad_output)["x"]


def check_no_division_by_scale(function, device) -> None:
    """A gradient right at scale 2.5 and not finite at scale 0, on the same x, where the true
    gradient is 0: backward divided by scale (sigma(x) recovered as y / scale is 0/0 there)."""
    _, grad, true = _scaled_grad_x(function, scaled_values((7,), device, 2.5))
    if not (comparable(grad, true) and torch.allclose(grad, true)):
        return
    saved, grad, _ = _scaled_grad_x(function, scaled_values((7,), device, 0.0))
    if not (comparable(grad, true) and not torch.isfinite(grad).all()):
        return
    what = ("it saved its output y = scale * sigmoid(x), and recovering sigma(x) as y / scale "
            if any(s.role == "output" for s in saved) else "a division by scale ")
    raise GradingError(
        f"ScaledSigmoid's grad_x is right at scale = 2.5 but holds nan or inf at scale = 0, "
        f"on the same x: {what}gives 0/0 there, where the derivative is exactly 0",
        mistake="ScaledSigmoid/divides-by-scale")


# A Python float may be as small as the caller likes: an epsilon in a division (y / (scale +
# eps)) is right at 0 and at 2.5, and a division by 0 at scale = -eps, 4x off at scale = +eps.
# A scale near the smallest normal float64 too: a test abs(scale) < t that zeroes the
# gradient fails there for any t above it. At twice the smallest normal, the output is a normal
# float64 wherever x > 0 (the contract holds every design to float64's precision there), and
# on x of this size the rest is held to rtol 1e-9, which an answer that keeps y and divides it
# by scale meets (its y is then subnormal, with at least 11 digits left).
SMALLEST_SCALE = 2 * torch.finfo(torch.float64).tiny  # 4.450147717014403e-308
# and one far from 1 the other way, for "any size"
TINY_SCALES = (1e-12, -1e-12, SMALLEST_SCALE, -SMALLEST_SCALE, 1e300)
EPSILONS = (1e-12, 1e-15, 1e-10, 1e-8, 1e-6, 1e-4)


def _epsilon_cause(function, device) -> str:
    """Name an epsilon only when the gradient, right at scale 2.5, is not finite at scale = -eps
    (or +eps) for one of the usual epsilons, on the same x."""
    _, grad, true = _scaled_grad_x(function, scaled_values((7,), device, 2.5))
    if not (comparable(grad, true) and torch.allclose(grad, true)):
        return ""
    for eps in EPSILONS:
        for scale in (-eps, eps):
            _, grad, _ = _scaled_grad_x(function, scaled_values((7,), device, scale))
            if isinstance(grad, torch.Tensor) and not bool(torch.isfinite(grad).all()):
                return (f": it is also nan or inf at scale = {scale!r}, and right at 2.5: backward "
                        f"divides by scale {'+' if scale < 0 else '-'} {eps!r}. An epsilon "
                        "moves the 0/0 from scale = 0 to that scale and biases every scale near "
                        "it")
    return ""


def _right_at(function, device, scale) -> bool:
    _, grad, true = _scaled_grad_x(function, scaled_values((7,), device, scale))
    return comparable(grad, true) and torch.allclose(grad, true, rtol=1e-9, atol=0)


def _zeros_cause(function, device) -> str:
    """An all-zero gradient at a tiny scale: blame a threshold on |scale| only when the
    gradient is right at 1e300 and 1e160 (a threshold zeroes small scales, nothing else); name a
    product of two scale-sized factors when the gradient is wrong at 1e160 and zero at 1e-170
    (up to about 1e320 and 1e-340: they overflow and underflow) while right at 1e150 and 1e-150."""
    if _right_at(function, device, 1e300) and _right_at(function, device, 1e160):
        return (": all zeros, as at scale = 0; only scale == 0 exactly has a zero gradient, "
                "and a test such as abs(scale) < tol zeroes one that is small, not 0")
    _, big, _ = _scaled_grad_x(function, scaled_values((7,), device, 1e160))
    _, small, _ = _scaled_grad_x(function, scaled_values((7,), device, 1e-170))
    if (_right_at(function, device, 1e150) and _right_at(function, device, 1e-150)
            and comparable(big, small) and not bool(torch.isfinite(big).all())
            and not bool(small.any())):
        return (f": all zeros at scale = 1e-170 too, and {big[0].item()!r} at scale = 1e160, "
                "while right at 1e150 and 1e-150: backward multiplies two factors of the "
                "scale's size (such as y * (scale - y)), whose product, at most about "
                "scale^2 / 4, underflows to 0 below |scale| of about 3e-162 and overflows to "
                "inf from about 3e154")
    return _float32_cause(function, device) or (
        ": all zeros, where the true gradient is not 0 at any x")


# scales float32 holds exactly (1 + 2^-20 and 2^-120 bfloat16 and float16 do not), and 0.1, which
# it rounds: an answer right at the first and wrong at 0.1 computes with scale rounded to float32
FLOAT32_SCALES = (0.125, 1 + 2 ** -20, 2 ** -120, -2 ** -120)


def _float32_cause(function, device) -> str:
    """Name a float32 scale (a tensor made of it, torch.tensor(scale) without dtype=, or one
    saved in float32) only when the gradient is right, to rtol 1e-9, at every scale of
    FLOAT32_SCALES and wrong at 0.1."""
    if _right_at(function, device, 0.1) or not all(
            _right_at(function, device, scale) for scale in FLOAT32_SCALES):
        return ""
    return (": right at every scale float32 holds exactly (0.125, 1 + 2^-20, +-2^-120) and "
            "wrong at 0.1, which float32 rounds (a scale below about 1e-45 it rounds to 0): "
            "scale went through float32 (torch.tensor(scale) without dtype= makes a float32 "
            "tensor, which keeps 7 digits of it); keep it the Python float it is")


def _product_cause(function, device) -> str:
    """A gradient wrong (not zero) at a tiny scale: name a product of two scale-sized factors
    (y * y / scale) only when it is right at 1e150 and 1e-150 and wrong at both 1e-170 and
    1e160, where such a product (about scale^2) underflows and overflows."""
    if not (_right_at(function, device, 1e150) and _right_at(function, device, 1e-150)):
        return ""
    if _right_at(function, device, 1e-170) or _right_at(function, device, 1e160):
        return ""
    return (": it is wrong at scale = 1e-170 and 1e160 too, while right at 1e150 and 1e-150: "
            "backward multiplies two factors of the scale's size (such as y * y), whose "
            "product, about scale^2, underflows below |scale| of about 1e-162 and overflows "
            "from about 1e154; which form of the derivative has one factor of scale only?")


def check_tiny_scales(function, device) -> None:
    """Values and gradients right relative to their size (rtol 1e-9, no atol) at
    scale = +-1e-12, +-SMALLEST_SCALE and 1e300 (a Python float, as any)."""
    for scale in TINY_SCALES:
        values = scaled_values((7,), device, scale)
        _, grad, true = _scaled_grad_x(function, values)
        # off by less than 1e-6 (relative): a float32 step, which check_values_and_gradients
        # below notes as a precision finding that names it
        if comparable(grad, true) and not torch.allclose(grad, true, rtol=1e-6, atol=0):
            at = int(((grad - true).abs() / true.abs()).nan_to_num(float("inf")).argmax())
            cause = (_zeros_cause(function, device) if not bool(grad.any())
                     else _epsilon_cause(function, device) or _product_cause(function, device)
                     or _float32_cause(function, device))
            raise GradingError(
                f"ScaledSigmoid's grad_x at scale = {scale!r} is {grad[at].item()!r} where the "
                f"true one is {true[at].item()!r}{cause}", mistake={
                    "a test such as abs(scale) < tol": "ScaledSigmoid/zeroes-small-scales",
                    "two factors of the scale's size": "ScaledSigmoid/scale-squared-overflows",
                    "backward divides by scale": "ScaledSigmoid/epsilon-in-division",
                    "scale went through float32": "ScaledSigmoid/float32-scale"})
        with case(f"x of shape (7,), scale={scale!r}"):
            check_values_and_gradients(function, SCALED_SIGMOID, values, rtol=1e-9, atol=0)
    check_subnormal_scales(function, device)
    covers("tiny scales")


# Below the smallest normal float64 (2.2e-308) a Python float is subnormal: 1 / scale is inf
# from |scale| < 5.6e-309, and the output keeps fewer digits (none at 5e-324, the smallest).
# Held to the first clause there (finite, never nan) and to |scale| of the truth, no more.
SUBNORMAL_SCALES = (1e-310, -1e-310, 5e-324, -5e-324)


def check_subnormal_scales(function, device) -> None:
    """Values and gradients finite and within |scale| of the truth at the subnormal scales
    +-1e-310 and +-5e-324; a gradient that is not finite there names a reciprocal of scale."""
    for scale in SUBNORMAL_SCALES:
        values = scaled_values((7,), device, scale)
        _, grad, true = _scaled_grad_x(function, values)
        if comparable(grad, true) and not bool(torch.isfinite(grad).all()):
            at = int((~torch.isfinite(grad)).int().argmax())
            raise GradingError(
                f"ScaledSigmoid's grad_x at scale = {scale!r}, a subnormal float64 (a Python "
                f"float may be one), is {grad[at].item()!r} where the true one is "
                f"{true[at].item()!r}: 1 / scale is inf below |scale| of about 5.6e-309, so a "
                "backward that forms it, or any number that large, gives inf or nan; which of "
                "your intermediates leaves float64's range while the gradient does not?",
                mistake="ScaledSigmoid/reciprocal-overflows")
        with case(f"x of shape (7,), scale={scale!r}"):
            check_values_and_gradients(function, SCALED_SIGMOID, values, rtol=0,
                                       atol=abs(scale))
