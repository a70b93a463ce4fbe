"""Lesson 13: rms_norm_rows, F.rms_norm over the last dimension by custom operators of
autograd_course with Triton kernels: a program per row (or per block of rows) forward, the row
gradient in closed form and the weight gradient as per-program partials backward."""

import torch

from ...checks import case
from ...contract import check_each_input_alone, covers
from ...domain import Case, Constant, Domain
from ...errors import GradingError
from ...exercise import Exercise, sample
from .kernel_checks import (Calls, check_compiled, check_in_kernels, check_opcheck,
                            check_operator, explain, kernel_battery, operator_calls)
from .kernel_domain import (KERNEL_MEMORY_CLAUSE, check_default_device_frozen,
                            check_frozen_inputs_get_none, kernel_operator)
from .kernel_interpreter import language_patched_once_per_launch
from .kernel_globals import check_no_global_rebound
from .kernel_kept import KEPT_DTYPES, check_no_tensor_kept, raise_if_stale
from .kernel_fakes import (check_backward_fakes, check_ctx_tensors, check_forward_fakes,
                           check_operator_fake, check_output_fakes)
from .kernel_ulps import check_within_ulps, name_bfloat16_failure
from .rms_norm_layouts import check_non_contiguous
from .rms_norm_spec import EPS, RMS_NORM_ROWS
from .rms_norm_spec import checked as _checked
from .rms_norm_spec import gradients as _gradients
from .rms_norm_spec import right as _right
from .rms_norm_spec import values as _values
from .kernel_unwritten import poisoned_allocations, reads_unwritten
from ..shared.call_state import check_calls_of_two_sizes
from .rms_norm_float16 import check_float16_steps, check_half_squares
from .rms_norm_probes import (_run, check_no_buffer_kept, check_saves_rstd, direct_path_only,
                              half_rstd, name_rows_left_out, one_rows_contribution_per_column,
                              row_results_right, row_sum_not_averaged,
                              weight_out_of_projection)
from .rms_norm_weight import check_zero_weight, name_division_by_weight
from ...tolerances import Tolerance

LATER_IN_LESSON = True  # after silu_mul
# a prime number of rows above any grid a backward would fix (Liger: one program per SM, 132 on
# an H100 SXM): no smaller grid divides it, so every way of splitting it leaves a shorter group
MANY_ROWS, FEW_ROWS = 137, 9


