"""Lesson 09, broadcasting, reductions and scans: BroadcastMul, ProdOverDim and Cumsum (the
selections and the normalisation are in ``selections.py``, their batteries in ``index_select.py``
and ``normalize.py``; the graded case every exercise of the lesson runs, which checks the exact
shape backward returned, in ``pattern_cases.py``; ProdOverDim's exact zeros and tiny entries in
``prod_zeros.py``; BroadcastMul at the ends of the float range in ``range_ends.py``;
ProdOverDim's 0-d and empty shapes in ``prod_edges.py``; Cumsum's 0-d x, as CumMax's, in
``scalar_scans.py``)."""

import torch

from ..shared.jacobian_memory import check_backward_memory_linear
from .prod_calls import check_1d_beside_2d
from .prod_edges import check_edge_shapes
from ...checks import (Spec, case, check_gradcheck, check_is_function, make_inputs, run_backward,
                      run_forward)
from ...contract import check_each_input_alone, covers
from ...custom import FunctionExercise
from ...domain import Constant, Domain, sampled
from ...errors import GradingError
from ...exercise import Exercise, sample
from .broadcast_sums import check_left_aligned, check_own_factor, check_sums_every_dim
from .cumsum_decay import check_decaying_grad_output
from .other_dims import check_along_another_dim
from ..shared.layouts import check_noncontiguous_grad_output
from .pattern_cases import (LESSON, LINEAR_FACTOR, _shape, described, gradient_for, graded_case,
                            listed)
from .prod_unsqueeze import check_grad_output_unsqueezed
from .prod_zeros import (check_exact_zeros_in_gradient, check_tiny_entries, short_slice,
                         slice_question)
from .range_ends import check_range_ends
from .scalar_scans import check_scalar_x

BROADCAST_MUL = Spec("BroadcastMul", ("a", "b"), lambda a, b: a * b)
PROD = Spec("ProdOverDim", ("x", "dim"), lambda x, dim: torch.prod(x, dim))
CUMSUM = Spec("Cumsum", ("x", "dim"), lambda x, dim: torch.cumsum(x, dim))

# (a's shape, b's shape): either side broadcasts, size-1 dims, missing leading dims, 0-d, and a
# size-1 dim broadcast against a size-0 one on either side (a dim to sum, though not smaller)
BROADCAST_SHAPES = [((3, 1), (1, 4)), ((2, 3, 4), (4,)), ((4,), (3, 4)), ((3, 4), (3, 4)),
                    ((2, 1, 4), (3, 1)), ((5, 1, 1), (1,)), ((1,), (5,)), ((), (2, 3)),
                    ((2, 3), ()), ((), ()), ((2, 1), (1, 2)), ((1, 3), (0, 1)), ((0,), (1,))]
# (x's shape, dim): dims first, middle, last, negative, of size 1, and a 1-D x (ProdOverDim's
# 0-d x and x empty along dim, which torch.prod takes, in prod_edges.py; Cumsum's 0-d x in
# scalar_scans.py)
DIM_CASES = [((4, 4), 1), ((5,), 0), ((3, 4), 0), ((2, 3, 4), -1), ((2, 3, 4), 1), ((4, 1), 1),
             ((1, 3), 0), ((2, 3, 4), 0), ((2, 3, 4), -3)]
# One slice per zero case: none, one, two, three zeros.
ZERO_SLICES = torch.tensor([[1.5, -2.0, 0.5, 3.0, -1.0],
                            [2.0, 0.0, -1.5, 0.5, 4.0],
                            [0.0, 3.0, 0.0, -2.0, 1.0],
                            [0.0, 0.0, 0.0, 1.0, 2.0]])
ZERO_KINDS = ("no zero", "exactly one zero", "two zeros", "three zeros")


# BroadcastMul -----------------------------------------------------------------------------

COUNTED_WORK = FunctionExercise("BroadcastMul", reference=torch.mul, arguments=("a", "b"),
                                needs_input_grad=True)


def broadcast_case(function, a_shape, b_shape, device, seed=0) -> None:
    values = {"a": sample(a_shape, device, seed=seed), "b": sample(b_shape, device, seed=seed + 50)}
    with case(described(values, torch.float64)):
        # what it saves is not graded: the contract has no saving rule for BroadcastMul
        try:
            graded_case(function, BROADCAST_MUL, values, exact_shapes=True)
        except GradingError as error:
            check_sums_every_dim(function, BROADCAST_MUL, values, error)
            check_left_aligned(function, BROADCAST_MUL, values, error)
            check_own_factor(function, BROADCAST_MUL, values, error)
            raise


