"""Lesson 12: GradientReversal, ClipGradientNorm and SoftThreshold.

The first two change a gradient on purpose, so gradcheck would reject them by design: their
checks compare forward with ``x`` exactly and backward with the intended surgery, and name the
usual slips. SoftThreshold is a true derivative: gradcheck away from its kinks, the convention
at ``|x| == lam``, and ``lam``'s gradient summed to its shape by backward itself.
"""

import torch

from ...checks import (Spec, case, check_backward_by_hand, check_gradcheck, check_is_function,
                      check_no_ctx_tensors, check_untouched, check_values_and_gradients,
                      run_backward, run_forward)
from ...clauses import Clause
from ...contract import check_each_input_alone, covers
from ...diagnose import diagnose_gradient, diagnose_values
from ...domain import Case, Constant, Domain
from ...errors import GradingError
from ...exercise import Exercise, sample
from .surgery_checks import (SOFT, Intended, check_lam_summed, check_strided, kink_values,
                             matches, soft_ties, soft_values, strided_grad_output, surgery_case)

REVERSAL = Spec("GradientReversal", ("x", "alpha"), lambda x, alpha: x)
CLIP = Spec("ClipGradientNorm", ("x", "max_norm"), lambda x, max_norm: x)

# no 0-d x: no contract here names one
SHAPES = [(3, 4), (6,), (2, 3, 5), (4, 1)]
CLIP_SHAPES = [(8, 3), (2, 3, 4), (6,), (5, 3), (4, 1), (1, 7)]  # rows are the last dim
ALPHAS = [0.5, 2.0, 1.0, 0.0, -0.75]  # alpha is any Python float


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
    diagnose_gradient("x", got, expected)
    return forward, backward


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


# ClipGradientNorm ---------------------------------------------------------------------------

def clipped(grad_output: torch.Tensor, max_norm: float) -> torch.Tensor:
    """Each row (last dim) of norm above ``max_norm`` scaled down to norm ``max_norm``."""
    norms = torch.linalg.vector_norm(grad_output, dim=-1, keepdim=True)
    return torch.where(norms > max_norm, grad_output * (max_norm / norms), grad_output)


def clip_grad_output(shape, device, *, max_norm: float, seed: int = 0,
                     dtype=torch.float64) -> torch.Tensor:
    """Rows far below, far above, exactly at (3-4-5 scaled) and at zero norm, in turn."""
    grad = sample(shape, device, seed=seed, dtype=dtype)
    rows = grad.reshape(-1, shape[-1])
    for i in range(rows.shape[0]):
        kind = i % 4
        norm = torch.linalg.vector_norm(rows[i])
        if kind == 0:
            rows[i] *= 4 * max_norm / norm
        elif kind == 1:
            rows[i] *= 0.5 * max_norm / norm
        elif kind == 2 and shape[-1] >= 2:
            rows[i] = 0
            rows[i, :2] = torch.tensor([0.6, 0.8], dtype=dtype) * max_norm  # norm max_norm
        elif kind == 3:
            rows[i] = 0
    return rows.reshape(shape)