def check_rows(function, values: dict) -> None:
    """Values and gradients; a failure that depends on the row's length or on the number of
    rows is named from a probe that shows it."""
    shape = tuple(values["x"].shape)
    try:
        with case(f"x of shape {shape}"), poisoned_allocations():
            _checked(function, values)
    except GradingError as error:
        x, D = values["x"], shape[-1]
        try:
            got_x = _gradients(function, values)[0]
        except Exception:  # noqa: BLE001 - no gradient, no probe: the error stands
            got_x = None
        name_division_by_weight(function, error, f"x of shape {shape}", x.device)
        if got_x is not None and direct_path_only(got_x, values):
            raise GradingError(
                "rms_norm_rows's gradient for x has only the direct path through y_j: r "
                "depends on every x_k of the row. Which sum does that add? my_dy0_dx1, above "
                "the exercise's answer cell, checks one Jacobian entry that only it reaches", error.details,
                case=f"x of shape {shape}", mistake="rms_norm_rows/direct-path-only") from error
        if got_x is not None and weight_out_of_projection(got_x, values):
            raise GradingError(
                "rms_norm_rows's gradient for x is the closed form with the weight left out of "
                "the row's sum: it matches a sum over k of g_k x_hat_k where each y_k reaches x "
                "through r as w_k x_hat_k. my_dy0_dx1, above the exercise's answer cell, checks "
                "one Jacobian entry of that path", error.details, case=f"x of shape {shape}",
                mistake="rms_norm_rows/weight-out-of-projection") from error
        if got_x is not None and row_sum_not_averaged(got_x, values):
            raise GradingError(
                f"rms_norm_rows's gradient for x is the closed form with the row's sum "
                f"sum_k g_k w_k x_hat_k where it needs the mean, 1/D of it (D = {D}): r is "
                "the root of a mean of squares, so its derivative brings 1/D. my_dy0_dx1, above "
                "the exercise's answer cell, checks one Jacobian entry that shows it", error.details,
                case=f"x of shape {shape}", mistake="rms_norm_rows/row-sum-not-averaged") from error
        short = _values((2, 5), x.device, seed=11)
        if D > 16 and _right(function, short):
            raise GradingError(
                f"rms_norm_rows is right for rows of 5 but wrong for rows of {D}: a program "
                "must cover its whole row, so the block must be at least D "
                "(a power of two no narrower than the row, masked past its end), or loop over "
                "the row in blocks", error.details, case=f"x of shape {shape}",
                mistake="rms_norm_rows/block-narrower-than-row") from error
        rows = x.reshape(-1, D)
        if rows.shape[0] > FEW_ROWS:
            few = _values((FEW_ROWS, D), x.device, seed=12)
            name_rows_left_out(function, values, error, few, _right(function, few))
        if rows.shape[0] > 1:
            one = dict(values, x=rows[:1].clone())
            got, want = (_gradients(f, dict(values, x=rows))[1]
                         for f in (function, RMS_NORM_ROWS.reference))
            if (_right(function, one) and not torch.allclose(got, want, rtol=1e-5, atol=1e-7)
                    and one_rows_contribution_per_column(got, dict(values, x=rows))):
                raise GradingError(
                    "rms_norm_rows's weight gradient is right for one row but wrong for "
                    f"{rows.shape[0]} rows: it is a sum over every row, so each program must "
                    "write its own partial sums (one row of partials per program) and the host "
                    "adds them up afterwards; programs storing into one shared row overwrite "
                    "each other", error.details, case=f"x of shape {shape}",
                    mistake="rms_norm_rows/weight-gradient-one-row") from error
        # after the probes of the number of rows: 2 rows of this D wrong, 2 rows of 8 right,
        # and the output or the gradient for x wrong (a mean over the block changes both)
        if (D & (D - 1) and D < 16 and not getattr(error, "mistake", "")
                and _right(function, _values((2, 8), x.device, seed=13))
                and not _right(function, _values((2, D), x.device, seed=13))
                and not row_results_right(function, _values((2, D), x.device, seed=13))):
            raise GradingError(
                f"rms_norm_rows is right for rows of 8 (a power of two, as wide as its block) "
                f"but wrong for rows of {D}: a mean over the row divided by the block's width "
                "BLOCK_D instead of D? The masked lanes add 0 to tl.sum, but they are not "
                "entries of the row: divide by D, in forward's mean of x**2 and in backward's "
                "row sum", error.details, case=f"x of shape {shape}",
                mistake="rms_norm_rows/mean-over-block") from error
        # last: a probe above names what left memory unwritten where it can (rows left out)
        if reads_unwritten(lambda: _run(function, values)):
            rows = x.reshape(-1, D).shape[0]
            raise GradingError(
                "rms_norm_rows reads memory that no kernel wrote (x of shape "
                f"{shape}): its results change with what a fresh torch.empty buffer holds (the "
                "grader fills such buffers with NaN; on a GPU they hold whatever was there). "
                + ("With no rows, which programs run, and what wrote the partial rows you sum? "
                   if not rows else "Which entries of your buffers does no program store? ")
                + "Every entry returned or reduced must be stored by a kernel first, or "
                "allocated with torch.zeros", error.details, case=f"x of shape {shape}",
                mistake="rms_norm_rows/reads-unwritten-memory") from error
        raise


