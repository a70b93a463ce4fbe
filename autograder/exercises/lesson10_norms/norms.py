"""Lesson 10: LayerNormFunction and RMSNormFunction against F.layer_norm and F.rms_norm
(``norm_module`` grades the RMSNorm module built on the second)."""

import itertools

import torch
import torch.nn.functional as F

from ...checks import (Spec, case, check_backward_by_hand, check_is_function,
                      check_no_ctx_tensors, check_untouched, check_values_and_gradients,
                      make_inputs, run_backward, run_forward)
from ...contract import check_each_input_alone, covers
from ...domain import Case, Constant, Domain, Tolerance
from ...errors import GradingError
from ...exercise import Exercise
from .norm_checks import (check_needs_input_grad, check_returned, describe, eps_outside_root,
                          norm_values, record_backward_returns, scalar_weight_hint,
                          unbiased_variance_hint)
from .norm_eps_backward import check_eps_placement
from .norm_grad_x import diagnose_grad_x
from .norm_saved_output import recognise_saved_output
from .norm_saved import check_saved, check_saved_in_float32, check_saved_precision
from .norm_offsets import check_shifted_rows
from .norm_square import check_no_square_matrix

LAYER_NORM = Spec("LayerNormFunction", ("x", "weight", "bias", "eps"),
                  lambda x, weight, bias, eps: F.layer_norm(x, x.shape[-1:], weight, bias, eps))
RMS_NORM = Spec("RMSNormFunction", ("x", "weight", "eps"),
                lambda x, weight, eps: F.rms_norm(x, x.shape[-1:], weight, eps))

# (leading dims, features): 0 leading dims (a 1-D x), size-1 dims, D = 1, several leading dims
SHAPES = [((4,), 6), ((2, 3), 4), ((2, 1, 3), 5), ((), 5), ((1,), 4), ((3,), 1), ((1, 1), 1),
          ((3, 2), 2)]
KEEP = {"LayerNormFunction": "which of the tensors backward reads can it rebuild from the "
                             "others?",
        "RMSNormFunction": "which full-size tensor does backward get for free?"}


def _centred(spec: Spec) -> bool:
    return spec is LAYER_NORM


def _values(spec: Spec, leading, features, device, **options) -> dict:
    return norm_values(leading, features, device, centred=_centred(spec), **options)


def _grad_output(values: dict, seed: int = 0) -> torch.Tensor:
    """The grad_output check_values_and_gradients uses, rebuilt."""
    x = values["x"]
    generator = torch.Generator().manual_seed(seed)
    return torch.randn(x.shape, generator=generator, dtype=x.dtype).to(x.device)


def check_grad_x_terms(function, spec: Spec, device) -> None:
    """Name a left-out term of grad_x on a plain case before anything else is compared."""
    values = _values(spec, (3,), 6, device, bias=False)
    inputs = make_inputs(values, requires_grad={"x"})
    forward = run_forward(function, spec, inputs)
    grad_output = _grad_output(values)
    pristine = grad_output.clone()
    grads = run_backward(spec, forward.output, {"x": inputs["x"]}, grad_output).grads
    check_untouched(spec, grad_output, pristine)
    diagnose_grad_x(spec, grads[0], values, pristine, centred=_centred(spec))


def grad_x_hint(function, spec: Spec, values: dict) -> None:
    """After a failed case, name a slip of grad_x on that case's own inputs: a row length read
    off another dim shows only where that dim's size differs from D."""
    inputs = make_inputs(values, requires_grad={"x"})
    grad_output = _grad_output(values, seed=3)
    try:
        output = function.apply(*inputs.values())
        grad_x, = torch.autograd.grad(output, inputs["x"], grad_output.clone())
    except Exception:  # the learner's code may raise anything: the first hint stands
        return
    # a copy handed to backward: one that writes into grad_output is diagnosed on what it got
    diagnose_grad_x(spec, grad_x, values, grad_output, centred=_centred(spec))