def check_clip(function, x: torch.Tensor, max_norm: float, *, seed: int = 0):
    grad_output = clip_grad_output(x.shape, x.device, max_norm=max_norm, seed=seed + 1,
                                   dtype=x.dtype)
    pristine = grad_output.clone()
    forward, backward = surgery_case(function, CLIP, x, max_norm, grad_output)
    got, expected = backward.grads[0], clipped(pristine, max_norm)
    total = torch.linalg.vector_norm(pristine)
    mistakes = [
        (pristine * min(1.0, max_norm / total.item()),
         "clips by the norm of the whole gradient, as clip_grad_norm_ does: clip each row "
         "(last dim) by its own L2 norm"),
        (pristine.clamp(-max_norm, max_norm),
         "clamps each element to [-max_norm, max_norm]: clip each row's L2 norm instead"),
        (pristine * max_norm / torch.linalg.vector_norm(pristine, dim=-1, keepdim=True)
         .clamp(min=1e-300),
         "scales every row to norm max_norm, the small ones up too: rows at or below max_norm "
         "pass unchanged"),
        (clipped(pristine, 1.0),
         "clips rows at norm 1 whatever max_norm is: where does max_norm enter your factor? "
         "my_clip_factor's live checker tries max_norm = 0.25 too"),
    ]
    if pristine.dim() >= 2:
        columns = torch.linalg.vector_norm(pristine, dim=-2, keepdim=True)
        mistakes.append((torch.where(columns > max_norm, pristine * (max_norm / columns),
                                     pristine),
                         "clips columns (the norm over dim -2): clip each row, the norm over "
                         "the last dim"))
    if isinstance(got, torch.Tensor) and got.shape == expected.shape:
        rows = torch.linalg.vector_norm(pristine, dim=-1) > 0  # a mistake may divide by 0 there
        for candidate, hint in mistakes:
            if matches(got[rows], candidate[rows], expected[rows]):
                raise GradingError(f"ClipGradientNorm {hint}", mistake={
                    "clips by the norm of the whole gradient": "ClipGradientNorm/whole-norm",
                    "clamps each element": "ClipGradientNorm/clamps-elements",
                    "scales every row to norm max_norm": "ClipGradientNorm/scales-small-rows-up",
                    "clips rows at norm 1 whatever": "ClipGradientNorm/ignores-max-norm",
                    "clips columns": "ClipGradientNorm/clips-columns"})
        if not torch.isfinite(got).all():
            raise GradingError("ClipGradientNorm's gradient has nan or inf where a row of "
                               "grad_output is all zeros: a row of norm 0 is below max_norm and "
                               "passes unchanged (divide only where the norm exceeds max_norm)",
                               mistake="ClipGradientNorm/nan-on-zero-row")
    # no eps: the factor is max_norm / norm to float64's rounding, at every max_norm (an eps
    # added to the norm, as torch.renorm's 1e-7, is 1e-7 / norm of the gradient, a relative
    # error an absolute tolerance hides once max_norm is small)
    if isinstance(got, torch.Tensor) and got.shape == expected.shape and \
            not torch.allclose(got, expected, rtol=1e-9, atol=0) and \
            torch.allclose(got, expected, rtol=1e-2, atol=0):
        raise GradingError(f"ClipGradientNorm's clipped rows are off by a relative "
                           f"{((got - expected).abs() / expected.abs().clamp(min=1e-300)).max():.1g}"
                           f" at max_norm={max_norm:g}: the factor is max_norm / norm exactly, "
                           "with nothing added to the norm (an eps, as torch.renorm's, shows once "
                           "the norms are small)", mistake="ClipGradientNorm/eps-in-norm")
    diagnose_gradient("x", got, expected)
    return forward, backward

INTENDED_CLIP = Spec("ClipGradientNorm", ("x", "max_norm"),
                     lambda x, max_norm: Intended.apply(x, max_norm, clipped))


def clip_full(ClipGradientNorm, device) -> None:
    function = check_is_function(ClipGradientNorm, CLIP)
    for seed, shape in enumerate(CLIP_SHAPES):
        for max_norm in (1.0, 0.25, 3.0, 1e-4):
            with case(f"x of shape {shape}, max_norm={max_norm}, rows of grad_output above, "
                      "below, at max_norm and zero"):
                _, backward = check_clip(function, sample(shape, device, seed=seed),
                                         max_norm, seed=seed)
    for edge in ("1-D x", "3-D x", "a row of zeros", "a row at max_norm exactly"):
        covers(edge)
    check_backward_by_hand(CLIP, backward)
    check_each_input_alone(function, INTENDED_CLIP, {"x": sample((5, 3), device), "max_norm": 1.0})
    grad_output = strided_grad_output((2, 4, 3), device, seed=6)
    check_strided(function, CLIP, {"x": sample((2, 4, 3), device), "max_norm": 1.0}, grad_output,
                  {"x": clipped(grad_output, 1.0)})


# SoftThreshold ------------------------------------------------------------------------------

WRONG_SIGN = ("SoftThreshold's gradient for lam has the wrong sign: raising lam moves every "
              "entry outside the threshold towards 0. Which way does y move for x > lam, and "
              "for x < -lam? my_soft_threshold_slopes, the derivation's live checker, "
              "checks yours")


