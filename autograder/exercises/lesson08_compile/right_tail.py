"""Lesson 08: softplus in its right tail, where beta * x is large: exp(beta * x) overflowing in
float32 where float64 holds it (a threshold or guard fixed for float64), the value and the slope
on the right to the dtype's precision (a switch to the asymptote x past a threshold drops
e^-z / z, a slope of exactly 1 past one drops e^-z; float64 sees both past z = 20).

The value is graded to VALUE_ULPS ulps, flat: every stable form (max(z, 0) + log1p(e^-|z|),
log1p(e^z) below overflow, x + log1p(e^-z) / beta, logaddexp, F.softplus with a threshold past
the sweep, a float64 computation cast back) is within about 1 ulp on the sweep in float64 and
float32, and a switch to x drops more than 4 ulps until beta * x is about 31. The slope is graded
to ULPS ulps of beta * x: a slope read back from the output, exp(beta * x - beta * s), subtracts
two numbers near beta * x and carries their rounding (up to about beta * x ulps, and exactly 1
from beta * x = 33 on, where the true slope is 1 - 1.4e-14 or less); a slope switched to 1 past
beta * x = 32 is as close, so the bound cannot tell them apart and the message says the bound."""

import torch

from ...errors import GradingError
from .left_sweep import BETAS, _sweep

VALUE_ULPS = 4  # the value on the right: within 4 ulps, relative (the dtype's precision)
ULPS = 4  # the slope on the right: within 4 ulps of beta * x, relative


def _right_tolerance(z, dtype):
    """The relative error the contract's "dtype's precision on the right" allows the value at
    beta * x = z: VALUE_ULPS ulps of the value, whatever z (no stable form needs more)."""
    return VALUE_ULPS * torch.finfo(dtype).eps * torch.ones_like(z)


def check_float32_overflow(softplus, device) -> None:
    """beta * x = 100 in float32, after float64 passed in the thousands: exp(100) is inf in
    float32 (whose exp overflows past about 88.7) and finite in float64."""
    x = torch.tensor([100.0, -100.0, 0.5], device=device)
    with torch.no_grad():
        try:
            out = softplus(x, 1.0)
        except Exception:  # noqa: BLE001 - the domain's float32 inputs report it
            return
    if isinstance(out, torch.Tensor) and not torch.isfinite(out).all():
        raise GradingError(
            "softplus overflows in float32 though not in float64: at beta * x = 100 in float32 it "
            f"returns {out.tolist()}; float32's exp overflows past about 88.7 (float64's past "
            "709), so a threshold or a guard fixed for float64 does not hold for float32",
            mistake="softplus/float64-threshold")


def check_no_switch(softplus, device, spec) -> None:
    """log(1 + e^z) = z + log1p(e^-z) for every z (the hint does not say so): a forward that
    returns z / beta (x itself) past a threshold drops a relative e^-z / z, which float64's
    precision on the right (VALUE_ULPS ulps) sees until z is about 31, F.softplus's own
    threshold, 20, included. Named only where every value the tolerance rejects is exactly x.
    ``spec`` holds the reference."""
    for beta in (1.0, 100.0):
        z = torch.arange(5.0, 40.0, 0.25, dtype=torch.float64, device=device)
        x = z / beta
        try:
            with torch.no_grad():
                got = softplus(x, beta)
        except Exception:  # noqa: BLE001 - the cases that follow report it
            return
        expected = spec.reference(x, beta)
        if not isinstance(got, torch.Tensor) or got.shape != x.shape:
            return
        tolerance = _right_tolerance(z, torch.float64)
        bad = ~((got - expected).abs() <= tolerance * expected.abs())
        if not bad.any() or not torch.equal(got[bad], x[bad]):
            continue
        first = int(bad.nonzero()[0])
        raise GradingError(
            f"softplus returns x itself from beta * x = {z[first].item():g} on (with "
            f"beta={beta:g}, at x = {x[first].item():.6g} it returns {got[first].item():.17g}, "
            f"the true value is {expected[first].item():.17g}, a relative error of "
            f"{((expected[first] - got[first]) / expected[first]).item():.2g}, past the "
            "dtype's precision the contract asks for on the right (here a relative "
            f"{tolerance[first].item():.2g}, {VALUE_ULPS} ulps in float64)): a switch to "
            "the asymptote past a threshold. What exactly does the switch drop from log(1 + e^z), how fast does that "
            "shrink as z grows, and is there a form of log(1 + e^z) that needs no switch?",
            mistake="softplus/threshold-switch")


