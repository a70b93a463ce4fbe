"""Lesson 12: GradientReversal, ClipGradientNorm and SoftThreshold.

The first two change a gradient on purpose, so gradcheck would reject them by design: their
checks compare forward with ``x`` exactly and backward with the intended surgery, and name the
usual slips. SoftThreshold is a true derivative: gradcheck away from its kinks, the convention
at ``|x| == lam``, and ``lam``'s gradient summed to its shape by backward itself.
"""

import torch

from ...checks import (Spec, case, check_backward_by_hand, check_gradcheck, check_is_function)
from ...contract import check_each_input_alone, covers
from ...diagnose import diagnose_gradient
from ...domain import Case, Constant, Domain
from ...errors import GradingError
from ...exercise import Exercise, sample
from ...precision import rounded_to_float32
from .soft_threshold_checks import (check_kinks, check_saves_no_x, check_small_y, check_soft,
                                    check_zero_at_lam_zero)
from .surgery_checks import (SOFT, Intended, check_strided, matches, soft_ties, soft_values, strided_grad_output, surgery_case)
from .contracts import REVERSAL_CLAUSES, CLIP_CLAUSES, SOFT_CLAUSES

REVERSAL = Spec("GradientReversal", ("x", "alpha"), lambda x, alpha: x)
CLIP = Spec("ClipGradientNorm", ("x", "max_norm"), lambda x, max_norm: x)

# no 0-d x: no contract here names one
SHAPES = [(3, 4), (6,), (2, 3, 5), (4, 1)]
CLIP_SHAPES = [(8, 3), (2, 3, 4), (6,), (5, 3), (4, 1), (1, 7)]  # rows are the last dim
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
    ]
    squares = (pristine * pristine).sum(-1, keepdim=True)
    squared = torch.where(squares > max_norm, pristine * (max_norm / squares.sqrt()), pristine)
    at_one = clipped(pristine, 1.0)
    if not torch.allclose(at_one, pristine) and not torch.allclose(at_one, squared):
        # only where clipping at 1 is neither no clipping nor the squared comparison
        mistakes.append((at_one, "clips rows at norm 1 whatever max_norm is: where does max_norm "
                                 "enter your factor? Hint 4's rows at max_norm = 2 show it"))
    mistakes.append((squared, f"compares each row's squared norm with max_norm: at "
                              f"max_norm={max_norm:g} it misjudges the rows whose norm lies "
                              "between max_norm and sqrt(max_norm). Compare the norm with "
                              "max_norm (or the squared norm with max_norm ** 2)"))
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
                    "compares each row's squared norm": "ClipGradientNorm/squared-norm-compared",
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
        off = f"{((got - expected).abs() / expected.abs().clamp(min=1e-300)).max():.1g}"
        rounded = float(torch.tensor(max_norm, dtype=torch.float32))
        if rounded != max_norm and torch.allclose(got, clipped(pristine, rounded), rtol=1e-12,
                                                  atol=0):
            raise GradingError(f"ClipGradientNorm computes with a float32 constant in float64 "
                               f"arithmetic: its clipped rows are off by a relative {off} at "
                               f"max_norm={max_norm:g}, exactly what max_norm rounded to float32 "
                               "gives. Which tensor holds max_norm, and in what dtype?",
                               mistake="ClipGradientNorm/float32-constant")
        grown = (got.abs() - expected.abs()) / expected.abs().clamp(min=1e-300)
        if grown.max() > 1e-12 and grown.abs().max() < 2 ** -22:  # an eps only shrinks a row
            raise GradingError(f"ClipGradientNorm computes a step in float32 in float64 "
                               f"arithmetic: its clipped rows are off by a relative {off} at "
                               f"max_norm={max_norm:g}, some of them too long (an eps added to "
                               "the norm only shortens them), float32's rounding. Which of your "
                               "tensors is float32?", mistake="ClipGradientNorm/float32-step")
        raise GradingError(f"ClipGradientNorm's clipped rows are off by a relative {off} at "
                           f"max_norm={max_norm:g}: the factor is max_norm / norm exactly, "
                           "with nothing added to the norm (an eps, as torch.renorm's, shows once "
                           "the norms are small)", mistake="ClipGradientNorm/eps-in-norm")
    diagnose_gradient("x", got, expected)
    return forward, backward