def check_kinks(function, device, dtype=torch.float64) -> None:
    """At |x| == lam (and x == 0) both gradients are 0, as F.softshrink's."""
    values = kink_values(device, dtype=dtype)
    x, lam = values["x"], values["lam"]
    forward, backward = check_soft_case(function, values, seed=7, check_gradients=False)
    grad_x, grad_lam = backward.grads
    grad_output = torch.ones_like(x)
    outside = x.abs() > lam
    if isinstance(grad_x, torch.Tensor) and grad_x.isnan().any():
        raise GradingError("SoftThreshold's gradient for x is nan at |x| == lam: a division "
                           "such as relu(z) / z is 0/0 on the kink; build the mask with a "
                           "comparison instead of a division",
                           mistake="SoftThreshold/nan-at-kink")
    if isinstance(grad_x, torch.Tensor) and grad_x.shape == x.shape:
        if torch.equal(grad_x != 0, x.abs() >= lam) and not torch.equal(grad_x != 0, outside):
            raise GradingError("SoftThreshold's gradient for x is not 0 at |x| == lam: forward "
                               "is flat from there inwards, and the contract (as for "
                               "F.softshrink) takes 0 at the kink, but your backward lets "
                               "those entries through: which comparison leaves them out?",
                               mistake="SoftThreshold/passes-kink")
    diagnose_gradient("x", grad_x, grad_output * outside)
    expected_lam = -(grad_output * torch.sign(x) * outside).sum()
    right, counted = f"{expected_lam.item():g}", None
    slips = [  # on these values each slip gives its own number (kink_values)
        (-(grad_output * torch.sign(x) * (x.abs() >= lam)).sum(),
         "counts the entries at |x| == lam: there both gradients are 0, but your backward lets "
         "those entries through: which comparison leaves them out?"),
        (-(grad_output * outside).sum(),
         f"is {{got}}, -1 for each entry outside the threshold, where the right value is "
         f"{right}: does an entry below -lam move the same way as lam grows? "
         "my_soft_threshold_slopes, the derivation's live checker, checks your slopes"),
        (-(grad_output * torch.sign(x)).sum(),
         f"is {{got}}, -sum(sign(x)) over every entry, where the right value is {right}: an "
         "entry inside the threshold has y = 0 whatever lam is, so only the entries outside it "
         "count"),
    ]
    for candidate, hint in slips:
        if matches(grad_lam, candidate, expected_lam):
            counted = hint.format(got=f"{candidate.item():g}")
            break
    if counted:
        raise GradingError(f"SoftThreshold's gradient for lam {counted}", mistake={
            "counts the entries at |x| == lam": "SoftThreshold/lam-counts-kink",
            "-1 for each entry outside the threshold": "SoftThreshold/lam-without-sign",
            "over every entry": "SoftThreshold/lam-without-mask"})
    if matches(grad_lam, -expected_lam, expected_lam):
        raise GradingError(WRONG_SIGN, mistake="SoftThreshold/lam-wrong-sign")
    check_lam_not_averaged(function, values, grad_lam=grad_lam)
    diagnose_gradient("lam", grad_lam, expected_lam)


def check_soft_case(function, values: dict, *, seed=0, check_gradients=True, **tolerance):
    """Values and both gradients against autograd through the composed reference."""
    if check_gradients:
        forward, backward = check_values_and_gradients(function, SOFT, values, seed=seed,
                                                       **tolerance)
    else:
        leaf = values["x"].detach().clone().requires_grad_()
        lam = values["lam"].detach().clone().requires_grad_()
        forward = run_forward(function, SOFT, {"x": leaf, "lam": lam})
        diagnose_values("SoftThreshold's output", forward.output, SOFT.reference(**values))
        grad_output = torch.ones_like(values["x"])
        backward = run_backward(SOFT, forward.output, {"x": leaf, "lam": lam}, grad_output)
        check_untouched(SOFT, grad_output, torch.ones_like(grad_output))
    check_no_ctx_tensors(SOFT, forward)
    return forward, backward