def check_right_value(softplus, device, explain) -> None:
    """The value for beta * x > 0 on the sweep (to 40, every beta, float64 then float32), to
    the dtype's precision, as the contract's first bullet says: a relative VALUE_ULPS * eps.
    ``check_no_switch`` has named a switch to x itself in float64 already."""
    for dtype in (torch.float64, torch.float32):
        for beta in BETAS:
            x, out, _, truth, _ = _sweep(softplus, device, dtype, beta, explain)
            if not isinstance(out, torch.Tensor) or out.shape != truth.shape:
                return  # the sweep's own check named it
            z = beta * x
            error = (out.double() - truth).abs() / truth
            bad = (z > 0) & ~(error <= _right_tolerance(z, dtype))
            if not bad.any():
                continue
            name = str(dtype).removeprefix("torch.")
            worst = int(torch.argmax(torch.where(bad, error / _right_tolerance(z, dtype), 0)))
            same = " (x itself: a switch to the asymptote)" if out.double()[worst] == x[worst] else ""
            raise GradingError(
                f"softplus's output is not accurate on the right in {name}: at beta * x = "
                f"{z[worst].item():g} (beta={beta}) it returns {out[worst].item():.17g}{same}, "
                f"the true value is {truth[worst].item():.17g} (relative error "
                f"{error[worst].item():.2g}); the contract asks for the dtype's precision on "
                f"the right (here a relative {_right_tolerance(z, dtype)[worst].item():.2g}, "
                f"{VALUE_ULPS} ulps)")


def check_right_slope(softplus, device, explain) -> None:
    """The gradient for beta * x > 0 on the sweep (to 40, every beta, float64 then float32),
    to the dtype's precision, as the contract's first bullet says: a relative ULPS * eps *
    max(1, beta * x), the ulps of beta * x itself (a slope read back from the output, as
    exp(beta * x - beta * s), carries those). A slope of exactly 1 past a threshold drops
    e^-z, which float64 sees until z is about 36: named where every failing point is 1."""
    for dtype in (torch.float64, torch.float32):
        eps = torch.finfo(dtype).eps
        for beta in BETAS:
            x, _, slope, _, truth = _sweep(softplus, device, dtype, beta, explain)
            if not isinstance(slope, torch.Tensor) or slope.shape != truth.shape:
                return  # the sweep's own check named it
            z = beta * x
            tolerance = ULPS * eps * z.clamp(min=1)
            error = (slope.double() - truth).abs() / truth
            bad = (z > 0) & ~(error <= tolerance)
            if not bad.any():
                continue
            name = str(dtype).removeprefix("torch.")
            first = int(bad.nonzero()[0])
            if bool((slope.double()[bad] == 1).all()):
                raise GradingError(
                    f"softplus's slope is exactly 1 from beta * x = {z[first].item():g} on "
                    f"(beta={beta}, {name}), where the true slope sigmoid(beta * x) is 1 - "
                    f"{1 - truth[first].item():.2g}: a relative error of "
                    f"{error[first].item():.2g}, past the dtype's precision the contract asks "
                    f"for on the right (here a relative {tolerance[first].item():.2g}, {ULPS} "
                    "ulps of beta * x). A slope switched to 1 past a threshold drops e^-z, which "
                    f"{name} sees until z is about {-torch.log(torch.tensor(eps)).item():.0f}: "
                    "which form of the slope needs no switch?",
                    mistake="softplus/right-slope-switch")
            worst = int(torch.argmax(torch.where(bad, error / tolerance, 0)))
            raise GradingError(
                f"softplus's gradient is not accurate on the right in {name}: at beta * x = "
                f"{z[worst].item():g} (beta={beta}) it returns {slope[worst].item():.17g}, the "
                f"true slope sigmoid(beta * x) is {truth[worst].item():.17g} (relative error "
                f"{error[worst].item():.2g}); the contract asks for the dtype's precision on "
                f"the right (here a relative {tolerance[worst].item():.2g}, {ULPS} ulps of "
                "beta * x)")