def check_tiny_rows(function, device) -> None:
    """Rows of norm 5e-13 and 5e-14, non-zero and below max_norm, pass unchanged: a clamp of
    the norm at 1e-12 (F.normalize's) or an eps scales them, far below any tolerance's notice."""
    grad_output = torch.tensor([[3e-13, 4e-13, 0.0], [0.0, 3e-14, 4e-14], [3.0, 0.0, 4.0],
                                [0.0, 0.0, 0.0]], dtype=torch.float64, device=device)
    for max_norm in (1.0, 1e-4):
        with case(f"x of shape (4, 3), max_norm={max_norm:g}, rows of norm 5e-13 and 5e-14"):
            _, backward = surgery_case(function, CLIP, sample((4, 3), device, seed=40), max_norm,
                                       grad_output.clone())
            got = backward.grads[0]
            for row, norm in ((0, "5e-13"), (1, "5e-14")):
                if isinstance(got, torch.Tensor) and got.shape == grad_output.shape and \
                        not torch.allclose(got[row], grad_output[row], rtol=1e-9, atol=0):
                    raise GradingError(
                        f"ClipGradientNorm changed a row of norm {norm}, below "
                        f"max_norm={max_norm:g}: it returns {got[row].tolist()} for "
                        f"{grad_output[row].tolist()}. A clamp or an eps on the norm (as "
                        "F.normalize's 1e-12) scales every row below it; a row at or below "
                        "max_norm passes unchanged", mistake="ClipGradientNorm/changes-tiny-row")
            diagnose_gradient("x", got, clipped(grad_output, max_norm))
    check_tiny_max_norm(function, device, grad_output)


def check_tiny_max_norm(function, device, grad_output) -> None:
    """max_norm any positive float: at max_norm = 1e-13 the row of norm 5e-13 is brought to norm
    1e-13 exactly; a clamp of the norm at 1e-12 (F.normalize's), harmless at max_norm >= 1e-12,
    makes it 5e-14."""
    max_norm = 1e-13
    with case(f"x of shape (4, 3), max_norm={max_norm:g}, rows of norm 5e-13 and 5e-14"):
        _, backward = surgery_case(function, CLIP, sample((4, 3), device, seed=41), max_norm,
                                   grad_output.clone())
        got = backward.grads[0]
        if isinstance(got, torch.Tensor) and got.shape == grad_output.shape:
            norm = torch.linalg.vector_norm(got[0]).item()
            if torch.isfinite(got[0]).all() and not abs(norm / max_norm - 1) <= 1e-9:
                raise GradingError(
                    f"ClipGradientNorm brings a row of norm 5e-13 to norm {norm:.3g}, not to "
                    f"max_norm={max_norm:g}: max_norm may be any positive float, and a clamp or "
                    "an eps on the norm (as F.normalize's 1e-12) changes the factor of every row "
                    "whose norm lies below it. The factor is max_norm / norm, with the norm "
                    "itself", mistake="ClipGradientNorm/clamps-norm")
        diagnose_gradient("x", got, clipped(grad_output, max_norm))


INTENDED_CLIP = Spec("ClipGradientNorm", ("x", "max_norm"),
                     lambda x, max_norm: Intended.apply(x, max_norm, clipped))


def clip_full(ClipGradientNorm, device) -> None:
    function = check_is_function(ClipGradientNorm, CLIP)
    for seed, shape in enumerate(CLIP_SHAPES):
        for max_norm in (1.0, 3.0, 0.25, 1e-4):  # 3.0 before 0.25: see check_clip
            with case(f"x of shape {shape}, max_norm={max_norm}, rows of grad_output above, "
                      "below, at max_norm and zero"):
                _, backward = check_clip(function, sample(shape, device, seed=seed),
                                         max_norm, seed=seed)
    for edge in ("1-D x", "3-D x", "a row of zeros", "a row at max_norm exactly"):
        covers(edge)
    check_tiny_rows(function, device)
    check_backward_by_hand(CLIP, backward)
    check_each_input_alone(function, INTENDED_CLIP, {"x": sample((5, 3), device), "max_norm": 1.0})
    grad_output = strided_grad_output((2, 4, 3), device, seed=6)
    check_strided(function, CLIP, {"x": sample((2, 4, 3), device), "max_norm": 1.0}, grad_output,
                  {"x": clipped(grad_output, 1.0)})


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
    check_small_y(function, device)


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
