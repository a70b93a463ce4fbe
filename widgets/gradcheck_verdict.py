"""What central differences can say of a backward (the Jacobian view's verdict): they are
exact only to a bound, the output's rounding divided by the step plus the truncation of the
step, and a float32 forward's rounding over a small step exceeds gradcheck's tolerance (issue
68). The view's eps judges where its bound is within the tolerance; else the smallest power of
ten up to LARGEST_EPS whose bound is; else a backward beyond the bound still disagrees, and one
within it cannot be judged."""

import math
from dataclasses import dataclass

import torch

ATOL, RTOL = 1e-5, 1e-3  # torch.autograd.gradcheck's defaults
# the steps tried when central differences at the view's eps cannot judge: every power of ten
# from the view's eps up to LARGEST_EPS
LARGEST_EPS = 1e-2
# ulps of its own dtype by which a forward's output may be off: a few roundings of the last
# operations (each half an ulp), so that two outputs' difference is off by twice as many
ROUNDING_ULPS = 4


AGREES_KIND, NOISY_KIND, DISAGREES, UNJUDGEABLE = "agrees", "noisy", "disagrees", "unjudgeable"
# forward changed an input in place: each call moves the input, so central differences of it
# cannot be taken at all (learner trial 81, issue 68)
CHANGES_INPUT = "changes-input"


@dataclass
class Verdict:
    """What central differences at step ``eps`` (``numerical``, within ``bound`` of the true
    slope per entry; None where not computed) say of one input's backward: ``kind`` is one of
    AGREES_KIND, NOISY_KIND (agrees only at a step larger than the view's), DISAGREES and
    UNJUDGEABLE (at no step exact enough, and backward within their error); CHANGES_INPUT where
    forward changes an input in place, and no verdict is drawn."""

    kind: str
    eps: float
    numerical: torch.Tensor
    bound: torch.Tensor | None


def error_bound(comparison, k: int, eps: float) -> torch.Tensor:
    """How far central differences at ``eps`` may be from the true slope, per entry: the
    output's rounding, ROUNDING_ULPS ulps of its dtype on each side, divided by the step (per
    row), plus the truncation, bounded by their change from 10 * eps (which holds the rounding
    at eps too, so that a forward rounded to fewer digits than its dtype is caught as well)."""
    rounding = ROUNDING_ULPS * comparison.ulps[k] / eps
    truncation = (comparison.numerical_at(eps)[k]
                  - comparison.numerical_at(10 * eps)[k]).abs()
    return (rounding.unsqueeze(1) + truncation).nan_to_num(nan=math.inf)


def judge(comparison, k: int) -> Verdict:
    """What central differences can say of input k's backward (a ``JacobianComparison``'s):
    the view's eps where they agree there; else the smallest step, from the view's eps up to
    LARGEST_EPS, whose error bound is within gradcheck's tolerance judges it (agrees, noisy:
    agrees only at a larger step, disagrees); where there is none, backward beyond a bound's
    reach (the tolerance on top) disagrees, else they cannot judge (at the step whose bound
    is nearest the tolerance). A forward that changes an input in place gets CHANGES_INPUT."""
    if comparison.changed:  # each call of forward moves its input: no differences to take
        return Verdict(CHANGES_INPUT, comparison.eps, comparison.numerical[k], None)
    analytic = comparison.analytic[k]
    if comparison.agrees(k) or comparison.measure is None or not analytic.numel():
        return Verdict(AGREES_KIND if comparison.agrees(k) else DISAGREES, comparison.eps,
                       comparison.numerical[k], None)
    steps = [comparison.eps] + [10.0 ** p for p in range(-12, 0)
                                if comparison.eps * 1.5 < 10.0 ** p <= LARGEST_EPS]
    best, best_ratio = None, math.inf
    for eps in steps:
        numerical = comparison.numerical_at(eps)[k]
        tolerance = ATOL + RTOL * numerical.abs()
        bound = error_bound(comparison, k, eps)
        difference = (analytic - numerical).abs().nan_to_num(nan=math.inf)
        if bool((bound <= tolerance).all()):  # exact enough to judge
            if bool((difference <= tolerance).all()):
                kind = AGREES_KIND if eps == comparison.eps else NOISY_KIND
            else:
                kind = DISAGREES
            return Verdict(kind, eps, numerical, bound)
        ratio = (bound / tolerance).max().item()
        if best is None or ratio < best_ratio:
            best, best_ratio = (eps, numerical, bound, tolerance, difference), ratio
    eps, numerical, bound, tolerance, difference = best
    beyond = bool((difference > bound + tolerance).any())
    return Verdict(DISAGREES if beyond else UNJUDGEABLE, eps, numerical, bound)