def check_eps(function, device) -> None:
    """eps = 0.5: the forward shows where eps went (1e-5 outside the root fails only backward)."""
    covers("eps")
    values = _values((3, 4), device, seed=6, eps=0.5)
    try:
        check_rows(function, values)
    except GradingError as error:
        x, weight = values["x"], values["weight"]
        try:
            got = function(x, weight, 0.5).detach()
        except Exception:  # noqa: BLE001 -- a probe: the battery's own message stands
            raise error from None
        wrong = {"adds eps outside the square root, 1 / (sqrt(mean(x**2)) + eps)":
                 x / (x.pow(2).mean(-1, keepdim=True).sqrt() + 0.5) * weight,
                 "ignores its eps argument": x * x.pow(2).mean(-1, keepdim=True).rsqrt() * weight,
                 "adds eps to the sum of squares before dividing by D, 1 / sqrt((sum(x**2) + "
                 "eps) / D), so eps is divided by D too":
                 x * ((x.pow(2).sum(-1, keepdim=True) + 0.5) / x.shape[-1]).rsqrt() * weight}
        for what, output in wrong.items():
            if got.shape == output.shape and torch.allclose(got, output, rtol=1e-5, atol=1e-7):
                raise GradingError(
                    f"rms_norm_rows's output is wrong with eps = 0.5: the forward {what}; "
                    "eps is added to the mean, inside the root, rstd = 1 / sqrt(mean(x**2) + "
                    "eps) (a small eps hides this in the output)", error.details,
                    case=error.case,
                    mistake={"outside the square root": "rms_norm_rows/eps-outside-root",
                             "ignores its eps": "rms_norm_rows/eps-ignored",
                             "before dividing by D": "rms_norm_rows/eps-divided-by-d"}) from error
        raise


def check_half(function, device) -> None:
    """float16 and bfloat16 within 2 ulp of the float32-computed reference cast back; a
    per-row rstd kept in the half dtype, and what Triton 3.9's interpreter gets wrong in
    bfloat16 (arithmetic, a conversion from float64), are named."""
    try:
        _check_half(function, device)
    except GradingError as error:
        dtype = next((d for d in (torch.float16, torch.bfloat16) if str(d) in str(error)), None)
        values = _values((6, 300), device, seed=7, dtype=torch.float32)
        if dtype == torch.bfloat16:
            x, weight = (values[n].to(dtype).requires_grad_() for n in ("x", "weight"))

            def run():
                out = function(x, weight, EPS)
                torch.autograd.grad(out, (x, weight), torch.ones_like(out))
            name_bfloat16_failure("rms_norm_rows", run, error)
        if dtype is not None and half_rstd(function, 16 * values["x"].to(dtype),
                                           values["weight"].to(dtype), EPS):
            raise GradingError(
                f"rms_norm_rows keeps its per-row rstd in {dtype} (its backward operator is "
                f"handed one {dtype} value per row): the contract keeps rstd in no dtype narrower "
                "than float32 (float64 for float64 input), since the gradient is computed "
                "from it", error.details,
                case=error.case, mistake="rms_norm_rows/half-rstd") from error
        raise


def _check_half(function, device) -> None:
    covers("float16 and bfloat16 within 2 ulp")
    values32 = _values((6, 300), device, seed=7, dtype=torch.float32)
    values32["x"] = 16 * values32["x"]  # a row's sum of squares overflows float16's 65504
    grad32 = sample((6, 300), device, seed=8, dtype=torch.float32)
    for dtype in (torch.float16, torch.bfloat16):
        x, weight = (values32[n].to(dtype).requires_grad_() for n in ("x", "weight"))
        grad_output = grad32.to(dtype)
        x32, w32 = (t.detach().float().requires_grad_() for t in (x, weight))
        want = RMS_NORM_ROWS.reference(x32, w32, EPS)
        want_grads = torch.autograd.grad(want, (x32, w32), grad_output.float())
        with case(f"{dtype}, x of shape (6, 300)"):
            try:
                out = function(x, weight, EPS)
            except (GradingError, NotImplementedError):
                raise
            except Exception as error:
                raise explain("rms_norm_rows", f"{dtype} call", error) from error
            from32 = function(x.detach().float(), weight.detach().float(), EPS).to(dtype)
            right32 = bool((from32 == want.to(dtype)).float().mean() > 0.9)
            check_within_ulps("rms_norm_rows", "rms_norm_rows's output", out,
                              want.to(dtype).detach(), right_from_float32=right32)
            grads = torch.autograd.grad(out, (x, weight), grad_output)
            for name, got, truth in zip(("x", "weight"), grads, want_grads):
                check_within_ulps("rms_norm_rows", f"the gradient for {name}", got,
                                  truth.to(dtype), right_from_float32=right32)


