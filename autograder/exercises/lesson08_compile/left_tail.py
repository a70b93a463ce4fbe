"""Lesson 08: softplus in its left tail, where beta * x is very negative: the output and the
gradient are tiny but normal float64 numbers, compared to a relative 1e-5 with no absolute
floor, and the two ways of losing them that the lesson names (log instead of log1p, float32
inside; the slope from the saved output as 1 - exp(-beta s))."""

import torch

from ...diagnose import diagnose_values
from ...errors import GradingError
from ...exercise import sample

# beta, x: softplus is tiny; beta = 0.3 is not a float32 number (float32's 0.3 is 4e-8 above
# it), so a beta rounded to float32 moves beta * x = -700 by 2.8e-5, the slope e^(beta x) and
# the output by that relative amount, past the contract's 1e-5
LEFT_TAIL = [(1.0, (-40.0, -700.0, -30.0)), (2.5, (-16.0, -12.0)), (0.3, (-2333.0, -100.0))]


def check_left_tail(softplus, device, spec, explain) -> None:
    """Where beta * x is very negative, softplus is tiny but a normal float64 number: the same
    relative tolerance as elsewhere, with no absolute floor; then the gradient there. ``spec``
    holds the reference, ``explain`` turns an exception into the operator's hint."""
    for beta, points in LEFT_TAIL:
        x = torch.tensor(points, dtype=torch.float64, device=device)
        try:
            with torch.no_grad():
                got = softplus(x, beta)
        except Exception as error:
            raise explain("forward", error, softplus, beta) from error
        expected = spec.reference(x, beta)
        diagnose_values(f"softplus's output with beta={beta}", got, expected)
        if torch.allclose(got, expected, rtol=1e-5, atol=0):
            continue
        error = ((got - expected).abs() / expected)
        worst = int(torch.argmax(error))
        where = (f"at x = {points[worst]:g} with beta={beta} it returns {got[worst].item():.4g}, "
                 f"the true value is {expected[worst].item():.4g} (relative error "
                 f"{error[worst].item():.2g})")
        # each cause named only where the learner's values are it and the other's are not
        log_form = torch.log(1 + torch.exp(beta * x)) / beta
        narrow = spec.reference(x.float(), beta).double()
        apart = not torch.allclose(log_form, narrow, rtol=1e-6, atol=0)
        if apart and torch.allclose(got, log_form, rtol=1e-15, atol=0):
            raise GradingError(
                f"softplus loses the left tail: {where}; that is log(1 + e^(-|z|)) exactly, and "
                "1 + e^(-|z|) rounds to 1 once e^(-|z|) is below 1.1e-16, so the log is 0; "
                "torch.log1p(u) computes log(1 + u) without forming 1 + u",
                mistake="softplus/log-without-log1p")
        if _beta_rounded(got, expected, lambda b: spec.reference(x, b), beta):
            raise GradingError(
                f"softplus uses beta rounded to float32: {where}, which is the value for "
                f"beta = {_float32(beta):.12g}, float32's nearest number to {beta}; "
                "torch.tensor(beta) without dtype= makes a float32 tensor, and in the left tail "
                "e^(beta x) moves by that rounding times |beta x|: keep beta a Python float "
                "(or make it in x's dtype)", mistake="softplus/beta-rounded-to-float32")
        if apart and torch.allclose(got, narrow, rtol=1e-6, atol=0):
            ordinary = _relative_error(softplus, device, spec)
            raise GradingError(
                f"softplus computes in float32 for float64 x: on ordinary x it matches the "
                f"float64 value only to a relative {ordinary:.1g} (float32's precision), and "
                f"in the left tail it returns float32's value: {where}, since exp(beta * x) "
                "leaves float32's range below about -103; compute in x's dtype",
                mistake="softplus/computes-in-float32")
        raise GradingError(f"softplus loses the left tail: {where}; the contract asks for "
                           "about five significant digits far on the left (a relative 1e-5 "
                           "here)")
    for beta, points in LEFT_TAIL:
        check_left_tail_gradient(softplus, torch.tensor(points, dtype=torch.float64,
                                                        device=device), beta, spec, explain)