def check_exact_zeros(function, device) -> None:
    """Inputs holding exact zeros: a * b is defined there, and so are both gradients (a
    backward that divides the output by an input, y / a, is nan or inf exactly there)."""
    values = {"a": torch.tensor([[0.0], [1.5], [-2.0]], dtype=torch.float64, device=device),
              "b": torch.tensor([0.5, 0.0, -1.0, 2.0], dtype=torch.float64, device=device)}
    where = "a = [[0], [1.5], [-2]], b = [0.5, 0, -1, 2]"
    inputs = make_inputs(values)
    forward = run_forward(function, BROADCAST_MUL, inputs)
    grad_output = 1 + sample(forward.output.shape, device, seed=4).abs()
    try:
        grads = run_backward(BROADCAST_MUL, forward.output, inputs, grad_output).grads
    except GradingError:
        grads = ()  # graded_case below quotes the error
    for (name, value), grad in zip(values.items(), grads):
        if not isinstance(grad, torch.Tensor) or grad.shape != value.shape:
            continue
        bad = ~torch.isfinite(grad)
        if bad.any() and (value[bad] == 0).all():
            raise GradingError(
                f"BroadcastMul's gradient for {name} is inf or nan exactly where {name} holds "
                f"0 ({where}), though a * b and its gradients are finite there: what in your "
                f"backward divides by {name}?", f"got {grad.tolist()}",
                mistake="BroadcastMul/divides-by-input")
    with case(f"{where}, float64"):
        graded_case(function, BROADCAST_MUL, values, exact_shapes=True)


def broadcast_opening(BroadcastMul, device="cpu") -> None:
    function = check_is_function(BroadcastMul, BROADCAST_MUL)
    for a_shape, b_shape in BROADCAST_SHAPES[:3] + BROADCAST_SHAPES[-2:]:
        broadcast_case(function, a_shape, b_shape, device)
    check_exact_zeros(function, device)
    check_range_ends(function, BROADCAST_MUL, device)
    # the gradients in the inputs' dtype: float32 in, float32 out (IndexSelect's rule too)
    values = {"a": sample((3, 1), device, seed=2, dtype=torch.float32),
              "b": sample((4,), device, seed=3, dtype=torch.float32)}
    with case(described(values, torch.float32)):
        graded_case(function, BROADCAST_MUL, values, exact_shapes=True)
    COUNTED_WORK.check_needs_input_grad(function, device)
    check_gradcheck(function, BROADCAST_MUL, {"a": sample((3, 1), device),
                                              "b": sample((4,), device, seed=1)})


def broadcast_full(BroadcastMul, device) -> None:
    broadcast_opening(BroadcastMul, device)
    for seed, (a_shape, b_shape) in enumerate(BROADCAST_SHAPES):
        broadcast_case(BroadcastMul, a_shape, b_shape, device, seed=seed)
    covers("a broadcast")
    covers("b broadcast")
    covers("size-1 dims and missing leading dims")
    covers("0-d inputs")
    for a_shape, b_shape in BROADCAST_SHAPES[:3]:
        broadcast_case(BroadcastMul, b_shape, a_shape, device, seed=7)
    for a_shape, b_shape in [((3, 1), (1, 4)), ((2, 3, 4), (4,))]:
        check_each_input_alone(BroadcastMul, BROADCAST_MUL,
                               {"a": sample(a_shape, device), "b": sample(b_shape, device, seed=1)},
                               frozen_get_none=True)
    covers("skips the gradient nobody needs")
    check_noncontiguous_grad_output(BroadcastMul, BROADCAST_MUL,
                                    {"a": sample((3, 1), device), "b": sample((4,), device)})
    check_gradcheck(BroadcastMul, BROADCAST_MUL, {"a": sample((), device),
                                                  "b": sample((2, 3), device, seed=1)})


# ProdOverDim ------------------------------------------------------------------------------

