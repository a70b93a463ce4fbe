"""Lesson 08: softplus's left tail graded densely, as its contract states it: beta * x swept
from -40 to -5 in steps of 1/8 (and on to 40, where a clamp or a switch placed wrong shows),
for several beta, in float64 and in float32, value and gradient each to a relative 1e-5 with
no absolute floor. A shortcut that replaces log1p(e^z) (or the
slope sigmoid(z)) by e^z below a switch is within that tolerance only for z below about -11 (the
term it drops is a relative e^z / 2, or e^z for the slope); it is named where the points that
fail are exactly the shortcut's and some lie at z < 0 (at z = 0 alone, e^0 = 1 is also the
one-sided slope at the stable form's kink, which ``check_slope_at_kink`` names)."""

import torch

from ...errors import GradingError

Z = torch.arange(-40.0, 40.125, 0.125, dtype=torch.float64)  # beta * x from -40 to 40
BETAS = (1.0, 0.3, 4.0)  # 0.3 is not a float32 number


def _sweep(softplus, device, dtype, beta, explain):
    """x, the values and the gradient softplus gives on the sweep (None where it raised),
    and the float64 truths at the x given."""
    x = (Z.to(device) / beta).to(dtype)
    wide = x.double()
    value_truth = torch.logaddexp(beta * wide, 0 * wide) / beta
    slope_truth = torch.sigmoid(beta * wide)
    leaf = x.clone().requires_grad_()
    try:
        out = softplus(leaf, beta)
    except Exception as error:
        raise explain("forward", error, softplus, beta) from error
    try:
        slope, = torch.autograd.grad(out, leaf, torch.ones_like(out))
    except Exception as error:
        raise explain("backward", error, softplus, beta) from error
    return wide, out.detach(), slope, value_truth, slope_truth


def _bad(got, truth):
    """The points where got is not within a relative 1e-5 of truth (every point if the shapes
    differ)."""
    if not isinstance(got, torch.Tensor) or got.shape != truth.shape:
        return torch.ones_like(truth, dtype=torch.bool)
    got = got.double()
    return ~((got - truth).abs() <= 1e-5 * truth.abs())


def _shortcut(got, shortcut, bad, left, rtol) -> bool:
    """Is ``got`` the shortcut at every point that fails, with some of them in the left tail
    (``left``, z < 0)? A point at z = 0 alone proves nothing: e^0 = 1 is also what a slope
    taken one-sidedly at the stable form's kink gives there."""
    return (isinstance(got, torch.Tensor) and got.shape == shortcut.shape
            and bool((bad & left).any())
            and torch.allclose(got.double()[bad], shortcut[bad], rtol=rtol, atol=0))


def check_left_switch(softplus, device, explain) -> None:
    """Early, in float64: a value or slope that is e^z (over beta) exactly where it fails, a
    shortcut below a switch, named before the ordinary checks report a bare number."""
    for beta in BETAS:
        try:
            x, out, slope, value_truth, slope_truth = _sweep(softplus, device, torch.float64,
                                                             beta, explain)
        except Exception:  # noqa: BLE001 - the checks that follow report it
            return
        _name_shortcut(x, out, slope, value_truth, slope_truth, beta, torch.float64, 1e-12)


def _name_shortcut(x, out, slope, value_truth, slope_truth, beta, dtype, rtol) -> None:
    e_z = torch.exp(beta * x)
    left = beta * x < 0
    for what, got, truth, shortcut, drops, mistake in (
            ("output", out, value_truth, e_z / beta, "e^(2z) / 2, a relative e^z / 2",
             "softplus/left-tail-shortcut"),
            ("slope (its backward)", slope, slope_truth, e_z, "e^(2z), a relative e^z",
             "softplus/left-tail-slope-shortcut")):
        bad = _bad(got, truth)
        if _shortcut(got, shortcut, bad, left, rtol):
            first = int((bad & left).nonzero()[-1])  # the left tail's bad point nearest 0
            z = beta * x[first].item()
            error = abs(got[first].item() / truth[first].item() - 1)
            raise GradingError(
                f"softplus's {what} switches to e^z below a threshold in the left tail: at "
                f"beta * x = {z:g} (beta={beta}, {str(dtype).removeprefix('torch.')}) it "
                f"returns e^z{' / beta' if what == 'output' else ''}, a relative error of "
                f"{error:.2g}, past the contract's 1e-5: e^z is only the first term there, "
                f"and the next one, {drops}, is larger than 1e-5 until z is below about -11. "
                "Which form is accurate for every z, with no switch?",
                mistake=mistake)


