"""Lesson 08, Exercise 1: LogSumExp, a Function in the setup_context form with a jvp, under
vmap, jvp and forward-mode gradcheck: its spec and inputs are in ``lse_inputs``, its probes in
``lse_probes``, the transforms in ``lse_transforms``, the second derivative in
``lse_second_derivative`` and the checks at |x| = 1000 in ``lse_stability`` (softplus, the
custom operator, is in ``custom_op``)."""

import re

import torch

from ...by_hand import check_by_hand
from ...checks import case, check_is_function, check_values_and_gradients
from ...contract import check_each_input_alone, covers
from ...domain import Case, Constant, Domain, sampled
from ...errors import GradingError
from ...exercise import Exercise, sample
from ...outside_ctx import check_no_state_outside_ctx
from .lse_inputs import LSE, LSE_CASES, lse_values
from .lse_probes import (check_lse_class_state, check_lse_ctx, check_lse_form,
                         check_lse_new_memory, check_state_shared)
from .reduced_dim import Reduction, check_dim_from_shapes, check_grad_output_unsqueezed
from .lse_second_derivative import check_lse_second_derivative
from .lse_stability import check_lse_stable
from .lse_transforms import (_transform_error, check_lse_gradcheck, check_lse_jvp,
                             check_lse_tangent_dtype, check_lse_vmap)


def check_lse_case(function, values: dict, **tolerances) -> None:
    """Values and gradients for one (shape, dim); a backward that fails only away from the last
    dimension gets the unsqueeze hint."""
    x, dim = values["x"], values["dim"]
    with case(f"x of shape {tuple(x.shape)}, dim={dim}"):
        try:
            check_values_and_gradients(function, LSE, values, **tolerances)
        except GradingError as error:
            cause = error.__cause__
            if (dim in (-1, x.dim() - 1) and isinstance(cause, RuntimeError)
                    and "must match the size of tensor" in str(cause)
                    and error.hint.startswith("LogSumExp.backward raised")):
                raise _transform_error("backward", cause, values) from error
            phase = re.match(r"LogSumExp\.(\w+) raised", error.hint)
            if (phase and isinstance(cause, RuntimeError)
                    and "Expected reduction dim to be specified" in str(cause)):
                raise GradingError(
                    f"LogSumExp.{phase[1]} takes one max over the whole of x (a max with no "
                    f"dim), which raises for x of shape {tuple(x.shape)}, dim={dim}: x has no "
                    "elements, yet every sum along dim is well defined; and where it runs, what "
                    "does a single max for all of x do to a slice whose values all sit far below "
                    "x's largest? Which max does each sum along dim need?", str(cause),
                    mistake="LogSumExp/max-not-per-row") from error
            last = dim in (-1, x.dim() - 1)
            if last or not ("backward" in error.hint or "gradient" in error.hint):
                raise
            raise GradingError(
                f"LogSumExp's backward fails for dim={dim}, which is not the last dimension "
                "(the last one passed): every unsqueeze, softmax or sum in backward must use "
                "ctx.dim, not -1, so that grad_output and the output broadcast along dim",
                str(error), mistake="LogSumExp/backward-assumes-last-dim") from error


def lse_full(LogSumExp, device) -> None:
    function = check_is_function(LogSumExp, LSE)
    check_lse_form(function)
    check_lse_class_state(function, device)
    reduction = Reduction("LogSumExp", function.apply,
                          lambda shape, seed: lse_values(shape, device, seed=seed)["x"],
                          lambda x, dim, at: (x - torch.logsumexp(x, dim).unsqueeze(at)).exp())
    check_grad_output_unsqueezed(reduction)
    check_dim_from_shapes(reduction)
    check_lse_new_memory(function, device)
    # rule 3 before the transforms: a backward that asks autograd (torch.autograd.grad,
    # torch.func.vjp) is named as such, not by the error torch.vmap raises inside it
    check_by_hand(LSE_DOMAIN, function, device)
    for seed, (shape, dim) in enumerate(LSE_CASES):
        values = lse_values(shape, device, seed=seed, dim=dim)
        try:
            check_lse_case(function, values)
            check_lse_ctx(function, values)
            check_lse_jvp(function, values)
            if 0 not in shape:
                check_lse_vmap(function, values)
        except GradingError as error:
            # wrong numbers, no cause proven, or shapes that do not line up (a cache keyed by
            # an address hands one call's tensor to another): is it state shared by calls?
            if not error.mistake or error.mistake == "LogSumExp/dim-misplaced":
                check_state_shared(function, device)
            raise
    check_lse_tangent_dtype(function, device)
    for edge in ("a dim other than the last", "negative dim", "1-D x", "torch.func.jvp",
                 "torch.vmap with per-sample gradients"):
        covers(edge)
    check_each_input_alone(function, LSE, lse_values((3, 4), device, dim=0))
    # before the |x| = 1000 checks, which run forward twice before one backward: a tensor kept
    # outside ctx (a global softmax, or x and the output kept for jvp) is named where it lives,
    # not by the gradient it spoils
    with case("one call, forward then backward"):
        check_no_state_outside_ctx(function, "LogSumExp", lse_values((3, 4), device))
    check_lse_stable(function, device, LSE, _transform_error)
    covers("|x| = 1000: values, gradients and jvp")
    for shape, dim in [((2, 3), 1), ((2, 3, 2), -2), ((4,), 0)]:
        check_lse_gradcheck(function, lse_values(shape, device, dim=dim), batched=True)
    covers("gradcheck with check_forward_ad=True")
    check_lse_second_derivative(function, device)
    covers("a second derivative through backward")


def _rows_apart(device, dtype) -> dict:
    """Rows near 1000 beside rows near 0: a shift by the whole tensor's maximum underflows."""
    x = torch.tensor([[1000.0, 999.0, 998.5], [0.5, -1.0, 0.0], [-1000.0, -999.5, -1001.0]],
                     dtype=dtype, device=device)
    return {"x": x, "dim": 1}


# float32 (the dtype any tensor op takes) and every layout come from the domain
LSE_DOMAIN = Domain(LSE, sampled(LSE, {"x": (3, 4)}, {"dim": 1}, scale=3.0),
                    constants={"dim": Constant(-2, 1, "dim a Python int, negative allowed",
                                               integer=True, also=(0,))},
                    rows_apart=Case(_rows_apart, "stable for |x| up to 1000, each slice on its "
                                    "own"))


EXERCISES = [
    Exercise("LogSumExp", "08_compile", lse_full,
             example=lambda: (3 * sample((3, 4), "cpu"), 1), domain=LSE_DOMAIN,
             contract=("a dim other than the last", "negative dim", "1-D x", "torch.func.jvp",
                       "torch.vmap with per-sample gradients",
                       "|x| = 1000: values, gradients and jvp",
                       "gradcheck with check_forward_ad=True",
                       "a second derivative through backward")),
]
