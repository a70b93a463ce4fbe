"""Lesson 08: LogSumExp at |x| = 1000, the contract's magnitude, in float64: a forward that
overflows or underflows, softmax weights (in backward and in jvp) shifted by one max for the
whole tensor rather than each slice's own, a shift by something other than the slice's max, and
a jvp that computes in float32."""

import torch

from ...checks import case, run_forward
from ...diagnose import diagnose_gradient, diagnose_values
from ...errors import GradingError
from ...precision import rounded_to_float32

HUGE = torch.tensor([[1000.0, 999.0, -1000.0], [-1000.0, -999.5, -1000.0]])
# slices where only their own max keeps every exponent <= 0: a shift by the mean or by the
# first entry leaves exp(1333) or exp(2000) in the sum
SHIFTED = torch.tensor([[1000.0, -1000.0, -1000.0], [-1000.0, 1000.0, 0.0]])


def _max_not_per_row(result: torch.Tensor) -> bool:
    """At HUGE, dim=1 (a gradient, or a tangent with one entry a row): finite on the first row
    (it holds x's largest value, 1000) and nan on the second (all near -1000), as softmax
    weights shifted by the whole tensor's max are: exp(x - 1000) is 0 for every entry of the
    second row, and 0 / 0 = nan. A naive softmax is nan on the first row too (inf / inf)."""
    return (result.shape[:1] == HUGE.shape[:1] and bool(torch.isfinite(result[0]).all())
            and bool(torch.isnan(result[1]).any()))


def check_lse_stable(function, device, spec, explain) -> None:
    """Finite and right values, gradients and tangents at |x| = 1000 in float64 (the contract's
    magnitude): forward, backward and jvp each checked on their own. ``spec`` holds the
    reference, ``explain`` turns an exception a transform raised into its hint."""
    x = HUGE.to(device=device, dtype=torch.float64).requires_grad_()
    out = run_forward(function, spec, {"x": x, "dim": 1}).output
    expected = torch.logsumexp(x.detach(), 1)
    if not torch.isfinite(out).all():
        if (out == float("-inf")).any() and not (out == float("inf")).any():
            what = ("underflows on the row of values near -1000: every term of its sum is 0 "
                    "and log(0) = -inf; subtract that row's own max along dim, so that its "
                    "largest term is exactly exp(0) = 1")
        else:
            what = ("overflows at |x| = 1000: exp(1000) is inf in float64; which constant, "
                    "taken out of the sum, leaves no positive exponent? (Hint 2 before "
                    "Exercise 1)")
        raise GradingError(f"LogSumExp's forward {what}", f"got {out.detach()}, expected {expected}",
                           mistake={"overflows at |x| = 1000": "LogSumExp/overflows",
                                    "underflows on the row": "LogSumExp/max-not-per-row"})
    diagnose_values("LogSumExp's output at |x| = 1000", out, expected)
    check_lse_own_max(function, device, spec)
    grad, = torch.autograd.grad(out.sum(), x)
    check_weights_finite("LogSumExp's backward", "backward", grad)
    diagnose_gradient("x", grad, torch.softmax(x.detach(), 1))
    tangent = torch.tensor([[1.0, -2.0, 0.5], [0.25, 1.0, -1.0]], dtype=torch.float64,
                           device=device)
    try:
        _, got = torch.func.jvp(lambda t: function.apply(t, 1), (x.detach(),), (tangent,))
    except Exception as error:
        raise explain("jvp", error, {"x": x, "dim": 1}) from error
    if isinstance(got, torch.Tensor):
        check_weights_finite("LogSumExp.jvp", "jvp", got)
    expected = (torch.softmax(x.detach(), 1) * tangent).sum(1)
    check_lse_jvp_float32(got, expected)
    with case("x at |x| = 1000 (torch.func.jvp)"):
        diagnose_values("LogSumExp.jvp's tangent", got, expected)


def check_weights_finite(who: str, phase: str, got: torch.Tensor) -> None:
    """backward's gradient or jvp's tangent at HUGE, dim=1, where forward was finite: nan only
    on the row near -1000 is softmax weights shifted by one max for the whole tensor; inf or
    nan elsewhere is softmax weights that overflow."""
    if _max_not_per_row(got):
        raise GradingError(
            f"{who} gives nan on the row of values near -1000 and is right on the row holding "
            "x's largest value: its softmax weights are shifted by one max for the whole "
            "tensor, so every term of that row underflows to 0 and 0 / 0 = nan; shift each "
            "slice by its own max along dim (or use x minus the output)", f"got {got}",
            mistake=f"LogSumExp/{phase}-max-not-per-row")
    if not torch.isfinite(got).all():
        raise GradingError(
            f"{who} gives inf or nan at |x| = 1000 although forward is finite: an exp in its "
            "softmax weights overflows there (exp(1000) is inf in float64, and inf / inf is "
            "nan); what can be subtracted from x before the exp so that no exponent is "
            "positive and the weights stay the same?", f"got {got}",
            mistake=f"LogSumExp/{phase}-softmax-overflows")


def check_lse_jvp_float32(got, expected) -> None:
    """At |x| = 1000 a float32 step in jvp costs about float32's spacing near 1000 (6.1e-5)
    in the weights: right to a few digits, far from float64's; every value a float32 number
    proves it."""
    if not (isinstance(got, torch.Tensor) and got.dtype == torch.float64
            and got.shape == expected.shape) or torch.allclose(got, expected, rtol=1e-9,
                                                                atol=1e-10):
        return
    error = ((got - expected).abs() / expected.abs().clamp(min=1e-3)).max().item()
    if rounded_to_float32(got, expected) or 1e-7 < error < 1e-3:
        raise GradingError(
            f"LogSumExp.jvp loses digits at |x| = 1000: its tangent is off by a relative "
            f"{error:.1g}, far outside float64's precision and about what float32 loses there "
            "(float32's numbers near 1000 are 6.1e-5 apart): does jvp compute in float32 (a "
            ".float(), a tensor made without dtype=)? Keep every step in x's dtype",
            f"got {got}, expected {expected}", mistake="LogSumExp/jvp-in-float32")


def check_lse_own_max(function, device, spec) -> None:
    """At SHIFTED, dim=1: finite only for a shift by each slice's own max (HUGE passed)."""
    x = SHIFTED.to(device=device, dtype=torch.float64)
    out = run_forward(function, spec, {"x": x, "dim": 1}).output
    expected = torch.logsumexp(x, 1)
    if not torch.isfinite(out).all():
        raise GradingError(
            "LogSumExp's forward shifts by something other than the slice's own max: finite at "
            "(1000, 999, -1000) and (-1000, -999.5, -1000), it is not at (1000, -1000, -1000) "
            "and (-1000, 1000, 0): a positive exponent is left in the sum there (exp of more "
            "than 709 is inf in float64)", f"got {out.detach()}, expected {expected}",
            mistake="LogSumExp/shift-not-own-max")
    with case("x with the slices (1000, -1000, -1000) and (-1000, 1000, 0), dim=1"):
        diagnose_values("LogSumExp's output", out, expected)