def check_eps_used(function, spec: Spec, device) -> None:
    """eps = 0.5 on rows whose variance (mean square) lies far below it and far above it."""
    values = _values(spec, (3,), 4, device, eps=0.5, seed=4)
    values["x"] = values["x"] * torch.tensor([[0.1], [1.0], [4.0]], dtype=values["x"].dtype,
                                             device=values["x"].device)
    centred = _centred(spec)
    check_eps_placement(function, spec, values, eps_outside_root(values, centred),
                        eps_outside_root(values, centred, floor=True),
                        statistic="variance" if centred else "mean square")


def check_case(function, spec: Spec, values: dict, *, saved=True, tolerance=None) -> None:
    """Values, gradients, the exact shapes backward returned, no ctx tensors, a hand-written
    backward, and what forward saved."""
    probe, returned = record_backward_returns(function)
    with case(describe(values)):
        try:
            forward, backward = check_values_and_gradients(probe, spec, values,
                                                           **(tolerance or {}))
        except GradingError:
            recognise_saved_output(function, spec, values, centred=_centred(spec))
            scalar_weight_hint(spec, returned, values)
            unbiased_variance_hint(function, spec, values)
            grad_x_hint(function, spec, values)
            raise
        check_returned(spec, returned[-1], make_inputs(values))
        check_no_ctx_tensors(spec, forward)
        check_backward_by_hand(spec, backward)
        if saved:
            check_saved(spec, forward, values, per_row_limit=2 if _centred(spec) else 1,
                        keep_hint=KEEP[spec.name], x_itself=not _centred(spec))


def _optional_inputs(spec: Spec):
    """(weight, bias) choices: every combination for LayerNorm, weight or None for RMSNorm."""
    if _centred(spec):
        return list(itertools.product((True, False), repeat=2))
    return [(True, True), (False, True)]


def check_shifted(function, spec: Spec, device) -> None:
    """Rows far from 0 with a spread of 1, in float32 (1e4) and in float64 (1e8): where
    E[x^2] - E[x]^2 cancels in each dtype (in float32 arithmetic, and in float64 arithmetic)."""
    for dtype, shift in ((torch.float32, 1e4), (torch.float64, 1e8)):
        values = _values(spec, (3,), 16, device, dtype=dtype, shift=shift, seed=11)
        with case(f"rows like {shift:.0e} + N(0, 1), x of shape (3, 16), "
                  f"{str(dtype).removeprefix('torch.')}".replace("e+0", "e")):
            check_shifted_rows(function, spec, values, shift,
                               tolerance=1e-2 if dtype == torch.float32 else 1e-6)