def check_kernels(function, device) -> None:
    """The arithmetic runs in the kernels (before the dtypes, whose hints blame a kernel)."""
    covers("arithmetic in the learner's kernels")
    values = _values((3, 7), device, seed=9)
    x, weight = (values[n].requires_grad_() for n in ("x", "weight"))
    check_in_kernels("rms_norm_rows", "forward", lambda: function(x, weight, EPS))
    out = function(x, weight, EPS)
    check_in_kernels("rms_norm_rows", "backward",
                     lambda: torch.autograd.grad(out, (x, weight), torch.ones_like(out)))


def check_operators(function, device) -> None:
    """Every operator passes opcheck with the arguments rms_norm_rows gave it."""
    values = _values((3, 7), device, seed=9)
    x, weight = (values[n].requires_grad_() for n in ("x", "weight"))
    grad_output = torch.ones_like(x)
    covers("opcheck")
    forward = operator_calls(lambda: function(x, weight, EPS))
    backward = operator_calls(lambda: torch.autograd.grad(function(x, weight, EPS),
                                                          (x, weight), grad_output))
    for (operator, args, kwargs), grad in [*((c, True) for c in forward[:1]),
                                           *((c, False) for c in backward
                                             if c[0] is not forward[0][0])]:
        args = tuple(a.detach().clone().requires_grad_(grad and a.is_floating_point())
                     if isinstance(a, torch.Tensor) else a for a in args)
        with case(f"opcheck of {operator}"):
            try:
                check_opcheck("rms_norm_rows", operator, args, kwargs)
            except GradingError:  # a fake that misdescribes an output: named, not torch's words
                check_operator_fake("rms_norm_rows", operator, args, kwargs, x.dtype)
                raise


def check_fake(function, device) -> None:
    """Every output of the forward operator, then rms_norm_rows's fake output against the real
    one for a float32 x and a transposed float64 x, then the backward operator's fakes."""
    x, weight, eps = _values((3, 2, 5), device, dtype=torch.float32).values()
    check_forward_fakes("rms_norm_rows", function, (x, weight, eps))  # rstd's dtype, float32
    transposed = _values((3, 5), device)["x"].t()  # float64
    weight64 = weight[:transposed.shape[-1]].to(transposed.dtype)
    cases = [("", (x, weight, eps)), (" for a transposed x", (transposed, weight64, eps))]
    check_output_fakes("rms_norm_rows", function, cases,
                       "return the layout your operator returns")
    check_backward_fakes("rms_norm_rows", function, (transposed, weight64, eps),
                         ("x", "weight"))


