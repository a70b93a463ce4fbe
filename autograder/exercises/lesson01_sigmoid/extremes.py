"""Lesson 01: probes at the ends of float ranges, which the batteries' sampled x never reach:
ScaledSigmoid at |x| up to 800 (its contract puts no limit on x), MyReLU at each dtype's
largest finite numbers, and what zeroes ScaledSigmoid's gradient at a tiny scale."""

import torch

from ...checks import Spec, make_inputs, reference_gradients, run_backward, run_forward
from ...errors import GradingError
from ...function_contract import rule_reference
from .sigmoid_probes import comparable

TINY = torch.finfo(torch.float64).tiny  # 2.2250738585072014e-308, the smallest normal float64

# (x, scale): the true gradient at x = -400 is 2.5 * 1.9e-174 (a normal float64); at -710
# e^-x overflows float64 (past 709.78) and sigma(x) is subnormal; at -710 with scale 1e300 the
# output and the gradient are about 4.5e-9, normal again; at +-800 the exact values round to
# 0 and 1 (no precision held there, as autograd's own gradient at x > 37 is 0: never nan)
LARGE_X = ((-710.0, 2.5), (-400.0, 2.5), (-800.0, 2.5), (800.0, 2.5), (-710.0, 1e300),
           (-400.0, 1e300))


def _step1(x, scale):
    """Step 1's derivative e^-x / (1 + e^-x)^2, times scale, evaluated as written."""
    e = torch.exp(-x)
    return scale * e / (1 + e) ** 2


def _exp_sigma_squared(x, scale):
    """The same derivative as e^-x sigma(x)^2, times scale."""
    s = torch.sigmoid(x)
    return scale * torch.exp(-x) * s * s


def check_scaled_large_x(function, spec: Spec, device) -> None:
    """Never nan, at any x; and to float64's precision where the output is a normal float64
    number, at x = -400 (scale 2.5 and 1e300) and x = -710 (scale 1e300). grad_output is 1."""
    rows = []
    for x_value, scale in LARGE_X:
        x = torch.tensor([x_value], dtype=torch.float64, device=device)
        inputs = make_inputs({"x": x, "scale": scale})
        forward = run_forward(function, spec, inputs)
        ones = torch.ones_like(x)
        grad = run_backward(spec, forward.output, inputs, ones).grads[0]
        if not (comparable(grad, x) and comparable(forward.output, x)):
            return  # a dtype or shape slip: the battery names it
        true = reference_gradients(spec, inputs, ones)["x"]
        # normal or not as the contract's output is: torch.sigmoid is 0 below x = -709.78
        expected = spec.reference(**make_inputs({"x": x, "scale": scale}, requires_grad=False))
        rows.append((x_value, scale, expected, grad.detach(), true))
    for x_value, scale, output, grad, true in rows:
        normal = bool((output.abs() >= TINY).all())
        finite = bool(torch.isfinite(grad).all())
        if finite and (not normal or torch.allclose(grad, true, rtol=1e-9, atol=0)
                       or _float32_step(function, spec, device, grad, x_value, scale)):
            continue
        where = f"x = {x_value:g}" + ("" if scale == 2.5 else f", scale = {scale:g}")
        what = "nan" if bool(grad.isnan().all()) else repr(grad.item())
        said = (f"ScaledSigmoid's gradient is {what} at {where}, where the true one is "
                f"{true.item():.3g}" + (" (a normal float64 number, as the output is)"
                                         if normal else "")
                + (_large_x_cause(rows) or _tail_shape(function, spec, device)))
        raise GradingError(said, mistake={
            "step 1's formula": "ScaledSigmoid/step-1-formula-overflows",
            "e^-x * sigma(x)^2": "ScaledSigmoid/exp-times-sigma-squared",
            "a cutoff, not lost digits": "ScaledSigmoid/gradient-cut-to-zero",
            "cancellation, not a cutoff": "ScaledSigmoid/gradient-cancels"})


# x from -0.5 down to -400, 0.5 apart: where a cutoff and a cancellation differ. A cutoff
# (sigma or the gradient set to 0 past a threshold) is right to 1e-12 above it and exactly 0
# below; a subtraction of two nearly equal numbers loses digits steadily as x falls (1e-12 near
# x = -10, 1e-8 near -20) before it reaches 0.
TAIL_PROBE = [-step / 2 for step in range(1, 801)]


