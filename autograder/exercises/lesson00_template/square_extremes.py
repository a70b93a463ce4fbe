"""Lesson 00: Square at the extremes of its contract's "any finite value": x = 0, a square
that overflows while 2x does not, one that underflows (to 0 or to a subnormal) while 2x does
not, tiny x down to the smallest subnormal, and x where 2x overflows too."""

import torch

from ...checks import (Spec, case, check_values_and_gradients, make_inputs, run_backward,
                      run_forward)
from ...contract import covers
from ...errors import GradingError

SQUARE = Spec("Square", ("x",), lambda x: x ** 2)


def check_square_at_zero(function, device) -> None:
    """x = 0 and x = -0.0 (no sample draws them), where the gradient 2x is 0: a gradient
    recovered from the saved output by dividing by x (2 * y / x) is nan there and right
    everywhere else; named."""
    x = torch.tensor([0.0, -0.0, 1.5, -0.5], dtype=torch.float64, device=device)
    with case("x = 0 and x = -0.0"):
        try:
            check_values_and_gradients(function, SQUARE, {"x": x})
        except GradingError as error:
            if error.mistake != "Square/non-finite-gradient":
                raise
            raise GradingError(
                "your gradient for x is nan at x = 0, where 2x is 0: does backward divide by "
                "x (2 * y / x, the output over the input)? x = 0 is in the contract: which "
                "saved tensor gives 2x with nothing to divide by?", error.details,
                mistake="Square/nan-at-zero") from error
    covers("x = 0")


# per dtype, an |x| whose square overflows to inf while 2x stays finite, and one whose square
# does not overflow but which a narrower dtype cannot hold (float32's range ends at 3.4e38,
# float16's at 65504): a gradient inf there too went through a narrower dtype, named elsewhere
LARGE_X = {torch.float64: (1e160, 1e39), torch.float32: (1e20, 1e5)}


def check_square_large_x(function, device) -> None:
    """x so large that x ** 2 is inf (1e160 in float64, 1e20 in float32) while the gradient 2x
    is finite: a gradient recovered from the saved output (2 * y / x) is inf there and right
    on every value the samples draw; named, in both dtypes."""
    for dtype, (large, moderate) in LARGE_X.items():
        x = torch.tensor([large, -large, moderate, 1.5], dtype=dtype, device=device)
        inputs = make_inputs({"x": x})
        forward = run_forward(function, SQUARE, inputs)
        grad_output = torch.full_like(x, 0.25)
        grad, = run_backward(SQUARE, forward.output, inputs, grad_output).grads
        if not (isinstance(grad, torch.Tensor) and grad.shape == x.shape
                and not grad[:2].isfinite().all() and grad[2:].isfinite().all()):
            continue
        if any(saved.tensor.dtype != dtype for saved in forward.saved):
            continue  # a narrower copy saved overflows on its own: named by later checks
        from_output = any(saved.role == "output" for saved in forward.saved)
        raise GradingError(
            f"your gradient for x is {grad[0].item()} at x = {large:g} ({dtype}), where "
            f"autograd gives 2x * grad_output = {0.5 * large:g}: x ** 2 overflows to inf "
            "there (the output is inf, as x ** 2 is), the gradient 2x does not; "
            + ("backward computes from the saved output (2 * y / x?)"
               if from_output else "does backward square x, or divide by it?")
            + " Any finite x is in the contract: which saved tensor gives 2x without passing "
            "through x ** 2?", mistake="Square/overflows-from-output")
    covers("x whose square overflows")


# per dtype, an |x| where 2x overflows too; grad_output 3 and 2.5, where the product overflows in
# every order (autograd's gradient is inf, compared exactly), and 0.25, where only 2x does
# (inf, autograd's order, 2x first, or the finite product 2x * grad_output: the contract allows
# either)
HUGE_X = {torch.float64: 1e308, torch.float32: 2e38}
HUGE_GRAD_OUTPUT = (3.0, 2.5, 0.25, -0.25, 1.0)


def check_square_huge_x(function, device) -> None:
    """x so large that 2x overflows too (1e308 in float64, 2e38 in float32): autograd gives an
    inf output and, where 2x * grad_output overflows, an inf gradient, compared exactly; a
    gradient clamped or passed through nan_to_num (the largest finite float instead) is named,
    in both dtypes. Where only 2x overflows, inf or the finite product."""
    for dtype, huge in HUGE_X.items():
        x = torch.tensor([huge, -huge, huge, -huge, 1.5], dtype=dtype, device=device)
        grad_output = torch.tensor(HUGE_GRAD_OUTPUT, dtype=dtype, device=device)
        inputs = make_inputs({"x": x})
        forward = run_forward(function, SQUARE, inputs)
        grad, = run_backward(SQUARE, forward.output, inputs, grad_output).grads
        for what, got, want in (("output", forward.output, x ** 2),
                                ("gradient for x", grad, 2 * x * grad_output)):
            if not (isinstance(got, torch.Tensor) and got.shape == x.shape
                    and got.dtype == dtype):
                return  # named by the checks above
            got = got.detach()
            product = 2 * x.double() * grad_output.double()  # the finite product at 2 and 3
            right = got == want
            if what != "output":
                right[2:4] |= (got[2:4] - product[2:4]).abs() <= 1e-5 * product[2:4].abs()
            if right[:4].all():
                continue
            at = (~right[:4]).nonzero()[0].item()
            raise GradingError(
                f"your {what} is {got[at].item():g} at x = {x[at].item():g} ({dtype}), where "
                f"autograd gives {want[at].item()} (grad_output = {grad_output[at].item():g})"
                + (f" and the product 2x * grad_output is {product[at].item():g}, either allowed"
                   if what != "output" and at >= 2 else "")
                + ": there 2x overflows too, and any finite x is in the contract; does your "
                "code turn inf into a finite number (nan_to_num, clamp)?",
                mistake="Square/makes-overflow-finite")
    covers("x whose 2x overflows")


