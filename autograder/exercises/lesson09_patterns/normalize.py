"""Lesson 09, Normalize: a projection with a kink where a row's norm equals eps, so rows below eps
are checked against autograd through ``F.normalize``, never by finite differences across it
(the rows on either side of eps are built in ``normalize_rows.py``; what Normalize saves and
allocates is checked in ``normalize_memory.py``)."""

import torch
import torch.nn.functional as F

from ...checks import Spec, case, check_gradcheck, check_is_function
from ...contract import check_each_input_alone, covers
from ...domain import sampled
from ...errors import GradingError
from ...exercise import sample
from ..shared.layouts import check_noncontiguous_grad_output
from .normalize_memory import check_closed_form, check_saves_output_and_norms
from .normalize_rows import (BELOW, NEAR_ABOVE, NEAR_BELOW, around_eps, check_near_above,
                             near_above_rows, near_eps_rows, rows_around_eps)
from .pattern_cases import FLOAT32, described, gradient_for, graded_case, listed

NORMALIZE = Spec("Normalize", ("x", "eps"),
                 lambda x, eps: F.normalize(x, dim=-1, eps=eps))

# rows of one entry and a single row (a 0-d x, a row of one along dim=-1 as F.normalize takes
# it, is the domain's: autograder/empty_and_scalar.py)
NORMALIZE_SHAPES = [(4, 4), (5,), (2, 3, 4), (5, 1), (1, 6)]
EPS = 1e-12  # F.normalize's default


def check_projection(function, device) -> None:
    """The two named mistakes: no projection term, and no eps branch."""
    x = sample((3, 4), device, seed=2)
    try:
        got, truth, grad_output = gradient_for(function, NORMALIZE, {"x": x, "eps": EPS})
    except GradingError as error:
        check_row_quantity_kept(function, error, device)
        raise
    if isinstance(got, torch.Tensor) and got.shape == truth.shape and not torch.allclose(
            got, truth) and torch.allclose(got, grad_output / x.norm(dim=-1, keepdim=True)):
        raise GradingError("Normalize's backward is missing the projection term: grad_output / "
                           "norm is the derivative of x / norm with the norm held fixed, but "
                           "the norm moves with x too (with x of shape (3, 4))",
                           mistake="Normalize/missing-projection")
    for eps in (1e-2, 1e-12):
        check_sides_of_eps(function, *rows_around_eps(device, eps=eps))


def check_sides_of_eps(function, x: torch.Tensor, eps: float) -> None:
    """Rows far from eps and near it, on either side: the case each row takes, named."""
    got, truth, grad_output = gradient_for(function, NORMALIZE, {"x": x, "eps": eps})
    if not isinstance(got, torch.Tensor) or got.shape != truth.shape:
        return
    right = torch.isclose(got, truth).all(-1)
    # named only where the rows far above eps are right: a nan there is some other mistake
    if not right[:2].all() or right.all():
        return
    check_zero_row_finite(got, truth, eps, x, grad_output)
    if right[BELOW].all():
        check_near_above(x[NEAR_ABOVE], got[NEAR_ABOVE], truth[NEAR_ABOVE],
                         grad_output[NEAR_ABOVE], eps)
    y, g = x[BELOW] / eps, grad_output[BELOW]  # the rows below eps
    projected = (g - y * (y * g).sum(-1, keepdim=True)) / eps
    as_above = torch.isclose(got[BELOW], projected).all(-1)
    if right[2:4].all() and (as_above[2:] & ~right[NEAR_BELOW]).any():
        check_boundary_below_eps(function, x, eps)
    every = ("; every row below eps got the projection of a row above it: no test in backward, "
             "or one that always holds (max(norm, eps) >= eps does; test the norm itself)"
             if as_above.all() else "")
    raise GradingError("Normalize's gradient is wrong on rows whose norm is below eps: there "
                       f"y = x / eps, and eps does not move with x{every} ({around_eps(eps)})",
                       mistake="Normalize/wrong-below-eps")


ZERO_ROW = 3  # the row of zeros among rows_around_eps


# rows of rows_around_eps below eps with a norm above 0, far enough from eps to take its side
OTHER_BELOW = [2, 4]