def _tail_shape(function, spec: Spec, device) -> str:
    """Name a cutoff or a cancellation from the gradient's relative error on TAIL_PROBE (scale
    2.5, grad_output 1); the plain reminder where neither shape is proven."""
    plain = ": the contract holds for every x, however large"
    x = torch.tensor(TAIL_PROBE, dtype=torch.float64, device=device)
    inputs = make_inputs({"x": x, "scale": 2.5})
    try:
        ones = torch.ones_like(x)
        grad = run_backward(spec, run_forward(function, spec, inputs).output, inputs,
                            ones).grads[0]
    except Exception:  # noqa: BLE001 - the probe names nothing; the battery reports it
        return plain
    if not comparable(grad, x):
        return plain
    grad, true = grad.detach(), reference_gradients(spec, inputs, ones)["x"]
    relative = (grad - true).abs() / true.abs()
    lost = relative > 1e-12
    if not bool(lost.any()):
        return plain
    first = int(lost.nonzero()[0])  # the lost point nearest 0
    if bool((grad[lost] == 0).all()) and bool(lost[first:].all()):
        kept = f"down to x = {TAIL_PROBE[first - 1]:g}" if first else "nowhere"
        return (f": a cutoff, not lost digits: your gradient is right (to 1e-12) {kept} and "
                f"exactly 0 from x = {TAIL_PROBE[first]:g} down, while the true one stays a "
                "normal float64 number down to x = -708; does your code set sigma(x), or the "
                "gradient, to 0 past a threshold?")
    partial = lost & (grad != 0) & (relative < 0.5)
    if bool(partial.any()):
        at = [int(i) for i in partial.nonzero().flatten()]
        steps = sorted({at[0], at[len(at) // 2], at[-1]})
        growth = ", ".join(f"{relative[i].item():.1g} at x = {TAIL_PROBE[i]:g}" for i in steps)
        return (f": cancellation, not a cutoff: your gradient's relative error grows as x falls "
                f"({growth}) before it reaches 0; digits lost steadily are a subtraction of two "
                "nearly equal numbers: which step of your backward subtracts them?")
    return plain


def _float32_step(function, spec: Spec, device, grad, x_value, scale) -> bool:
    """A finite gradient that sigma(x) in float32 gives (0 at x = -400, where float32's sigma
    underflows), from an answer off by a float32 step at x = -50 and 1 too: left to the
    battery's precision finding, which names the float32 step."""
    s = torch.sigmoid(torch.tensor([x_value], dtype=torch.float32)).to(grad.dtype)
    if not torch.allclose(grad, (scale * s * (1 - s)).to(grad.device), rtol=1e-6, atol=0):
        return False
    x = torch.tensor([-50.0, 1.0], dtype=torch.float64, device=device)
    inputs = make_inputs({"x": x, "scale": 2.5})
    ones = torch.ones_like(x)
    got = run_backward(spec, run_forward(function, spec, inputs).output, inputs, ones).grads[0]
    true = reference_gradients(spec, inputs, ones)["x"]
    return (comparable(got, x) and torch.allclose(got, true, rtol=1e-5, atol=0)
            and not torch.allclose(got, true, rtol=1e-12, atol=0))


def _large_x_cause(rows) -> str:
    """Name the derivative written with e^-x when every probed gradient is what it gives."""
    for formula, cause in (
            (_step1, ": your gradient is step 1's formula e^-x / (1 + e^-x)^2 (times scale) "
                     "evaluated as written: e^-x overflows float64 to inf below x = -709.78, "
                     "and inf / inf is nan; below x = -354.9, (1 + e^-x)^2 overflows already, "
                     "which turns a normal gradient into 0"),
            (_exp_sigma_squared, ": your gradient is e^-x * sigma(x)^2 (times scale): e^-x "
                                 "overflows float64 to inf below x = -709.78 while sigma(x)^2 "
                                 "underflows to 0, and inf * 0 is nan; below x = -372, "
                                 "sigma(x)^2 underflows already, which turns a normal gradient "
                                 "into 0")):
        if all(torch.allclose(grad, formula(torch.tensor([x], dtype=grad.dtype,
                                                         device=grad.device), scale),
                              rtol=1e-9, atol=0, equal_nan=True)
               for x, scale, _, grad, _ in rows):
            return cause
    return ""


def check_relu_largest_finite(function, spec: Spec, device) -> None:
    """torch.relu's value and gradient at each dtype's largest finite numbers (float16's
    +-65504 and 4e4, float32's 3e38, float64's 1e308): an intermediate twice x's size, such as
    x + |x|, overflows there. grad_output is as large."""
    for dtype, values in ((torch.float16, (65504.0, -65504.0, 40000.0, -40000.0, 1.0)),
                          (torch.float32, (3e38, -3e38, 1.0)),
                          (torch.float64, (1e308, -1e308, 1.0))):
        x = torch.tensor(values, dtype=dtype, device=device)
        inputs = make_inputs({"x": x})
        forward = run_forward(function, spec, inputs)
        grad_output = x.detach().abs().flip(0)
        grad = run_backward(spec, forward.output, inputs, grad_output.clone()).grads[0]
        output = forward.output.detach()
        name = str(dtype).removeprefix("torch.")
        for what, got, true in (("output", output, torch.relu(x.detach())),
                                ("gradient", grad,
                                 torch.where(x.detach() > 0, grad_output, 0))):
            if not comparable(got, x) or torch.equal(got, true):
                continue
            at = int((got != true).nonzero()[0])
            cause = (": x + |x| is twice x, past the dtype's largest finite number "
                     f"({torch.finfo(dtype).max:g}), so (x + |x|) / 2 overflows to inf"
                     if what == "output" and torch.equal(got, (x.detach() + x.detach().abs()) / 2)
                     else ": an intermediate overflows the dtype's range "
                          f"(its largest finite number is {torch.finfo(dtype).max:g})")
            raise GradingError(
                f"MyReLU's {what} at x = {x[at].item():g} ({name}) is {got[at].item()!r}, where "
                f"torch.relu's is {true[at].item():g}{cause}; the contract holds wherever x is "
                "finite", mistake={"(x + |x|) / 2 overflows": "MyReLU/half-abs-overflows",
                                   "an intermediate overflows": "MyReLU/overflows-near-max"})


def check_relu_smallest_positive(function, spec: Spec, device) -> None:
    """torch.relu's value and gradient at the smallest positive numbers of each dtype the
    contract names: its smallest subnormal, a subnormal between, its smallest normal
    (finfo.tiny) and their negatives. A mask x > threshold, with the threshold a dtype's tiny
    or its eps, passes the float64 probe at 1e-300 and misplaces these. Each dtype's points
    are probed alone and repeated over 2^17 entries: a threshold used only past some size
    (a mask saved for large x, the output below) shows there."""
    for dtype, between in ((torch.float16, 1e-5), (torch.float32, 1e-39),
                           (torch.float64, 1e-310)):
        for repeats in (1, SIZE_GATED):
            _smallest_positive(function, spec, device, dtype, between, repeats)


SIZE_GATED = 21846  # the six points repeated: 131076 entries, past saving.HUGE's 2^17


def _smallest_positive(function, spec: Spec, device, dtype, between, repeats) -> None:
    info = torch.finfo(dtype)
    least = info.tiny * info.eps  # the smallest subnormal: 2^-24, 2^-149, 2^-1074
    points = (info.tiny, between, least, -least, -info.tiny, 1.0)
    x = torch.tensor(points, dtype=dtype, device=device).repeat(repeats)
    inputs = make_inputs({"x": x})
    forward = run_forward(function, spec, inputs)
    grad = run_backward(spec, forward.output, inputs, torch.ones_like(x)).grads[0]
    name = str(dtype).removeprefix("torch.")
    for what, got, true in (("gradient", grad, (x.detach() > 0).to(dtype)),
                            ("output", forward.output, torch.relu(x.detach()))):
        if not comparable(got, x) or torch.equal(got.detach(), true):
            continue
        at = int((got.detach() != true).nonzero()[0])
        kind = ("its smallest normal number, finfo.tiny" if at % 6 in (0, 4)
                else "a subnormal number")
        size = "" if repeats == 1 else f", in x of {x.numel()} entries"
        raise GradingError(
            f"{spec.name}'s {what} at x = {x[at].item():.4g} ({name}: {kind}{size}) is "
            f"{got[at].item()!r}, where torch.relu's is {true[at].item():g}"
            + (": the mask's threshold lies above 0 (x > 0 exactly is torch.relu's: every "
               "positive x, however small, passes grad_output through)"
               if at % 6 < 3 and what == "gradient" else
               ": the contract holds for every finite x, the smallest numbers included"),
            mistake={"threshold lies above 0": f"{spec.name}/mask-threshold-above-zero"})


# x finite, each side of 0 and 0 itself; grad_output not finite where x > 0 (an overflow
# upstream, in float16 say, puts infinities there), which torch.relu passes on, inf and nan
# included. Where x <= 0 grad_output stays finite: a grad_output of inf or nan where the ReLU
# blocks is an extreme no model meets and the lesson does not teach (issue 69), at which a
# product grad_output * mask, natural and right elsewhere, gives inf * 0 = nan.
RELU_X = (-2.0, -0.0, 0.0, -1.0, 1.5, 3.0, 2.5)
NON_FINITE = (0.5, -2.0, 1.5, 3.0, float("inf"), float("nan"), float("-inf"))


def check_relu_non_finite_grad_output(function, spec: Spec, device) -> None:
    """The contract's gradient for a grad_output holding inf, -inf and nan where x > 0, in every
    dtype of the contract: grad_output itself there (a clamp or nan_to_num on the gradient
    changes it), 0 where x <= 0."""
    for dtype in (torch.float64, torch.float32, torch.float16):
        x = torch.tensor(RELU_X, dtype=dtype, device=device)
        grad_output = torch.tensor(NON_FINITE, dtype=dtype, device=device)
        inputs = make_inputs({"x": x})
        forward = run_forward(function, spec, inputs)
        grad = run_backward(spec, forward.output, inputs, grad_output.clone()).grads[0]
        if not comparable(grad, x):
            continue  # a misshapen gradient is named by the battery's checks
        expected = torch.where(x > 0, grad_output, 0)
        wrong = ~torch.isclose(grad, expected, rtol=0, atol=0, equal_nan=True)
        if not wrong.any():
            continue
        at = int(wrong.nonzero()[0])
        said = (f"{spec.name}'s gradient at x = {x[at].item():g} is {grad[at].item()!r} for a "
                f"grad_output of {grad_output[at].item()!r} ({str(dtype).removeprefix('torch.')}),"
                f" where torch.relu's is {expected[at].item()!r}")
        raise GradingError(said + ": where x > 0 the gradient is grad_output itself, inf "
                           "and nan included; where x <= 0 it is 0 " + rule_reference("values"),
                           mistake=f"{spec.name}/non-finite-grad-output")