def check_lam_not_averaged(function, values: dict, details=None, grad_lam=None) -> None:
    """Names a lam gradient (grad_output = 1; ``grad_lam`` or run here) that is a mean."""
    x, lam = (values[k].detach().clone().requires_grad_() for k in ("x", "lam"))
    try:
        if grad_lam is None:
            grad_lam, = torch.autograd.grad(function.apply(x, lam), lam, torch.ones_like(x))
    except Exception:  # noqa: BLE001 - a probe: the check that called it reports the failure
        return
    right, n = -(torch.sign(x) * (x.abs() > lam)).sum().detach(), x.numel()
    if n > 1 and matches(grad_lam, right / n, right):
        raise GradingError(f"SoftThreshold's gradient for lam is 1/{n} of the right one, and x "
                           f"has {n} entries: it averages over them, but each entry lam moves "
                           "adds its own share to the loss", details,
                           mistake="SoftThreshold/lam-averaged")


def check_soft(function, values: dict, *, seed=0, **tolerance) -> None:
    with case(f"x of shape {tuple(values['x'].shape)}, lam={values['lam'].item():g}"):
        try:
            _, backward = check_soft_case(function, values, seed=seed, **tolerance)
        except GradingError as error:
            if "for lam" in error.hint and "times -1" in error.hint:
                raise GradingError(WRONG_SIGN, error.details,
                                   mistake="SoftThreshold/lam-wrong-sign") from error
            if "for lam" in error.hint:
                check_lam_not_averaged(function, values, error.details)
            raise
        check_backward_by_hand(SOFT, backward)
        check_lam_summed(function, values)


def soft_full(SoftThreshold, device) -> None:
    function = check_is_function(SoftThreshold, SOFT)
    with case("x with entries exactly at +-lam and at 0, lam=0.5"):
        check_kinks(function, device)
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


REVERSAL_CLAUSES = (
    Clause("forward returns `x` unchanged in value (a view or a copy, never writing into `x`);",
           {"GradientReversal/modifies-x-in-place": "forward writes into x"}),
    Clause("backward returns your answer to question 2 for `x`, for `alpha` any Python float (0 "
           "and negative included), and `None` for `alpha`;",
           {"GradientReversal/no-reversal": "no reversal at all",
            "GradientReversal/forgets-alpha": "alpha forgotten",
            "GradientReversal/forgets-sign": "sign forgotten",
            "GradientReversal/ignores-grad-output": "grad_output left out",
            "GradientReversal/mishandles-negative-alpha": "negative alpha dropped",
            "GradientReversal/zeroes-small-alpha": "a small alpha taken for 0",
            "GradientReversal/gradient-for-non-tensor": "a gradient for alpha",
            "GradientReversal/writes-grad-output": "grad_output negated in place",
            "GradientReversal/state-on-class": "alpha kept on the class (issue 37)"}),
    Clause("forward saves no tensor.",
           {"GradientReversal/saves-tensors": "saves x",
            "GradientReversal/tensor-on-ctx": "alpha kept as a tensor on ctx"}),
)
CLIP_CLAUSES = (
    Clause("forward returns `x` unchanged in value (`x` has at least one dimension);",
           {"ClipGradientNorm/modifies-x-in-place": "forward writes into x"}),
    Clause("backward returns `grad_output` with every row (last dimension) of norm above "
           "`max_norm` scaled down to norm `max_norm`, by `max_norm / norm` exactly (no eps "
           "added to the norm, as in `PerSampleClippedLinear` later), the other rows unchanged, "
           "for `max_norm` any positive float; `None` for `max_norm`;",
           {"ClipGradientNorm/whole-norm": "global norm, as clip_grad_norm_",
            "ClipGradientNorm/ignores-max-norm": "factor ignores max_norm",
            "ClipGradientNorm/clamps-elements": "each element clamped",
            "ClipGradientNorm/scales-small-rows-up": "every row scaled to max_norm",
            "ClipGradientNorm/nan-on-zero-row": "nan on a row of zeros",
            "ClipGradientNorm/clips-columns": "columns clipped",
            "ClipGradientNorm/eps-in-norm": "renorm over flattened rows (its eps of 1e-7)",
            "ClipGradientNorm/state-on-class": "max_norm kept on the class (issue 37)",
            "raised:RuntimeError": "rows through .view"}),
    Clause("backward never writes into `grad_output`, and forward saves no tensor.",
           {"ClipGradientNorm/writes-grad-output": "scaled in place"}),
)
SOFT_CLAUSES = (
    Clause("forward returns $\\operatorname{sign}(x)\\max(|x| - \\lambda, 0)$ for `lam` a 0-d "
           "tensor that may require grad, and backward the gradients you derived: for `x`, and "
           "for `lam` summed to `lam`'s shape, both 0 at $|x| = \\lambda$;",
           {"SoftThreshold/passes-kink": "gradient 1 at |x| == lam",
            "SoftThreshold/lam-counts-kink": "lam's gradient alone counts the kink",
            "SoftThreshold/lam-wrong-sign": "lam's gradient with the wrong sign",
            "SoftThreshold/lam-gradient-not-summed": "lam's gradient not summed",
            "SoftThreshold/lam-averaged": "lam's gradient averaged",
            "SoftThreshold/lam-gradient-not-0d": "lam's gradient summed to shape (1,)",
            "SoftThreshold/nan-at-kink": "relu(z) / z as the slope",
            "SoftThreshold/lam-without-sign": "lam's gradient without sign(x) (issue 37)",
            "SoftThreshold/lam-without-mask": "lam's gradient without the mask (issue 37)"}),
    Clause("each gradient right when the other input needs none (the self-check runs `x` and "
           "`lam` each alone requiring grad);",
           {"SoftThreshold/gate-on-wrong-entry": "lam's gradient gated on needs_input_grad[0]"}),
    Clause("by hand (no autograd inside backward), without writing into `grad_output`, and with "
           "tensors saved only through `save_for_backward`.",
           {"SoftThreshold/asks-autograd": "autograd inside backward",
            "SoftThreshold/writes-grad-output": "grad_output masked in place",
            "SoftThreshold/tensor-on-ctx": "lam kept on ctx"}),
)

