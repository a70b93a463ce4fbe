"""Lesson 08: softplus in its right tail, where beta * x is large: exp(beta * x) overflowing in
float32 where float64 holds it (a threshold or guard fixed for float64), and a switch to the
asymptote x past a threshold, which drops a term float64 still sees."""

import torch

from ...errors import GradingError


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
    """log(1 + e^z) = z + log1p(e^-z) for every z (the hint does not say so): a forward that returns z / beta (x itself)
    past a threshold drops e^-z / beta, which float64's tolerance sees up to z of about 20
    (F.softplus's own threshold, 20, stays inside it). Named only where every value the
    tolerance rejects is exactly x. ``spec`` holds the reference."""
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
        bad = ~torch.isclose(got, expected, rtol=1e-9, atol=1e-10)
        if not bad.any() or not torch.equal(got[bad], x[bad]):
            continue
        first = int(bad.nonzero()[0])
        raise GradingError(
            f"softplus returns x itself from beta * x = {z[first].item():g} on (with "
            f"beta={beta:g}, at x = {x[first].item():.6g} it returns {got[first].item():.10g}, "
            f"the true value is {expected[first].item():.10g}, a relative error of "
            f"{((expected[first] - got[first]) / expected[first]).item():.2g}, past the right "
            "tail's tolerance in float64, a relative 1e-9): a switch to the asymptote past a "
            "threshold. What exactly does the switch drop from log(1 + e^z), how fast does that "
            "shrink as z grows, and is there a form of log(1 + e^z) that needs no switch?",
            mistake="softplus/threshold-switch")