def full(submission, spec: Spec, device) -> None:
    """The hidden battery on ``device``."""
    function = check_is_function(submission, spec)
    with case("x of shape (2, 3, 4), float64"):
        check_saved_precision(function, spec, _values(spec, (2, 3), 4, device))
    with case(describe(_values(spec, (3,), 6, device, bias=False))):
        check_grad_x_terms(function, spec, device)
    check_eps_used(function, spec, device)
    for seed, ((leading, features), (weight, bias)) in enumerate(
            itertools.product(SHAPES, _optional_inputs(spec))):
        check_case(function, spec, _values(spec, leading, features, device, weight=weight,
                                           bias=bias, seed=seed))
    with case("x of shape (3, 4), float32"):
        check_saved_in_float32(function, spec, _values(spec, (3,), 4, device, seed=3,
                                                        dtype=torch.float32),
                               per_row_limit=2 if _centred(spec) else 1,
                               keep_hint=KEEP[spec.name], x_itself=not _centred(spec))
    if _centred(spec):  # ✎ 1's contract: no D x D matrix in backward (rows of 32: 16 times x)
        with case("x of shape (2, 32), float64"):
            check_no_square_matrix(function, spec, _values(spec, (2,), 32, device, seed=31),
                                   32, "row")
    covers("weight=None")
    covers("1-D x")
    if _centred(spec):
        covers("bias=None")
    small = _values(spec, (3,), 4, device, seed=5)
    small["x"] = 1e-3 * small["x"]  # rows whose variance is far below eps
    check_case(function, spec, small)
    strided = _values(spec, (3, 2), 5, device, seed=23)
    strided["x"] = strided["x"].transpose(0, 1)  # a view: forward saves it, not a copy of it
    with case("x of shape (2, 3, 5), its first two dims transposed"):
        check_case(function, spec, strided)
    if _centred(spec):  # the contract's promise for LayerNorm (RMSNorm subtracts no mean)
        check_shifted(function, spec, device)
        covers("rows like 1e4 + N(0, 1) in float32")
        covers("rows like 1e8 + N(0, 1) in float64")
    # 4 rows, 3 features: a row sum and a weight's differ; every weight/bias combination that
    # leaves x something to be frozen beside (a weight=None branch has its own needs_input_grad)
    for weight, bias in _optional_inputs(spec):
        values = _values(spec, (4,), 3, device, weight=weight, bias=bias)
        if sum(isinstance(v, torch.Tensor) for v in values.values()) > 1:
            with case(describe(values)):
                check_needs_input_grad(function, spec, values, rows=4)
    # float32 too: a backward may branch on the dtype (work done in a wider one, say)
    values = _values(spec, (4,), 3, device, dtype=torch.float32)
    with case(describe(values)):
        check_needs_input_grad(function, spec, values, rows=4)
    # the contract: "returns None for, and computes nothing of" a gradient nobody needs
    check_each_input_alone(function, spec, _values(spec, (3,), 5, device, seed=21),
                           frozen_get_none=True)


def _example(spec: Spec):
    values = _values(spec, (3,), 5, "cpu", seed=1)
    return tuple(values.values())


# float32, eps across its range and strided inputs are the domain's (dtype float32, constant
# eps, layouts): the battery keeps only what is particular to a norm
EPS = Constant(1e-12, 1.0, "eps a Python float > 0", also=(0.5,))


def _domain_values(spec: Spec):
    """Two shapes by seed, so that two calls in one graph differ in shape too."""
    def values(device, dtype=torch.float64, seed=0, eps=1e-5) -> dict:
        leading, features = ((2, 3), 6) if seed % 2 == 0 else ((4,), 5)
        return _values(spec, leading, features, device, dtype=dtype, seed=seed, eps=eps)
    return values


def _rows_apart(device, dtype) -> dict:
    """LayerNorm rows of spread 1 near 0, near 1e4 and near -3e3, in one tensor."""
    values = _values(LAYER_NORM, (3,), 8, device, dtype=torch.float64, seed=5)
    shift = torch.tensor([[0.0], [1e4], [-3e3]], dtype=torch.float64, device=device)
    values["x"] = shift + values["x"]
    return {n: v.to(dtype) if isinstance(v, torch.Tensor) else v for n, v in values.items()}


EXERCISES = [
    Exercise("LayerNormFunction", "10_norms", lambda s, device: full(s, LAYER_NORM, device),
             example=lambda: _example(LAYER_NORM),
             contract=("weight=None", "bias=None", "1-D x", "rows like 1e4 + N(0, 1) in float32",
                       "rows like 1e8 + N(0, 1) in float64"),
             domain=Domain(LAYER_NORM, _domain_values(LAYER_NORM), constants={"eps": EPS},
                           rows_apart=Case(_rows_apart, "float32 rows such as 1e4 + N(0, 1) keep "
                                           "their accuracy, each row on its own",
                                           torch.float32, Tolerance(0, 1e-2)))),
    Exercise("RMSNormFunction", "10_norms", lambda s, device: full(s, RMS_NORM, device),
             example=lambda: _example(RMS_NORM),
             contract=("weight=None", "1-D x"),
             domain=Domain(RMS_NORM, _domain_values(RMS_NORM), constants={"eps": EPS})),
]
