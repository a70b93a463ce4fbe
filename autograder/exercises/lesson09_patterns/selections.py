"""Lesson 09, selections and a normalisation: IndexSelect and Normalize. Normalize has a kink
where a row's norm equals eps, so rows below eps are checked against autograd through
``F.normalize``, never by finite differences across it (the rows on either side of eps are
built in ``normalize_rows.py``; what Normalize saves and allocates is checked in
``normalize_memory.py``)."""

import torch
import torch.nn.functional as F

from ...checks import Spec, case, check_gradcheck, check_is_function, run_forward
from ...contract import check_each_input_alone, covers
from ...domain import Constant, Domain, sampled
from ...errors import GradingError
from ...exercise import Exercise, sample
from ...function_contract import rule_reference
from ...outside_ctx import check_no_state_outside_ctx
from ..shared.grad_output import \
    check_noncontiguous_grad_output as check_transposed_grad_output
from ..shared.layouts import check_noncontiguous_grad_output
from .contracts import (INDEX_SELECT_CLAUSES, INDEX_SELECT_RULES, NORMALIZE_CLAUSES,
                        NORMALIZE_RULES)
from .linear_backward import check_backward_memory_linear
from .normalize_memory import check_closed_form, check_saves_output_and_norms
from .normalize_rows import (BELOW, NEAR_ABOVE, NEAR_BELOW, around_eps, check_near_above,
                             near_above_rows, near_eps_rows, rows_around_eps)
from .pattern_cases import FLOAT32, LESSON, _shape, described, gradient_for, graded_case

SELECT = Spec("IndexSelect", ("x", "index"), lambda x, index: torch.index_select(x, 0, index))
NORMALIZE = Spec("Normalize", ("x", "eps"),
                 lambda x, eps: F.normalize(x, dim=-1, eps=eps))

# (x's shape, index): repeats, an empty index, a permutation, a single row, 1-D and 3-D x
SELECT_CASES = [((5, 3), [4, 0, 4, 2, 4]), ((6,), [1, 1, 1]), ((5, 3), []),
                ((4, 2, 3), [3, 0]), ((1, 4), [0, 0]), ((5, 3), [2, 0, 4, 1, 3]),
                ((3, 2), [2])]
# rows of one entry and a single row (a 0-d x, a row of one along dim=-1 as F.normalize takes
# it, is the domain's: autograder/empty_and_scalar.py)
NORMALIZE_SHAPES = [(4, 4), (5,), (2, 3, 4), (5, 1), (1, 6)]
EPS = 1e-12  # F.normalize's default


# IndexSelect ------------------------------------------------------------------------------

def check_saves_index_only(forward, index: torch.Tensor) -> None:
    """No floating-point tensor and no byte of forward's own: index itself, as received."""
    for saved in forward.saved:
        if saved.dtype.is_floating_point:
            what = "its input x" if saved.role == "input x" else (
                f"a float tensor of shape {_shape(saved.shape)}")
            raise GradingError(f"IndexSelect saves {what} ({saved.nbytes} bytes), which a "
                               "correct backward can do without: which values does backward "
                               "read, and what else of x does it need?",
                               mistake="IndexSelect/saves-tensor")
    own = [s for s in forward.saved if not s.role.startswith("input") and s.nbytes]
    if any(s.dtype == index.dtype and s.shape == tuple(index.shape)
           and torch.equal(s.tensor, index) for s in own):
        strided = "" if index.is_contiguous() else (
            " (a strided index here, every other entry of a longer one)")
        raise GradingError(f"IndexSelect saves a copy of index, not index itself{strided}: a "
                           "copy costs memory of its own, index itself none; what made the copy?",
                           mistake="IndexSelect/saves-copy-of-index")
    if own:
        raise GradingError(f"IndexSelect saves a tensor that forward made, of shape "
                           f"{_shape(own[0].shape)} ({own[0].nbytes} bytes), where the contract "
                           "saves no byte of its own: could backward do without it, or keep it "
                           "as a plain ctx attribute?")
    if index.numel() and not any(s.role == "input index" for s in forward.saved):
        raise GradingError("IndexSelect did not save index itself: backward reads its values; "
                           "what did forward keep instead?")