def rms_norm_rows_full(function, device) -> None:
    with kernel_battery("rms_norm_rows", function, device):
        check_operator(function, "rms_norm_rows", tuple(_values((2, 3), device).values()))
        check_no_buffer_kept(function, device)
        check_eps(function, device)
        for seed, shape in enumerate([(4, 5), (3, 2, 7), (FEW_ROWS, 6), (MANY_ROWS, 7)]):
            check_rows(function, _values(shape, device, seed=seed))
        check_zero_weight(function, device)
        x, weight = (v.requires_grad_() for v in list(_values((3, 4), device).values())[:2])
        check_ctx_tensors("rms_norm_rows", function(x, weight, EPS))
        covers("D not a power of two, up to 4096")
        for seed, shape in enumerate([(2, 300), (1, 4000)]):
            check_rows(function, _values(shape, device, seed=seed + 3))
        covers("1-D x and no rows")
        for shape in [(7,), (0, 6)]:
            check_rows(function, _values(shape, device, seed=5))
        check_each_input_alone(Calls(function), RMS_NORM_ROWS, _values((4, 6), device, seed=2))
        with case("a call on x of (40, 33), then one on (2, 5)"), poisoned_allocations():
            check_calls_of_two_sizes(Calls(function), RMS_NORM_ROWS, _values((40, 33), device,
                                     seed=13), _values((2, 5), device, seed=14))
        covers("gradcheck in float64")
        x, weight = (v.requires_grad_() for v in list(_values((2, 3), device).values())[:2])
        if not torch.autograd.gradcheck(lambda x, w: function(x, w, EPS), (x, weight),
                                        raise_exception=False):
            raise_if_stale("rms_norm_rows", lambda x, w: function(x, w, EPS),
                           {"x": x, "weight": weight})
            raise GradingError("gradcheck failed for rms_norm_rows: the analytic Jacobian "
                               "differs from the numerical one")
        check_kernels(function, device)
        check_non_contiguous(function, device)
        covers("one rstd saved per row")  # before the dtypes: names an rstd of another dtype
        check_saves_rstd(Calls(function), RMS_NORM_ROWS, _values((3, 2, 5), device, seed=8))
        check_half(function, device)
        check_float16_steps(function, device)
        check_half_squares(function, device)
        check_fake(function, device)
        check_operators(function, device)
        covers("torch.compile without graph breaks")
        check_compiled("rms_norm_rows", function, tuple(_values((4, 6), device, seed=4).values()))
        covers("None for an input that needs no gradient")
        check_frozen_inputs_get_none("rms_norm_rows", function, tuple(
            _values((4, 7), device, seed=33, dtype=torch.float32).values()))
        check_default_device_frozen(RMS_NORM_ROWS, function, _values(
            (4, 7), torch.device(device), seed=33, dtype=torch.float32), torch.device(device))
        check_no_global_rebound("rms_norm_rows", function, lambda: _run(function, _values(
            (9, 6), device, seed=32, dtype=torch.float32)))
        # last: a kept output or a stale one is named by the checks above
        check_no_tensor_kept("rms_norm_rows", function, [
            (f"{str(t)[6:]} x of (9, 6)", lambda t=t: _run(function, _values(
                (9, 6), device, seed=31, dtype=t))) for t in KEPT_DTYPES])


def _wide_rows(device, dtype) -> dict:
    """Rows of 300 entries near 16 in size: their sum of squares (about 77,000) overflows
    float16's 65504, so a sum accumulated in float16 is inf and the output 0."""
    values = _values((6, 300), device, seed=7, dtype=torch.float32)
    return {"x": (16 * values["x"]).to(dtype), "weight": values["weight"].to(dtype), "eps": EPS}


EXERCISES = [
    Exercise("rms_norm_rows", "13_kernels", rms_norm_rows_full,
             within=language_patched_once_per_launch,
             example=lambda: tuple(_values((3, 4), "cpu").values()),
             contract=("D not a power of two, up to 4096", "1-D x and no rows", "eps",
                       "gradcheck in float64", "non-contiguous inputs",
                       "float16 and bfloat16 within 2 ulp", "one rstd saved per row",
                       "arithmetic in the learner's kernels",
                       "opcheck", "torch.compile without graph breaks",
                       "None for an input that needs no gradient"),
             # no large case: the contract's limit is D up to 4096, which the battery reaches;
             # the number of rows has none, and 137 of them pass any grid a backward fixes
             domain=Domain(RMS_NORM_ROWS, lambda device, dtype=torch.float64, seed=0, eps=EPS:
                           _values((4, 7), device, seed=seed, dtype=dtype, eps=eps),
                           prepare=kernel_operator("rms_norm_rows"),
                           linear_memory=False, linear_memory_clause=KERNEL_MEMORY_CLAUSE,
                           constants={"eps": Constant(1e-8, 1.0, "eps a positive Python float, "
                                                      "as F.rms_norm's")},
                           dtypes=(torch.float64, torch.float32, torch.float16, torch.bfloat16),
                           dtype_clause="weight of x's dtype; rstd saved in no dtype narrower than "
                                        "float32 (nor than float64 for float64 input); half "
                                        "precision computed in float32",
                           accumulates={torch.float16: torch.float32,
                                        torch.bfloat16: torch.float32},
                           accumulation=Case(_wide_rows, "half precision computed in float32: "
                                             "a row's sum of squares past float16's range",
                                             dtype=torch.float16,
                                             # grad_output rounded to float16 moves a
                                             # weight gradient of 0.04 by 0.002
                                             tolerance=Tolerance(1e-2, 1e-2)))),
]