def check_left_tail_sweep(softplus, device, explain) -> None:
    """After the few left-tail points: the whole sweep, every beta, float64 then float32,
    value and gradient to a relative 1e-5 (the truth in float64 at the x given), the left
    tail's points named as such; ``explain`` turns an exception into the operator's hint."""
    for dtype in (torch.float64, torch.float32):
        for beta in BETAS:
            x, out, slope, value_truth, slope_truth = _sweep(softplus, device, dtype, beta,
                                                             explain)
            _name_shortcut(x, out, slope, value_truth, slope_truth, beta, dtype,
                           1e-12 if dtype == torch.float64 else 2e-6)
            for what, got, truth in (("output", out, value_truth),
                                     ("gradient", slope, slope_truth)):
                bad = _bad(got, truth)
                if not bad.any():
                    continue
                if got.shape != truth.shape:
                    raise GradingError(
                        f"softplus's {what} has shape {tuple(got.shape)} for x of shape "
                        f"{tuple(x.shape)} (beta={beta}, {dtype})")
                error = ((got.double() - truth).abs() / truth.abs())
                worst = int(torch.argmax(torch.where(bad, error, 0)))
                z = beta * x[worst].item()
                where = "loses the left tail" if z < 0 else "is wrong"
                raise GradingError(
                    f"softplus's {what} {where} in {str(dtype).removeprefix('torch.')}: at "
                    f"beta * x = {z:.4g} (beta={beta}) it returns {got[worst].item():.6g}, the "
                    f"true value is {truth[worst].item():.6g} (relative error "
                    f"{error[worst].item():.2g}); the contract asks for softplus accurate "
                    "\"to the dtype's precision on the right, and to about five significant "
                    "digits far on the left\", in float64 and float32 (this sweep of beta * x "
                    "from -40 to 40 allows a relative 1e-5 at every point)")


def check_slope_at_kink(softplus, device, explain) -> None:
    """The slope at beta * x = 0 exactly, against sigmoid(0) = 1/2, where it is right a little
    to either side: the stable form max(z, 0) + log1p(e^-|z|) has a kink in each term at
    z = 0, and a backward that differentiates it term by term takes a one-sided slope there
    (clamp's or (z >= 0)'s 1, sign(0) = 0 for the other term). Named only where 0 is the one
    point wrong."""
    for beta in BETAS:
        x = torch.tensor([-1e-3, 0.0, 1e-3], dtype=torch.float64, device=device) / beta
        leaf = x.clone().requires_grad_()
        try:
            slope, = torch.autograd.grad(softplus(leaf, beta), leaf, torch.ones_like(x))
        except Exception as error:
            raise explain("backward", error, softplus, beta) from error
        truth = torch.sigmoid(beta * x)
        bad = _bad(slope, truth)
        if not bool(bad[1]) or bool(bad[0]) or bool(bad[2]):
            continue
        raise GradingError(
            f"softplus's slope at beta * x = 0 (beta={beta}, float64) is {slope[1].item():.6g}, "
            f"where the true slope sigmoid(0) is 0.5, while at beta * x = -0.001 and 0.001 it "
            f"is right ({slope[0].item():.6g} and {slope[2].item():.6g}): only the point "
            "z = 0 is wrong. softplus is smooth there, but each term of max(z, 0) + "
            "log1p(e^-|z|) has a kink at z = 0: what slope does your backward give each term "
            "at z = 0 exactly, and do the two add up to the smooth function's?",
            mistake="softplus/slope-at-kink")