def check_repeated_rows(function, device) -> None:
    """grad[index] = grad_output keeps one write per repeated row."""
    index = torch.tensor([4, 0, 4, 2, 4], device=device)
    got, truth, grad_output = gradient_for(function, SELECT, {"x": sample((5, 3), device),
                                                              "index": index})
    if not isinstance(got, torch.Tensor) or got.shape != truth.shape:
        return
    repeated = torch.zeros(5, dtype=torch.bool, device=device)
    repeated[4] = True
    if (not torch.allclose(got, truth) and torch.allclose(got[~repeated], truth[~repeated])):
        if any(torch.allclose(got[4], grad_output[k]) for k in (0, 2, 4)):
            raise GradingError("IndexSelect lost repeated rows: index = [4, 0, 4, 2, 4] selects "
                               "row 4 three times, so its gradient is the sum of three rows of "
                               "grad_output, and your row 4 is one of them: a write "
                               "(grad[index] = grad_output, grad[index] += grad_output, "
                               "index_copy, scatter; += on an indexed tensor is a write too) "
                               "keeps only one; which Tensor method adds rows at an index?",
                               mistake="IndexSelect/writes-repeated-rows")
        raise GradingError("IndexSelect's gradient is wrong only on row 4, the row that index = "
                           "[4, 0, 4, 2, 4] selects three times: its gradient is the sum of those "
                           "three rows of grad_output",
                           f"got {got[4].tolist()}, expected {truth[4].tolist()}",
                           mistake="IndexSelect/repeats-not-summed")


def select_case(function, x_shape, rows, device, seed=0, dtype=torch.float64) -> None:
    """One case; in float32, what backward itself returns is in x's dtype too (the engine would
    cast a float64 gradient silently, so only graded_case's look at the returned tensor sees it)."""
    index = torch.tensor(rows, dtype=torch.int64, device=device)
    values = {"x": sample(x_shape, device, seed=seed, dtype=dtype), "index": index}
    try:
        with case(described(values, dtype) + f", index={rows}"):
            forward, _ = graded_case(function, SELECT, values,
                                     FLOAT32 if dtype == torch.float32 else None)
            check_saves_index_only(forward, index)
    except GradingError as error:
        if not error.mistake:  # an error no probe named: a dense matrix in backward?
            check_dense_backward(function, device, error)
        raise


def check_dense_backward(function, device, error: GradingError | None = None) -> None:
    """1024 rows picked from 1024: a backward that builds the one-hot matrix of them (k x n)
    holds 1024 * 1024, where index_add holds a few tensors of x's size."""
    rows = torch.randint(0, 1024, (1024,), generator=torch.Generator().manual_seed(5))
    try:
        check_backward_memory_linear(function, SELECT, {"x": sample((1024, 2), device),
                                                        "index": rows.to(device)},
                                     "x of shape (1024, 2), index of 1024 rows, float64")
    except GradingError as dense:
        if error is None:
            raise
        raise dense from error


def select_opening(IndexSelect, device="cpu") -> None:
    function = check_is_function(IndexSelect, SELECT)
    # first: an index kept in a global leaves nothing saved, which the byte checks would blame
    with case("one call, forward then backward"):
        check_no_state_outside_ctx(function, "IndexSelect", {
            "x": sample((4, 2), device), "index": torch.tensor([3, 1, 3], device=device)})
    check_repeated_rows(function, device)
    for x_shape, rows in SELECT_CASES[:3]:
        select_case(function, x_shape, rows, device)
    select_case(function, *SELECT_CASES[0], device, dtype=torch.float32)
    check_gradcheck(function, SELECT, {"x": sample((4, 2), device),
                                       "index": torch.tensor([3, 1, 3], device=device)})