def check_left_tail_gradient(softplus, x, beta, spec, explain) -> None:
    """Where beta * x is very negative, the slope sigmoid(beta * x) is tiny but a normal float64
    number: the gradient to a relative 1e-5 too, with no absolute floor."""
    x = x.detach().clone().requires_grad_()
    try:
        got, = torch.autograd.grad(softplus(x, beta), x, torch.ones_like(x))
    except Exception as error:
        raise explain("backward", error, softplus, beta) from error
    expected = torch.sigmoid(beta * x.detach())
    if torch.allclose(got, expected, rtol=1e-5, atol=0):
        return
    error = (got - expected).abs() / expected
    worst = int(torch.argmax(error))
    where = (f"at x = {x[worst].item():g} with beta={beta} it returns {got[worst].item():.4g}, "
             f"the true slope sigmoid(beta * x) is {expected[worst].item():.4g} (relative error "
             f"{error[worst].item():.2g})")
    if _beta_rounded(got, expected, lambda b: torch.sigmoid(b * x.detach()), beta):
        raise GradingError(
            f"softplus's backward uses beta rounded to float32: {where}, which is the slope for "
            f"beta = {_float32(beta):.12g}, float32's nearest number to {beta}; "
            "torch.tensor(ctx.beta) without dtype= makes a float32 tensor, and in the left "
            "tail sigmoid(beta x) moves by that rounding times |beta x|: multiply by the Python "
            "float ctx.beta (or make it in x's dtype)", mistake="softplus/backward-beta-in-float32")
    # named only where the learner's gradient is 1 - exp(-beta * s) and the true slope is not
    cancelled = 1 - torch.exp(-beta * spec.reference(x.detach(), beta))
    if (not torch.allclose(cancelled, expected, rtol=1e-5, atol=0)
            and torch.allclose(got, cancelled, rtol=1e-12, atol=0)):
        raise GradingError(
            f"softplus's backward loses the left tail: {where}; that is 1 - exp(-beta * s) "
            "computed from the saved output s: where beta * x is very negative, s is tiny, "
            "exp(-beta * s) rounds near 1 and the subtraction cancels (to 0 once beta * s is "
            "below 5.6e-17). Which function of s computes 1 - e^(-u) without subtracting?",
            mistake="softplus/gradient-from-output-cancels")
    # named only where the learner's gradient is float32's slope and the true one is not
    narrow = torch.sigmoid(beta * x.detach().float()).double()
    if (not torch.allclose(narrow, expected, rtol=1e-5, atol=0)
            and torch.allclose(got, narrow, rtol=1e-6, atol=0)):
        raise GradingError(
            f"softplus's backward computes the slope in float32 for float64 x: {where}, which "
            "is float32's sigmoid(beta * x): below about -103 it leaves float32's range and "
            "rounds to 0 (or to a subnormal); compute the slope in x's dtype, as forward does",
            mistake="softplus/backward-in-float32")
    raise GradingError(f"softplus's gradient loses the left tail: {where}; the contract asks "
                       "for the gradient as accurate there as the value, about five significant "
                       "digits (a relative 1e-5 here)")


def _relative_error(softplus, device, spec) -> float:
    """The largest relative error of softplus on typical float64 x, beta = 1.5."""
    x = 2 * sample((3, 4), device, seed=8)
    with torch.no_grad():
        got = softplus(x, 1.5)
    expected = spec.reference(x, 1.5)
    return float(((got - expected).abs() / expected).max())


def _float32(beta: float) -> float:
    return torch.tensor(beta, dtype=torch.float32).item()


def _beta_rounded(got, expected, at, beta) -> bool:
    """Is ``got`` what ``at(beta)`` gives with beta rounded to float32, where that differs
    from the truth?"""
    if _float32(beta) == beta or not isinstance(got, torch.Tensor) or got.shape != expected.shape:
        return False
    rounded = at(_float32(beta))
    return (not torch.allclose(rounded, expected, rtol=1e-5, atol=0)
            and torch.allclose(got, rounded, rtol=1e-7, atol=0))
