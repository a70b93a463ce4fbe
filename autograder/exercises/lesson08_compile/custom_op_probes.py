"""Lesson 08: softplus's slips with beta, each named only where the learner's output or
gradient is exactly that slip at every x (and the right answer is not)."""

import torch

from ...errors import GradingError


def _close(a, b) -> bool:
    return torch.allclose(a, b, rtol=1e-6, atol=1e-9)


def check_output_beta(out, expected, beta) -> None:
    """An output beta times too large or too small at every x: the 1/beta in front."""
    if beta == 1.0 or out.shape != expected.shape or _close(out, expected):
        return
    for factor, times, ask in ((beta, "beta", "where does yours divide by beta?"),
                               (1 / beta, "1/beta", "yours divides by beta twice: where?")):
        if _close(out, factor * expected):
            raise GradingError(
                f"softplus's output with beta={beta} is {times} times the right value at every x: "
                f"softplus(x, beta) is (1/beta) log(1 + e^(beta x)); {ask}",
                mistake="softplus/output-off-by-beta")


def check_beta_slips(got, expected, without_beta, beta) -> None:
    """Two slips with beta, each named only where the learner's gradient is exactly it."""
    if beta == 1.0 or not isinstance(got, torch.Tensor) or got.shape != expected.shape:
        return
    if _close(got, beta * expected) and not _close(got, expected):
        raise GradingError(
            "softplus's gradient is beta times too large at every x: count the betas in "
            "d/dx (1/beta) softplus(beta * x) again; at x = 0.5, beta = 4 the slope is 0.88080 "
            "(the number the live check of softplus's slope after the Summary accepts)",
            mistake="softplus/extra-beta-factor")
    if _close(got, expected / beta) and not _close(got, expected):
        raise GradingError(
            "softplus's gradient is beta times too small at every x: count the betas in "
            "d/dx (1/beta) softplus(beta * x) again, the chain rule through beta * x included; "
            "at x = 0.5, beta = 4 the slope is 0.88080 (the number the live check of "
            "softplus's slope after the Summary accepts)", mistake="softplus/missing-inner-beta")
    if _close(got, without_beta) and not _close(got, expected):
        raise GradingError(
            "softplus's gradient is the slope for beta = 1 at every x: beta has dropped out of "
            "the derivative; at x = 0.5, beta = 4 the slope is 0.88080, not 0.62246 (the number "
            "the live check of softplus's slope after the Summary accepts)",
            mistake="softplus/forgets-beta-in-sigmoid")