def select_full(IndexSelect, device) -> None:
    select_opening(IndexSelect, device)
    for seed, (x_shape, rows) in enumerate(SELECT_CASES):
        select_case(IndexSelect, x_shape, rows, device, seed=seed)
    for edge in ("repeated index", "empty index", "1-D x", "saves only index"):
        covers(edge)
    values = {"x": sample((5, 3), device), "index": torch.tensor([4, 0, 4], device=device)}
    check_each_input_alone(IndexSelect, SELECT, values)
    check_noncontiguous_grad_output(IndexSelect, SELECT, values)
    # a transposed grad_output (2-D and 3-D x): no flattening .view reaches its rows
    for x_shape in ((5, 3), (5, 2, 3)):
        with case(f"x of shape {x_shape}, a transposed grad_output"):
            check_transposed_grad_output(IndexSelect, SELECT, {**values,
                                                               "x": sample(x_shape, device)})
    strided = torch.tensor([4, 9, 0, 9, 4, 9], device=device)[::2]
    with case("x of shape (5, 3), index=[4, 0, 4], every other entry of a longer index"):
        forward = run_forward(IndexSelect, SELECT, {"x": sample((5, 3), device).requires_grad_(),
                                                    "index": strided})  # kept strided
        check_saves_index_only(forward, strided)
    check_gradcheck(IndexSelect, SELECT, {"x": sample((3, 2, 2), device),
                                          "index": torch.tensor([0, 2, 0, 0], device=device)})
    check_dense_backward(IndexSelect, device)
    check_strided_rows(IndexSelect, device)
    covers("3-D x transposed or expanded")
    check_scalar_x(IndexSelect, device)  # last: the one x torch takes with no rows
    covers("0-d x")


# x of shape (4, 2, 3) in two layouts a flattening view refuses, and a 0-d x
STRIDED_ROWS = [(", a (2, 4, 3) tensor transposed in dims 0 and 1, not contiguous",
                 lambda device: sample((2, 4, 3), device, seed=4).transpose(0, 1)),
                (", expanded from (4, 1, 3), a stride of 0 in dim 1",
                 lambda device: sample((4, 1, 3), device, seed=5).expand(4, 2, 3))]


def check_strided_rows(function, device) -> None:
    """A 3-D x whose rows no view of shape (n, -1) reaches: rule 1's layouts, on the shape where
    a flattening view fails (a 2-D x keeps its shape under view(n, -1), whatever its strides)."""
    index = [3, 0, 3]
    for layout, make in STRIDED_ROWS:
        x = make(device)
        values = {"x": x, "index": torch.tensor(index, device=device)}
        try:
            with case(described(values, torch.float64) + f", index={index}, x{layout}"):
                forward, _ = graded_case(function, SELECT, values)
                check_saves_index_only(forward, values["index"])
        except GradingError as error:
            if "view size is not compatible" not in str(error):
                raise
            raise GradingError(f"IndexSelect refused an x of shape (4, 2, 3){layout}: "
                               "view size is not compatible with input tensor's size and stride "
                               "(.view never copies, so it needs strides it can reinterpret; "
                               ".reshape takes every layout, and index_select on x itself needs "
                               f"no flattening) {rule_reference('values')}", str(error),
                               mistake="IndexSelect/view-on-strided-x") from error
        except NotImplementedError:
            raise
        except Exception as error:  # noqa: BLE001 - the learner's code may raise anything
            message = (str(error).splitlines() or [""])[0]
            raise GradingError(f"IndexSelect raised {type(error).__name__} ({message}) on an x of "
                               f"shape (4, 2, 3){layout}, index={index}, which "
                               f"torch.index_select takes {rule_reference('values')}") from error


NO_ROWS = ("a 0-d x has no dim 0 (x.shape[0], x[k] and grad_output[k] do not exist there): "
           "which line of yours assumes one, where x.shape kept whole would not?")