def check_zero_slices(function, device, dim=1) -> None:
    """Slices with no zero, one zero and several: exact, finite gradients."""
    x = ZERO_SLICES.to(device, torch.float64)
    x = x if dim in (1, -1) else x.T.contiguous()
    got, truth, grad_output = gradient_for(function, PROD, {"x": x, "dim": dim})
    where = f"(with x of shape {_shape(x.shape)}, dim={dim}, float64)"
    if not isinstance(got, torch.Tensor) or got.shape != truth.shape:
        return  # graded_case names a missing or mis-shaped gradient
    if not torch.isfinite(got).all():
        divided = grad_output.unsqueeze(dim) * (x.prod(dim, keepdim=True) / x)
        if torch.allclose(got, divided, equal_nan=True):
            raise GradingError("ProdOverDim's gradient is inf or nan exactly at the zeros, as "
                               "prod / x or a sum of logs gives there: at a zero, what is the "
                               "product of the other entries, and what in your backward "
                               f"divides by that zero or takes its log? {where}",
                               mistake="ProdOverDim/divides-by-zero")
        raise GradingError("ProdOverDim's gradient is inf or nan in a slice that holds a zero, "
                           "where the true gradient is finite: at a zero, what is the product "
                           "of the other entries, and what in your backward divides by that "
                           f"zero or takes its log? {where}",
                           f"got {got.tolist()}")
    for row, (kind, mine, true) in enumerate(zip(ZERO_KINDS, got.movedim(dim, -1),
                                                 truth.movedim(dim, -1))):
        if not torch.allclose(mine, true):
            if dim not in (-1, x.dim() - 1) and _right_along_last_dim(function, x.T):
                raise GradingError(
                    f"ProdOverDim's gradient is right when dim is the last dimension but wrong "
                    f"for dim={dim}: every slice, shift and flip in backward must follow "
                    f"ctx.dim (x[..., :-1] slices the last dim only) {where}",
                    f"got {listed(mine, true)}, expected {listed(true, mine)}",
                    mistake="ProdOverDim/last-dim-only")
            entries = x.movedim(dim, -1)[row]
            if kind == "no zero" and torch.allclose(mine, true * entries ** 2):
                raise GradingError(
                    "ProdOverDim's gradient on a slice with no zero is x_i squared times the "
                    "product of the others: your products before and after x_i both include "
                    f"x_i itself. Which entries should the product before x_i hold? {where}",
                    f"x's slice {short_slice(entries)}\ngot {short_slice(mine)}\n"
                    f"expected {short_slice(true)}", mistake="ProdOverDim/inclusive-products")
            raise GradingError(f"ProdOverDim's gradient is wrong on a slice with {kind}: "
                               f"{slice_question(kind)} {where}",
                               f"x's slice {short_slice(x.movedim(dim, -1)[row])}, grad_output "
                               f"there {grad_output.flatten()[row]:.4g} (random)\n"
                               f"got {short_slice(mine)}\nexpected {short_slice(true)}")
    check_exact_zeros_in_gradient(got, truth, where)
    graded_case(function, PROD, {"x": x, "dim": dim})


def _right_along_last_dim(function, x, spec=PROD) -> bool:
    """Is the learner's gradient right on the same slices laid along the last dim?"""
    got, truth, _ = gradient_for(function, spec, {"x": x.contiguous(), "dim": x.dim() - 1})
    return (isinstance(got, torch.Tensor) and got.shape == truth.shape
            and bool(torch.allclose(got, truth)))


def prod_opening(ProdOverDim, device="cpu") -> None:
    function = check_is_function(ProdOverDim, PROD)
    check_grad_output_unsqueezed(function, PROD, device)
    check_along_another_dim(function, PROD, device)
    check_zero_slices(function, device)
    check_tiny_entries(function, PROD, device)
    for dtype in (torch.float64, torch.float32):  # the gradient in x's dtype: float32 too
        for x_shape, dim in DIM_CASES[:2]:
            values = {"x": sample(x_shape, device, away_from_zero=0.3, dtype=dtype), "dim": dim}
            with case(described(values, dtype)):
                graded_case(function, PROD, values)
    check_gradcheck(function, PROD, {"x": ZERO_SLICES.double().to(device), "dim": 1})