def check_zero_row_finite(got: torch.Tensor, truth: torch.Tensor, eps: float,
                          x: torch.Tensor, grad_output: torch.Tensor) -> None:
    """A nan or inf on the row of zeros, where the truth is grad_output / eps: what the other
    rows below eps got proves why. The derivative of x / norm there (the clamp ignored) or
    grad_output / norm divide by the norm, 0 on that row; right there, the case above eps was
    computed on every row, dividing by the norm, and mixed in by arithmetic (0 x inf is nan).
    Otherwise nothing is named here: the rows below eps are wrong, which the caller says."""
    if torch.isfinite(got[ZERO_ROW]).all() or not torch.isfinite(truth[ZERO_ROW]).all():
        return
    seen = ("Normalize's gradient is wrong on rows whose norm is below eps: nan or inf on the "
            "row of zeros (norm 0), where autograd's is finite (grad_output / eps)")
    detail = f"got {listed(got[ZERO_ROW])}\nexpected {listed(truth[ZERO_ROW])}"
    rows, g = x[OTHER_BELOW], grad_output[OTHER_BELOW]
    norm = rows.norm(dim=-1, keepdim=True)
    unit = rows / norm
    unclamped = (g - unit * (unit * g).sum(-1, keepdim=True)) / norm
    if torch.allclose(got[OTHER_BELOW], unclamped):
        raise GradingError(f"{seen}, and on the other rows below eps it is the derivative of "
                           "x / norm, the formula of the rows above eps, as if the norm were "
                           "not clamped at eps: below eps y = x / eps, and eps does not move "
                           "with x; x / norm's derivative divides by the norm, 0 on the row of "
                           f"zeros ({around_eps(eps)})", detail,
                           mistake="Normalize/unclamped-below-eps")
    if torch.allclose(got[OTHER_BELOW], g / norm):
        raise GradingError(f"{seen}, and on the other rows below eps it is grad_output / norm, "
                           "not grad_output / eps: below eps the divisor is eps (max(norm, "
                           "eps)), and dividing by the norm divides by 0 on the row of zeros "
                           f"({around_eps(eps)})", detail,
                           mistake="Normalize/divides-by-norm-below-eps")
    if not torch.allclose(got[OTHER_BELOW], truth[OTHER_BELOW]):
        return
    raise GradingError("Normalize's gradient holds nan or inf on a row of zeros (norm 0, below "
                       "eps), where autograd's is finite, and is right on the other rows below "
                       "eps: the formula above eps, which divides by the norm, was computed on "
                       "this row too and mixed in by arithmetic (multiplied by a mask of 0, or "
                       "added), and 0 x inf and 0 x nan are nan: keep the division by 0 from "
                       f"happening on the row at all ({around_eps(eps)})", detail,
                       mistake="Normalize/nan-on-zero-row")


# norms below eps, as fractions of it, between the far row (0.1 eps, right) and eps: where the
# test in backward draws its line, when it draws one below eps
LADDER = (0.2, 0.3, 0.4, 0.55, 0.7, 0.8, 0.9, 0.95, 0.97, 0.985, 0.99, 0.995, 0.999)


def check_boundary_below_eps(function, x: torch.Tensor, eps: float) -> None:
    """Rows just below eps given the projection of a row above it, those far below right: the
    line backward draws lies below eps. Rows on a ladder of norms below eps find where, and the
    hint says it: a margin on the norm (norm > c eps) and |y| against c (below eps
    |y| = norm / eps) draw the same line, so the hint names both."""
    direction = F.normalize(sample((5,), x.device, seed=8, dtype=x.dtype), dim=-1)
    ratios = torch.tensor(LADDER, dtype=x.dtype, device=x.device)
    rows = direction * (ratios * eps).unsqueeze(-1)
    got, truth, g = gradient_for(function, NORMALIZE, {"x": rows, "eps": eps})
    y = rows / eps
    projected = (g - y * (y * g).sum(-1, keepdim=True)) / eps
    misplaced = (torch.isclose(got, projected).all(-1) & ~torch.isclose(got, truth).all(-1))
    misplaced = misplaced.tolist()
    if not misplaced[-1]:
        first = None
    else:  # the lowest row of the run of misplaced rows that reaches eps
        first = len(LADDER) - 1
        while first > 0 and misplaced[first - 1]:
            first -= 1
    ladder = ", ".join(f"{r:g}" for r in LADDER)
    if first is None:
        where = "a row just below eps takes the projection of a row above it"
    else:
        below = 0.1 if first == 0 else LADDER[first - 1]
        where = (f"every row from {LADDER[first]:g} eps up to eps takes the projection of a row "
                 f"above it, and the rows at {below:g} eps and below take their own: the line "
                 f"your backward draws between the cases lies between {below:g} eps and "
                 f"{LADDER[first]:g} eps, not at eps")
    raise GradingError(f"Normalize's gradient is wrong on rows just below eps: {where}. A "
                       "margin on the norm (norm > c * eps, c below 1) draws such a line, and so "
                       "does |y| > c, since below eps |y| = norm / eps: compare the norm "
                       "forward compared with eps itself "
                       f"({around_eps(eps)}; then rows of norms {ladder} eps)",
                       f"misplaced rows (ladder order): {misplaced}",
                       mistake="Normalize/boundary-below-eps")