def check_scalar_x(function, device) -> None:
    """A 0-d x with index [0]: torch.index_select takes it (one entry, at position 0) and
    returns a 0-d output, whose gradient is grad_output; x.shape[0] does not exist there."""
    values = {"x": sample((), device, seed=3), "index": torch.tensor([0], device=device)}
    said = ("a 0-d x with index=[0], which torch.index_select takes (its one entry, at "
            "position 0), returning a 0-d output whose gradient is grad_output")
    try:
        with case(described(values, torch.float64) + ", index=[0]"):
            forward, _ = graded_case(function, SELECT, values)
            check_saves_index_only(forward, values["index"])
    except GradingError as error:
        if not error.hint.startswith(("IndexSelect.forward raised",
                                      "IndexSelect.backward raised")):
            raise
        raise GradingError(f"{error.hint.split(' with ')[0]} on {said}: {NO_ROWS} "
                           f"{rule_reference('values')}",
                           str(error), mistake="IndexSelect/raises-on-0-d") from error
    except NotImplementedError:
        raise
    except Exception as error:  # noqa: BLE001 - the learner's code may raise anything
        message = (str(error).splitlines() or [""])[0]
        raise GradingError(f"IndexSelect raised {type(error).__name__} ({message}) on {said}: "
                           f"{NO_ROWS} {rule_reference('values')}",
                           mistake="IndexSelect/raises-on-0-d") from error


# Normalize --------------------------------------------------------------------------------

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
    check_zero_row_finite(got, truth, eps)
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


def check_zero_row_finite(got: torch.Tensor, truth: torch.Tensor, eps: float) -> None:
    """A nan or inf on the row of zeros, where the truth is grad_output / eps: the case above
    eps divided by the norm, 0 there, and a mask of 0 multiplied with it (0 x inf is nan)."""
    if torch.isfinite(got[ZERO_ROW]).all() or not torch.isfinite(truth[ZERO_ROW]).all():
        return
    raise GradingError("Normalize's gradient holds nan or inf on a row of zeros (norm 0, below "
                       "eps), where autograd's is finite: does backward compute the formula "
                       "above eps on every row, dividing by the norm, and then multiply it by "
                       "a mask of 0? 0 x inf and 0 x nan are nan, so a mask cannot remove that "
                       "division's result: keep the division by 0 from happening on the row "
                       f"at all ({around_eps(eps)})",
                       f"got {got[ZERO_ROW].tolist()}\nexpected {truth[ZERO_ROW].tolist()}",
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


def _select_values(device, dtype=torch.float64, seed=0) -> dict:
    """x of shape (4, 3) or (6, 2), and an index with repeats, each by seed: two seeds in a row
    give two shapes of x, rows and columns both (x's shape, or part of it, kept outside ctx
    meets the other call's)."""
    index = torch.tensor([[3, 0, 3, 1, 3], [2, 2, 0]][seed % 2], device=device)
    return {"x": sample(((4, 3), (6, 2))[seed % 2], device, seed=seed, dtype=dtype),
            "index": index}


# the domains: float64 and float32 (each check in both), every layout of x
_TYPICAL_NORMALIZE = sampled(NORMALIZE, {"x": (3, 4)}, {"eps": 1e-2})


def _normalize_values(device, dtype=torch.float64, seed=0, **constants) -> dict:
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


EXERCISES = [
    Exercise("IndexSelect", LESSON, select_full,
             example=lambda: (sample((4, 2), "cpu"), torch.tensor([3, 0, 3, 3])),
             contract=("repeated index", "empty index", "1-D x", "saves only index",
                       "non-contiguous grad_output", "3-D x transposed or expanded", "0-d x"),
             domain=Domain(SELECT, _select_values), clauses=INDEX_SELECT_CLAUSES,
             rules=INDEX_SELECT_RULES),
    # the domain's empty and 0-d case: an empty batch, and a 0-d x, a row of one entry along
    # dim=-1 as F.normalize takes it (Function contract, rule 1)
    Exercise("Normalize", LESSON, normalize_full,
             example=lambda: (rows_around_eps("cpu")[0][:3, :4], 1e-2),
             contract=("rows below eps and a row of zeros", "1-D x",
                       "saves the output and one norm per row", "closed form",
                       "non-contiguous grad_output"),
             domain=Domain(NORMALIZE, _normalize_values,
                           constants={"eps": Constant(1e-12, 10.0, "eps a Python float; "
                                                      "correct on rows whose norm is below "
                                                      "eps", also=(1e-3,))}),
             clauses=NORMALIZE_CLAUSES, rules=NORMALIZE_RULES),
]