def prod_full(ProdOverDim, device) -> None:
    prod_opening(ProdOverDim, device)
    check_zero_slices(ProdOverDim, device, dim=0)
    covers("no zero, one zero, several zeros in a slice")
    for seed, (x_shape, dim) in enumerate(DIM_CASES):
        values = {"x": sample(x_shape, device, seed=seed, away_from_zero=0.3), "dim": dim}
        with case(described(values, torch.float64)):
            graded_case(ProdOverDim, PROD, values)
    covers("a dim other than the last")
    covers("negative dim")
    covers("1-D x")
    check_each_input_alone(ProdOverDim, PROD,
                           {"x": sample((3, 4), device, away_from_zero=0.3), "dim": 0})
    check_noncontiguous_grad_output(ProdOverDim, PROD, {"x": ZERO_SLICES.double().T.to(device),
                                                        "dim": 0})
    check_gradcheck(ProdOverDim, PROD, {"x": ZERO_SLICES.double().T.to(device), "dim": 0})
    check_1d_beside_2d(ProdOverDim, device)
    check_edge_shapes(ProdOverDim, PROD, device)
    covers("0-d x")
    covers("x empty along dim")


# Cumsum -----------------------------------------------------------------------------------

def check_saves_nothing(forward) -> None:
    if forward.saved:
        what = ", ".join(f"{s.role} of shape {_shape(s.shape)}" for s in forward.saved)
        raise GradingError(f"Cumsum saves {what}: its backward needs no tensor from forward, "
                           "only dim, a Python int: where does a value that is not a tensor "
                           "go?",
                           mistake="Cumsum/saves-tensor")


def check_scan_direction(function, device) -> None:
    """A forward cumsum of grad_output is the commonest wrong backward."""
    got, truth, grad_output = gradient_for(function, CUMSUM, {"x": sample((3, 5), device),
                                                              "dim": 1})
    if (isinstance(got, torch.Tensor) and got.shape == truth.shape
            and not torch.allclose(got, truth) and torch.allclose(got, grad_output.cumsum(1))):
        raise GradingError("Cumsum's backward ran the scan the same way as forward: y_o sums "
                           "x_i for i <= o, so x_i reaches every y_o with o >= i: which g_o "
                           "does x_i's gradient add up? (with x of shape (3, 5), dim=1)",
                           mistake="Cumsum/scans-forward")
    inclusive = grad_output.sum(1, keepdim=True) - grad_output.cumsum(1)
    if (isinstance(got, torch.Tensor) and got.shape == truth.shape
            and not torch.allclose(got, truth) and torch.allclose(got, inclusive)):
        raise GradingError("Cumsum's gradient for x_i is the sum of g_o over o > i: g_i is "
                           "missing (x_i reaches y_i too) (with x of shape (3, 5), dim=1)",
                           mistake="Cumsum/total-minus-inclusive")
    if (isinstance(got, torch.Tensor) and got.shape == truth.shape
            and not torch.allclose(got[:, :1], truth[:, :1])
            and torch.allclose(got[:, 1:], truth[:, 1:])):
        raise GradingError("Cumsum's gradient is right everywhere but at the first entry along "
                           "dim: the sum of g_o over o >= 0 is all of grad_output's slice; did "
                           "a shift wrap round (roll brings the last entry to the front, where "
                           "a shifted scan needs 0)? (with x of shape (3, 5), dim=1)",
                           f"got {listed(got[:, 0], truth[:, 0])}, "
                           f"expected {listed(truth[:, 0], got[:, 0])}",
                           mistake="Cumsum/wrong-first-entry")


def check_follows_dim(function, device) -> None:
    """A backward right along the last dim and wrong for dim=0 ignored ctx.dim."""
    x = sample((3, 4), device)
    got, truth, _ = gradient_for(function, CUMSUM, {"x": x, "dim": 0})
    if (isinstance(got, torch.Tensor) and got.shape == truth.shape
            and not torch.allclose(got, truth)
            and _right_along_last_dim(function, x.T, CUMSUM)):
        raise GradingError("Cumsum's gradient is right when dim is the last dimension but wrong "
                           "for dim=0: every flip and scan in backward must follow ctx.dim "
                           "(a flip or a cumsum along -1 runs along the last dim only) (with x "
                           "of shape (3, 4), dim=0)",
                           mistake="Cumsum/last-dim-only")


def cumsum_case(function, x_shape, dim, device, seed=0, dtype=torch.float64) -> None:
    values = {"x": sample(x_shape, device, seed=seed, dtype=dtype), "dim": dim}
    with case(described(values, dtype)):
        forward, _ = graded_case(function, CUMSUM, values)
        check_saves_nothing(forward)


