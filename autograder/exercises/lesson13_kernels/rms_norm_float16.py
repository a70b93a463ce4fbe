"""Lesson 13: rms_norm_rows in float16 where a step rounded to float16 shows: x_hat = x * rstd
below float16's smallest normal number (6.1e-5) with a weight in the thousands (the output),
and a row of small x (rstd near 260, eps included) with a grad_output of 2e-5, whose
bracket grad_hat - x_hat * mean(grad_hat * x_hat) lies below it too (the gradient for x).
Random values never get there: float16 rounding of x_hat or of the bracket costs under 2 ulp
in the result elsewhere, and 56 ulp (37 ulp) here. The silu_mul battery's
check_float16_steps is this probe's counterpart."""

import warnings

import torch
import torch.nn.functional as F

from ...checks import case
from ...errors import GradingError
from .kernel_ulps import ulps
from .rms_norm_spec import EPS

# row 0: x_hat[1] = 5e-5 * rstd (about 8.7e-7) is subnormal in float16, y[1] = x_hat[1] * 30000
# is not; row 1: rstd about 261, and its brackets are 2e-5 and less (subnormal), while
# grad_x = rstd * bracket is a normal float16 number
X = ((100.0, 5e-5, 3.0), (1e-3, 2e-3, 3e-3))
WEIGHT = (1.0, 30000.0, 1.0)
GRAD = ((1.0, 1.0, 1.0), (2e-5, 0.0, 0.0))


def check_float16_steps(function, device) -> None:
    """Output and both gradients in float16 within 2 ulp of the float32-computed reference
    cast back, on the rows above."""
    x16 = torch.tensor(X, device=device, dtype=torch.float16).requires_grad_()
    w16 = torch.tensor(WEIGHT, device=device, dtype=torch.float16).requires_grad_()
    g16 = torch.tensor(GRAD, device=device, dtype=torch.float16)
    x32, w32 = (t.detach().float().requires_grad_() for t in (x16, w16))
    want = F.rms_norm(x32, (3,), w32, EPS)
    want = (want, *torch.autograd.grad(want, (x32, w32), g16.float()))
    with case("float16, x of [[100, 5e-5, 3], [1e-3, 2e-3, 3e-3]], weight [1, 30000, 1]"), \
            warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        out = function(x16, w16, EPS)
        got = (out, *torch.autograd.grad(out, (x16, w16), g16))
    for what, mine, truth in zip(("output", "gradient for x", "gradient for weight"), got, want):
        truth = truth.detach().half()
        if mine.shape != truth.shape:
            continue  # the battery's shape checks name it
        # row by row: ulps measures a value far below its tensor's largest with float32's
        # spacing there, and row 1's y reaches 15672
        worst = torch.stack([ulps(m, t) for m, t in zip(mine.detach(), truth)]) \
            if mine.dim() == 2 else ulps(mine.detach(), truth)
        if worst.numel() and worst.max().item() > 2:
            index = tuple(int(i) for i in torch.unravel_index(torch.argmax(worst), worst.shape))
            raise GradingError(
                f"rms_norm_rows's {what} in float16 is {worst.max().item():.3g} ulp off at "
                f"index {index} (got {mine[index].item()!r}, expected {truth[index].item()!r}) "
                "on rows where x_hat = x * rstd (row 0) or the bracket "
                "grad_hat - x_hat * mean(grad_hat * x_hat) (row 1) lies below float16's "
                "smallest normal number (6.1e-5) but the result does not: a step computed in "
                "float16 (x_hat, rstd or the bracket rounded to float16 before a product) "
                "keeps only a few digits there. The contract computes half precision in "
                "float32, every product included: convert after loading, cast only when "
                "storing", mistake="rms_norm_rows/half-step-in-float16")


# a row whose squares pass float16's largest number (300**2 = 90000 > 65504) while its output,
# rstd and gradients do not: squares formed in float16 are inf, rstd = 1 / inf = 0, y = 0
WIDE_X, WIDE_WEIGHT, WIDE_GRAD = ((300.0, -400.0, 5.0),), (1.0, 2.0, 1.0), ((1.0, -1.0, 2.0),)


def check_half_squares(function, device) -> None:
    """Output and both gradients, in float16 and bfloat16, within 2 ulp of the float32-computed
    reference cast back on the row [300, -400, 5] (one tiny call each)."""
    for dtype in (torch.float16, torch.bfloat16):
        x = torch.tensor(WIDE_X, device=device, dtype=dtype).requires_grad_()
        w = torch.tensor(WIDE_WEIGHT, device=device, dtype=dtype).requires_grad_()
        g = torch.tensor(WIDE_GRAD, device=device, dtype=dtype)
        x32, w32 = (t.detach().float().requires_grad_() for t in (x, w))
        want = F.rms_norm(x32, (3,), w32, EPS)
        want = (want, *torch.autograd.grad(want, (x32, w32), g.float()))
        name = str(dtype)[6:]
        with case(f"{name}, x of [[300, -400, 5]], weight [1, 2, 1]"), \
                warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            out = function(x, w, EPS)
            got = (out, *torch.autograd.grad(out, (x, w), g))
        for what, mine, truth in zip(("output", "gradient for x", "gradient for weight"),
                                     got, want):
            truth = truth.detach().to(dtype)
            if mine.shape != truth.shape:
                continue  # the battery's shape checks name it
            worst = ulps(mine.detach(), truth)
            if worst.numel() and worst.max().item() > 2:
                index = tuple(int(i) for i in
                              torch.unravel_index(torch.argmax(worst), worst.shape))
                if dtype == torch.bfloat16:
                    raise GradingError(
                        f"rms_norm_rows's {what} in bfloat16 is {worst.max().item():.3g} ulp "
                        f"off at index {index} (got {mine[index].item()!r}, expected "
                        f"{truth[index].item()!r}) on the row [300, -400, 5]: a step computed "
                        "in bfloat16 (a square, x_hat or a product). The contract computes half "
                        "precision in float32, every product included: convert after loading",
                        mistake="rms_norm_rows/half-step-in-float16")
                raise GradingError(
                    f"rms_norm_rows's squares x * x computed in {name}? Its {what} is "
                    f"{worst.max().item():.3g} ulp off at index {index} (got "
                    f"{mine[index].item()!r}, expected {truth[index].item()!r}) on the {name} "
                    "row [300, -400, 5]: 300**2 = 90000 is past float16's largest number "
                    "(65504), so a square formed in float16 is inf, rstd = 1 / inf = 0 and the "
                    "output 0. The contract computes half precision in float32, every product "
                    "included: convert x to float32 after loading, before squaring it",
                    mistake="rms_norm_rows/half-square-in-float16")
