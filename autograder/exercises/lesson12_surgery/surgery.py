"""Lesson 12: GradientReversal, ClipGradientNorm and SoftThreshold.

The first two change a gradient on purpose, so gradcheck would reject them by design: their
checks compare forward with ``x`` exactly and backward with the intended surgery, and name the
usual slips. SoftThreshold is a true derivative: gradcheck away from its kinks, the convention
at ``|x| == lam``, and ``lam``'s gradient a sum (of lam's shape, or of x's shape for the engine
to sum: rule 2 of the Function contract).
"""

import torch

from ...checks import (Spec, case, check_backward_by_hand, check_gradcheck, check_is_function)
from ...contract import check_each_input_alone, covers
from ...diagnose import diagnose_gradient
from ...domain import Case, Constant, Domain
from ...errors import GradingError
from ...exercise import Exercise, sample
from ...precision import rounded_to_float32
from .soft_threshold_checks import (check_finite_casts, check_kinks, check_saves_no_x,
                                    check_small_y, check_soft, check_zero_at_lam_zero)
from .surgery_checks import (SOFT, Intended, check_strided, matches, soft_ties, soft_values, strided_grad_output, surgery_case)
from .clip_gradient_norm import INTENDED_CLIP, clip_full

REVERSAL = Spec("GradientReversal", ("x", "alpha"), lambda x, alpha: x)

# no 0-d x: no contract here names one
SHAPES = [(3, 4), (6,), (2, 3, 5), (4, 1)]
ALPHAS = [0.5, 2.0, 1.0, 0.0, -0.75, 0.3]  # any Python float; 0.3 is no float32 number


# GradientReversal ---------------------------------------------------------------------------

def check_reversal(function, x: torch.Tensor, alpha: float, *, seed: int = 0):
    grad_output = sample(x.shape, x.device, seed=seed + 1, dtype=x.dtype)
    pristine = grad_output.clone()
    forward, backward = surgery_case(function, REVERSAL, x, alpha, grad_output)
    got, expected = backward.grads[0], -alpha * pristine
    if x.numel() > 1 and alpha > 0 and alpha != 1.0:  # where each slip has its own value
        # each hint says what was measured, never the line that fixes it
        if matches(got, pristine, expected):
            raise GradingError(f"GradientReversal passes grad_output through unchanged: with "
                               f"alpha={alpha} its gradient for x is grad_output times 1, so "
                               "the features still help the critic and alpha plays no part",
                               mistake="GradientReversal/no-reversal")
        if matches(got, -pristine, expected):
            raise GradingError(f"GradientReversal forgets alpha: with alpha={alpha} its "
                               "gradient for x is grad_output times -1, the same factor for "
                               "every alpha. The sign is right; what should set the size?",
                               mistake="GradientReversal/forgets-alpha")
        if matches(got, alpha * pristine, expected):
            raise GradingError(f"GradientReversal forgets the sign: with alpha={alpha} its "
                               f"gradient for x is grad_output times {alpha}, so the features "
                               "help the critic. The size is right; which function of L_d "
                               "must the features descend on?",
                               mistake="GradientReversal/forgets-sign")
        if matches(got, torch.full_like(pristine, -alpha), expected):
            raise GradingError(f"GradientReversal's backward ignores grad_output: with "
                               f"alpha={alpha} every element of its gradient for x is "
                               f"{-alpha}, whatever grad_output holds (the chain rule "
                               "multiplies by what came in)",
                               mistake="GradientReversal/ignores-grad-output")
    zero = isinstance(got, torch.Tensor) and got.shape == expected.shape and not got.any()
    if alpha < 0 and (zero or matches(got, -expected, expected)):
        what = "0" if zero else f"grad_output times {alpha}, the expected gradient times -1,"
        raise GradingError(f"GradientReversal returns {what} for alpha={alpha}: alpha is any "
                           "Python float, negative too, and a negative alpha sends the gradient "
                           "on unreversed, scaled by |alpha|",
                           mistake="GradientReversal/mishandles-negative-alpha")
    check_float32_reversal(got, alpha, pristine, expected)
    diagnose_gradient("x", got, expected)
    return forward, backward