EXERCISES = [
    Exercise("GradientReversal", "12_surgery", reversal_full,
             contract=("alpha 0", "1-D x", "non-contiguous grad_output"),
             clauses=REVERSAL_CLAUSES,
             domain=Domain(INTENDED_REVERSAL, lambda device, dtype=torch.float64, seed=0,
                           alpha=0.5: {"x": sample((3, 4), device, seed=seed, dtype=dtype),
                                       "alpha": alpha},
                           constants={"alpha": Constant(-2.0, 2.0, "alpha any Python float, 0 "
                                                        "and negative included",
                                                        also=(0.0, 1e-4))})),
    Exercise("ClipGradientNorm", "12_surgery", clip_full,
             contract=("1-D x", "3-D x", "a row of zeros", "a row at max_norm exactly",
                       "non-contiguous grad_output"),
             clauses=CLIP_CLAUSES,
             domain=Domain(INTENDED_CLIP, lambda device, dtype=torch.float64, seed=0,
                           max_norm=1.0: {"x": sample((4, 5), device, seed=seed, dtype=dtype),
                                          "max_norm": max_norm},
                           constants={"max_norm": Constant(1e-4, 3.0, "max_norm a positive "
                                                           "Python float, 1e-4 as well as 3.0")})),
    Exercise("SoftThreshold", "12_surgery", soft_full,
             contract=("|x| == lam", "lam 0", "0-d lam", "non-contiguous grad_output"),
             clauses=SOFT_CLAUSES,
             domain=Domain(SOFT, lambda device, dtype=torch.float64, seed=0, lam=0.5: soft_values(
                               (3, 4), device, lam=lam, seed=seed, dtype=dtype),
                           constants={"lam": Constant(0.0, 2.0, "lam a 0-d tensor, a threshold "
                                                      ">= 0, its smallest magnitudes included",
                                                      also=(1e-4,))},
                           layout_inputs=("x",),
                           ties=Case(soft_ties, "at |x| == lam both gradients are 0 (as "
                                     "F.softshrink); one ulp off, those of its side"))),
]