# per dtype, an |x| whose square underflows to 0, one whose square is subnormal (a few digits
# left), tiny ones down to the smallest subnormal x (a threshold on |x| anywhere in the range
# cuts one of them), and one whose square is a normal number but which a narrower dtype flushes
# (float32's range ends near 1e-45, float16's near 6e-8): 2x is not 0 at any of them
SMALL_X = {torch.float64: (1e-170, 3e-160, (1e-250, 1e-300, 5e-324), 1e-50),
           torch.float32: (1e-25, 3e-22, (1e-30, 1e-39, 1e-45), 1e-7)}
SMALL_RTOL = {torch.float64: 1e-12, torch.float32: 1e-5}
# grad_output 0.25, and 2.0 at the tiny x: a power of two, so that 2x * grad_output is exact
# in every order, subnormal or not
TINY_GRAD_OUTPUT = 2.0


def check_square_small_x(function, device) -> None:
    """x so small that x ** 2 underflows to 0 (1e-170 in float64, 1e-25 in float32) or to a
    subnormal with few digits (3e-160, 3e-22) while 2x is a normal number: a gradient recovered
    from the saved output (2 * y / x, guarded at x = 0 and where y is inf) is 0 or a few digits
    off there; then tiny x down to the smallest subnormal (1e-250, 1e-300, 5e-324; 1e-30, 1e-39,
    1e-45), where a gradient cut to 0 below a threshold of |x| shows; compared relatively (the
    true gradient is tiny), named, in both dtypes."""
    for dtype, (zero, subnormal, tiny, moderate) in SMALL_X.items():
        # the last two right unless the arithmetic is narrower (0.3711: no bfloat16 holds it)
        x = torch.tensor([zero, -zero, subnormal, -subnormal, tiny[0], -tiny[1], tiny[2],
                          moderate, 0.3711], dtype=dtype, device=device)
        inputs = make_inputs({"x": x})
        forward = run_forward(function, SQUARE, inputs)
        grad_output = torch.full_like(x, 0.25)
        grad_output[4:7] = TINY_GRAD_OUTPUT
        grad, = run_backward(SQUARE, forward.output, inputs, grad_output).grads
        if not (isinstance(grad, torch.Tensor) and grad.shape == x.shape):
            continue  # named by the checks above
        truth = 2 * x.double() * grad_output.double()
        got = grad.detach().double()
        bad = (~((got - truth).abs() <= SMALL_RTOL[dtype] * truth.abs())).nonzero().flatten()
        if (len(bad) == 0 or bad[-1].item() >= len(x) - 2
                or any(saved.tensor.dtype != dtype for saved in forward.saved)):
            continue  # a narrower copy saved, or narrower arithmetic: named by later checks
        at = bad[0].item()
        from_output = any(saved.role == "output" for saved in forward.saved)
        square = (x[at] ** 2).item()
        # a squaring backward leaves the subnormal squares' few digits (not 0); a gradient 0 at
        # x = 1e-170 (1e-25) or a tinier x, and 0 or right at the subnormal squares, is cut
        # below a threshold
        squared = bool(((got[2:4] != 0) & (got[2:4] != truth[2:4])).any())
        cut = not from_output and got[at].item() == 0 and not squared
        cause = ("backward computes from the saved output (2 * y / x?)" if from_output else
                 "does backward set the gradient to 0 below a threshold of |x| (a where or a "
                 "mask)?" if cut else "does backward square x, or divide by it?")
        raise GradingError(
            f"your gradient for x is {got[at].item():.6g} at x = {x[at].item():g} ({dtype}), "
            f"where autograd gives 2x * grad_output = {truth[at].item():.6g}: x ** 2 "
            + ("underflows to 0 there" if square == 0 else
               f"is {square:.4g} there, a subnormal number with few digits left")
            + ", 2x does not; " + cause
            + (" Any finite x is in the contract, down to the smallest subnormal: how small "
               "must x be for 2x itself to be 0?" if cut else
               " Any finite x is in the contract, the tiny ones too: which saved tensor gives "
               "2x without passing through x ** 2?"), mistake="Square/underflows-from-output")
    covers("x whose square underflows")