def cumsum_opening(Cumsum, device="cpu") -> None:
    function = check_is_function(Cumsum, CUMSUM)
    check_scan_direction(function, device)
    check_follows_dim(function, device)
    check_along_another_dim(function, CUMSUM, device)
    for x_shape, dim in DIM_CASES[:3]:
        cumsum_case(function, x_shape, dim, device)
    cumsum_case(function, *DIM_CASES[0], device, dtype=torch.float32)  # the gradient in x's dtype
    check_gradcheck(function, CUMSUM, {"x": sample((3, 4), device), "dim": 0})


def cumsum_full(Cumsum, device) -> None:
    cumsum_opening(Cumsum, device)
    for seed, (x_shape, dim) in enumerate(DIM_CASES):
        cumsum_case(Cumsum, x_shape, dim, device, seed=seed)
    for edge in ("a dim other than the last", "negative dim", "1-D x", "saves no tensor"):
        covers(edge)
    check_decaying_grad_output(Cumsum, CUMSUM, device)
    check_each_input_alone(Cumsum, CUMSUM, {"x": sample((3, 4), device), "dim": 0})
    check_noncontiguous_grad_output(Cumsum, CUMSUM, {"x": sample((3, 4), device), "dim": 0})
    check_gradcheck(Cumsum, CUMSUM, {"x": sample((2, 3, 4), device), "dim": -1})
    # dim 1 of 1024 entries: a triangle of ones along it holds 1024 * 1024
    check_backward_memory_linear(Cumsum, CUMSUM, {"x": sample((2, 1024), device), "dim": 1},
                                 "x of shape (2, 1024), dim=1, float64", factor=LINEAR_FACTOR)
    # last: a 0-d x along dim 0 and -1, which torch.cumsum takes as a row of one
    check_scalar_x(Cumsum, CUMSUM, "torch.cumsum", device,
                   lambda forward, x: check_saves_nothing(forward))
    covers("0-d x")


# the domains: every dim of a (3, 4) x, float64 and float32 (each check in both), every layout
DIM = Constant(-2, 1, "dim a Python int, negative allowed", integer=True, also=(0,))
_TYPICAL_PROD = sampled(PROD, {"x": (3, 4)}, {"dim": 1}, away_from_zero=0.3)


def _prod_values(device, dtype=torch.float64, seed=0, **constants) -> dict:
    """x (3, 4) holding zeros: along dim 1 a row with one zero, one with none and one with two;
    along dim 0 columns with one zero and with none."""
    values = _TYPICAL_PROD(device, dtype, seed, **constants)
    x = values["x"].clone()
    x[0, 1] = x[2, 0] = x[2, 3] = 0.0
    return {**values, "x": x}


# two seeds in a row give two pairs of shapes (a broadcast over b's dims, then b over a's): the
# per-call check's two calls then differ in every shape a backward needs
_BROADCAST_PAIRS = (sampled(BROADCAST_MUL, {"a": (2, 3, 1), "b": (4,)}),
                    sampled(BROADCAST_MUL, {"a": (3, 1), "b": (2, 1, 5)}))


def _broadcast_values(device, dtype=torch.float64, seed=0) -> dict:
    """a (2, 3, 1) and b (4,), or (odd seed) a (3, 1) and b (2, 1, 5)."""
    return _BROADCAST_PAIRS[seed % 2](device, dtype, seed)


EXERCISES = [
    Exercise("BroadcastMul", LESSON, broadcast_full,
             example=lambda: (sample((3, 1), "cpu"), sample((1, 4), "cpu", seed=1)),
             contract=("a broadcast", "b broadcast", "size-1 dims and missing leading dims",
                       "0-d inputs", "skips the gradient nobody needs",
                       "non-contiguous grad_output"),
             domain=Domain(BROADCAST_MUL, _broadcast_values)),
    Exercise("ProdOverDim", LESSON, prod_full,
             example=lambda: (ZERO_SLICES.double(), 1),
             contract=("no zero, one zero, several zeros in a slice", "a dim other than the last",
                       "negative dim", "1-D x", "non-contiguous grad_output", "0-d x",
                       "x empty along dim"),
             domain=Domain(PROD, _prod_values, constants={"dim": DIM})),
    Exercise("Cumsum", LESSON, cumsum_full,
             example=lambda: (sample((2, 5), "cpu"), 1),
             contract=("a dim other than the last", "negative dim", "1-D x", "saves no tensor",
                       "non-contiguous grad_output", "0-d x"),
             domain=Domain(CUMSUM, sampled(CUMSUM, {"x": (3, 4)}, {"dim": 1}),
                           constants={"dim": DIM})),
]