def check_row_quantity_kept(function, error: GradingError, device) -> None:
    """Shapes that do not broadcast with three rows, yet a right gradient on one row: a
    per-row quantity of shape (3,) met a tensor of shape (3, 4), lined up with its last dim."""
    if "do not broadcast" not in error.hint:
        return
    try:
        got, truth, _ = gradient_for(function, NORMALIZE, {"x": sample((1, 4), device), "eps": EPS})
    except GradingError:
        return
    if isinstance(got, torch.Tensor) and got.shape == truth.shape and torch.allclose(got, truth):
        raise GradingError("Normalize's backward is right on a single row, but with x of shape "
                           "(3, 4) its shapes do not broadcast: a per-row quantity of shape (3,) "
                           "met a tensor of shape (3, 4), which lines it up with the last dim; "
                           "keep the dim it was reduced over (keepdim=True)", error.hint,
                           mistake="Normalize/row-quantity-lost-dim") from error


def normalize_case(function, x, eps, layout="") -> None:
    values = {"x": x, "eps": eps}
    with case(described(values, x.dtype) + layout):
        forward, _ = graded_case(function, NORMALIZE, values, FLOAT32 if x.dtype == torch.float32
                                 else None)
        check_saves_output_and_norms(forward, x)


def normalize_opening(Normalize, device="cpu") -> None:
    function = check_is_function(Normalize, NORMALIZE)
    check_projection(function, device)
    normalize_case(function, sample((4, 4), device), EPS)
    normalize_case(function, *rows_around_eps(device))
    normalize_case(function, sample((3, 4), device, seed=2, dtype=torch.float32), 1e-2)
    check_closed_form(function, device, EPS)
    check_gradcheck(function, NORMALIZE, {"x": sample((3, 4), device, seed=1), "eps": EPS})


def normalize_full(Normalize, device) -> None:
    normalize_opening(Normalize, device)
    # no row within a few roundings of eps is graded: the contract accepts either side there
    for seed, shape in enumerate(NORMALIZE_SHAPES):
        normalize_case(Normalize, sample(shape, device, seed=seed), EPS)
    # rows that a flattening view cannot reach: x of (3, 2, 4) with its leading dims swapped
    normalize_case(Normalize, sample((3, 2, 4), device, seed=5).transpose(0, 1), EPS,
                   ", x a (3, 2, 4) tensor transposed in dims 0 and 1, not contiguous")
    for edge in ("rows below eps and a row of zeros", "1-D x",
                 "saves the output and one norm per row", "closed form"):
        covers(edge)
    check_each_input_alone(Normalize, NORMALIZE, {"x": sample((3, 4), device), "eps": EPS})
    check_noncontiguous_grad_output(Normalize, NORMALIZE, {"x": sample((3, 4), device),
                                                           "eps": EPS})
    check_gradcheck(Normalize, NORMALIZE, {"x": sample((2, 3, 4), device), "eps": 1e-2})

# the domains: float64 and float32 (each check in both), every layout of x
_TYPICAL_NORMALIZE = sampled(NORMALIZE, {"x": (3, 4)}, {"eps": 1e-2})


def normalize_values(device, dtype=torch.float64, seed=0, **constants) -> dict:
    """x (3, 4) whose third row has norm 1e-4 (above eps at 1e-12 and 6.6e-8, below it at 1e-3
    and 10, where the two rows before it are below it too), then two rows just below eps,
    then two just above it (three where eps <= 1e-8: near_above_rows)."""
    values = _TYPICAL_NORMALIZE(device, dtype, seed, **constants)
    x = values["x"].clone()
    x[2] = F.normalize(x[2], dim=-1) * 1e-4
    eps, width = values["eps"], x.shape[-1]
    below = near_eps_rows(eps, width, x.device, dtype, seed=seed + 6)
    above = near_above_rows(eps, width, x.device, dtype, seed=seed + 7)
    return {**values, "x": torch.cat([x, below, above])}