def check_float32_reversal(got, alpha: float, grad_output, expected) -> None:
    """-alpha * grad_output with alpha rounded to float32 (torch.tensor(alpha) without dtype=),
    or the whole gradient rounded to float32 (the engine casts it back to float64 silently):
    both within any loose tolerance, so named before one is applied."""
    if not isinstance(got, torch.Tensor) or got.shape != expected.shape or \
            got.dtype != torch.float64 or torch.allclose(got, expected, rtol=1e-13, atol=0):
        return
    rounded = float(torch.tensor(alpha, dtype=torch.float32))
    if rounded != alpha and torch.allclose(got, -rounded * grad_output, rtol=1e-13, atol=0):
        raise GradingError(f"GradientReversal computes with alpha as a float32 tensor: its "
                           f"gradient for x at alpha={alpha:g} is exactly what alpha rounded to "
                           "float32 gives, a relative error of 1e-8. Which tensor holds alpha, "
                           "and in what dtype?", mistake="GradientReversal/float32-constant")
    if rounded_to_float32(got, expected):
        raise GradingError(f"GradientReversal's gradient for x at alpha={alpha:g} is float32 "
                           "numbers throughout, where the true gradient has float64's digits: "
                           "a step ran in float32 (a .float(), a tensor made without dtype=), "
                           "and the engine cast the result back to float64",
                           mistake="GradientReversal/float32-gradient")


def check_tiny_alpha(function, device) -> None:
    """alpha any Python float, however small: at 1e-12 and 1e-300 the gradient is -alpha times
    grad_output to float64's rounding (an absolute tolerance would take any tiny gradient,
    0 too, for it; a threshold on alpha's size zeroes real gradients)."""
    x = sample((3, 4), device, seed=31)
    for alpha in (1e-12, -1e-12, 1e-300):
        grad_output = sample((3, 4), device, seed=32)
        with case(f"x of shape (3, 4), alpha={alpha:g}"):
            _, backward = surgery_case(function, REVERSAL, x, alpha, grad_output.clone())
            got = backward.grads[0]
            expected = -alpha * grad_output
            check_float32_reversal(got, alpha, grad_output, expected)
            if isinstance(got, torch.Tensor) and got.shape == expected.shape and \
                    not torch.allclose(got, expected, rtol=1e-9, atol=0):
                what = "0" if not got.any() else "not -alpha times grad_output"
                raise GradingError(f"GradientReversal's gradient for x is {what} at "
                                   f"alpha={alpha:g}: alpha is any Python float, however "
                                   "small, and the gradient stays -alpha times grad_output "
                                   "(no threshold on alpha's size)",
                                   mistake="GradientReversal/zeroes-small-alpha")


INTENDED_REVERSAL = Spec("GradientReversal", ("x", "alpha"), lambda x, alpha: Intended.apply(
    x, alpha, lambda grad_output, alpha: -alpha * grad_output))


def reversal_full(GradientReversal, device) -> None:
    function = check_is_function(GradientReversal, REVERSAL)
    for seed, shape in enumerate(SHAPES):
        for alpha in ALPHAS:
            with case(f"x of shape {shape}, alpha={alpha}"):
                _, backward = check_reversal(function, sample(shape, device, seed=seed),
                                             alpha, seed=seed)
    covers("alpha 0")
    covers("1-D x")
    check_tiny_alpha(function, device)
    check_backward_by_hand(REVERSAL, backward)
    check_each_input_alone(function, INTENDED_REVERSAL, {"x": sample((3, 4), device), "alpha": 0.5})
    grad_output = strided_grad_output((3, 4), device, seed=5)
    check_strided(function, REVERSAL, {"x": sample((3, 4), device), "alpha": 1.5}, grad_output,
                  {"x": -1.5 * grad_output})


# SoftThreshold ------------------------------------------------------------------------------


def soft_full(SoftThreshold, device) -> None:
    function = check_is_function(SoftThreshold, SOFT)
    with case("x with entries exactly at +-lam and at 0, lam=0.5"):
        check_kinks(function, device)
    with case("x with entries exactly 0, lam=0"):
        check_zero_at_lam_zero(function, device)
    covers("|x| == lam")
    for seed, shape in enumerate(SHAPES):
        for lam in (0.5, 0.0, 1.2):
            check_soft(function, soft_values(shape, device, lam=lam, seed=seed), seed=seed)
    covers("lam 0")
    covers("0-d lam")
    check_gradcheck(function, SOFT, soft_values((2, 3), device, seed=1))
    check_each_input_alone(function, SOFT, soft_values((3, 4), device, seed=4))  # lam frozen too
    values = soft_values((3, 4), device, seed=5)
    grad_output = strided_grad_output((3, 4), device, seed=8)
    mask = values["x"].abs() > values["lam"]
    check_strided(function, SOFT, values, grad_output,
                  {"x": grad_output * mask, "lam": -(grad_output * torch.sign(values["x"]) * mask).sum()})
    with case("x of shape (3, 4), lam=0.5: what forward saves"):
        check_saves_no_x(function, values)
    # saves too much in float32: a float64 code is 8 bytes per entry, above float32's one number
    with case("x of shape (3, 4) in float32, lam=0.5: what forward saves"):
        check_saves_no_x(function, {name: value.float() for name, value in values.items()})
    with case("x with entries at +-lam, at 0 and inside the threshold, lam=0.5: what forward "
              "computes"):
        check_finite_casts(function, device)
    check_small_y(function, device)


EXERCISES = [
    Exercise("GradientReversal", "12_surgery", reversal_full,
             contract=("alpha 0", "1-D x", "non-contiguous grad_output"),
             domain=Domain(INTENDED_REVERSAL, lambda device, dtype=torch.float64, seed=0,
                           alpha=0.5: {"x": sample((3, 4), device, seed=seed, dtype=dtype),
                                       "alpha": alpha},
                           constants={"alpha": Constant(-2.0, 2.0, "alpha any Python float, 0 "
                                                        "and negative included",
                                                        also=(0.0, 1e-4))})),
    Exercise("ClipGradientNorm", "12_surgery", clip_full,
             contract=("1-D x", "3-D x", "a row of zeros", "a row at max_norm exactly",
                       "non-contiguous grad_output",
                       "float32 and float16 rows at the edges of their range"),
             domain=Domain(INTENDED_CLIP, lambda device, dtype=torch.float64, seed=0,
                           max_norm=1.0: {"x": sample((4, 5), device, seed=seed, dtype=dtype),
                                          "max_norm": max_norm},
                           dtypes=(torch.float64, torch.float32, torch.float16),
                           constants={"max_norm": Constant(1e-3, 1e3, "max_norm a Python "
                                                           "float from 1e-3 to 1e3")},
                           # the contract clips rows: a 0-d x has none
                           zero_dim=False, empty_and_scalar_clause="an empty batch of rows")),
    Exercise("SoftThreshold", "12_surgery", soft_full,
             contract=("|x| == lam", "lam 0", "0-d lam", "non-contiguous grad_output"),
             domain=Domain(SOFT, lambda device, dtype=torch.float64, seed=0, lam=0.5: soft_values(
                               (3, 4), device, lam=lam, seed=seed, dtype=dtype),
                           constants={"lam": Constant(0.0, 2.0, "lam a 0-d tensor, a threshold "
                                                      ">= 0, its smallest magnitudes included",
                                                      also=(1e-4,))},
                           layout_inputs=("x",),
                           ties=Case(soft_ties, "at |x| == lam both gradients are 0 (as "
                                     "F.softshrink); one ulp off, those of its side"))),
]
