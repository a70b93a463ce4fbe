"""Lesson 01: what names a cause in the sigmoid batteries of sigmoid.py: where an overflow
lies, and probes that name a slip by reproducing it: MySigmoid's branches swapped,
ScaledSigmoid's backward applying MySigmoid's derivative to its output, and its scale rounded
to float32."""


import torch

from ...checks import Spec, make_inputs, reference_gradients, run_backward, run_forward
from ...errors import GradingError
from ...exercise import sample
from ...probes import record_returned_gradients


def comparable(got, like: torch.Tensor) -> bool:
    """A tensor of ``like``'s shape, dtype and device: what a probe may compare with it. Any
    other result (float32 from a float64 input, say) is left to the battery, whose checks name
    the dtype, shape or device."""
    return (isinstance(got, torch.Tensor) and got.shape == like.shape
            and got.dtype == like.dtype and got.device == like.device)


def check_branches_not_swapped(function, spec: Spec, device) -> None:
    """Values equal to sigma(-x) = 1 - sigma(x), on x away from 0 where the two differ: each
    sign got the other side's formula; or so on the left side only. A call that raises is left
    to the battery."""
    x = torch.tensor([-6.0, -2.5, -1.0, 0.5, 1.5, 4.0], dtype=torch.float64, device=device)
    try:
        got = run_forward(function, spec, make_inputs({"x": x})).output.detach()
    except Exception:  # noqa: BLE001 - the battery reports it
        return
    if not comparable(got, x):
        return
    if torch.allclose(got, torch.sigmoid(-x), rtol=1e-10, atol=0):
        raise GradingError(
            f"{spec.name}'s output at x = 1.5 is {got[4].item():.6g}, where sigma(1.5) = "
            f"{torch.sigmoid(x[4]).item():.6g}: at every x probed it is sigma(-x) = 1 - sigma(x), "
            "so each side of 0 got the other side's formula, or x's sign is flipped somewhere; "
            "sigma(x) is above 1/2 where x > 0",
            mistake=f"{spec.name}/swapped-branches")
    # right for x > 0, sigma(-x) for x < 0: the left formula fed e^-x = e^|x| (z = exp(-x),
    # no abs), or the right formula on both sides
    if torch.allclose(got, torch.sigmoid(x.abs()), rtol=1e-10, atol=0):
        raise GradingError(
            f"{spec.name}'s output at x = -2.5 is {got[1].item():.6g}, where sigma(-2.5) = "
            f"{torch.sigmoid(x[1]).item():.6g}: right at every x > 0 probed, but at every x < 0 "
            "it is sigma(-x) = 1 - sigma(x), and sigma(x) is below 1/2 where x < 0: does the "
            "left side's formula get z = e^-x (no abs), which is e^|x| there, or is it the "
            "right side's formula?", mistake=f"{spec.name}/left-side-mirrored")


def check_output_used_as_sigmoid(function, spec: Spec, device) -> None:
    """At scale 2.5, a grad_x equal to grad_output * y * (1 - y), with y the output
    scale * sigmoid(x), and not the true one: MySigmoid's derivative in y, applied to a y that
    is not sigma(x)."""
    inputs = make_inputs({"x": sample((7,), device, seed=0), "scale": 2.5})
    forward = run_forward(function, spec, inputs)
    grad_output = 0.5 + torch.rand(7, dtype=torch.float64,
                                   generator=torch.Generator().manual_seed(6)).to(device)
    grad = run_backward(spec, forward.output, inputs, grad_output).grads[0]
    y = forward.output.detach()
    true = reference_gradients(spec, inputs, grad_output)["x"]
    # with or without the factor scale in front (scale * y (1 - y) is the review's)
    as_sigmoid = any(torch.allclose(grad, factor * grad_output * y * (1 - y))
                     for factor in (1.0, 2.5)) if comparable(grad, true) else False
    if comparable(y, true) and as_sigmoid and not torch.allclose(grad, true):
        raise GradingError(
            "ScaledSigmoid's grad_x at scale = 2.5 is MySigmoid's derivative in y (times scale "
            "or not) applied to the output y = scale * sigmoid(x): that derivative holds for "
            "y = sigma(x), which this y is only at scale = 1. What does backward start from, and where does the "
            "factor scale go? (Hint 1 of the scaled sigmoid asks)",
            mistake="ScaledSigmoid/output-used-as-sigmoid")


def overflow_cause(x: torch.Tensor, bad: torch.Tensor) -> str:
    """Blame an exponential only where every bad value lies past |x| = 709.78, where e^|x|
    overflows float64, and only on the side(s) where they lie."""
    if bool((x[bad].abs() <= 709.78).any()):
        return ""
    right, left = bool((x[bad] > 0).any()), bool((x[bad] < 0).any())
    overflow = " and ".join(part for part, side in [("exp(x) overflows for x > 709", right),
                                                   ("exp(-x) overflows for x < -709", left)]
                            if side)
    return f"{overflow}; use exp(-|x|), which is at most 1"


def check_scale_not_float32(function, spec: Spec, device) -> None:
    """At scale 0.1, which no float32 number is, an output or a grad_x equal to the truth with
    scale rounded to float32, and not to the truth: scale became a float32 tensor (what
    torch.tensor(scale) makes without dtype=). A call that raises is left to the battery."""
    scale = 0.1
    rounded = torch.tensor(scale, dtype=torch.float32).item()  # 0.10000000149011612
    x = sample((7,), device, seed=0)
    grad_output = 0.5 + torch.rand(7, dtype=torch.float64,
                                   generator=torch.Generator().manual_seed(6)).to(device)
    inputs = make_inputs({"x": x, "scale": scale})
    try:
        forward = run_forward(function, spec, inputs)
        grad = run_backward(spec, forward.output, inputs, grad_output).grads[0]
    except Exception:  # noqa: BLE001 - the battery reports it
        return
    narrow = make_inputs({"x": x, "scale": rounded})
    results = [("output", forward.output, spec.reference(**inputs), spec.reference(**narrow)),
               ("grad_x", grad, reference_gradients(spec, inputs, grad_output)["x"],
                reference_gradients(spec, narrow, grad_output)["x"])]
    for what, got, truth, with_rounded in results:
        if (comparable(got, truth)
                and torch.allclose(got.detach(), with_rounded, rtol=1e-12, atol=0)
                and not torch.allclose(got.detach(), truth, rtol=1e-12, atol=0)):
            raise GradingError(
                f"ScaledSigmoid's {what} at scale = 0.1 is what the true one is at scale = "
                f"{rounded!r}, 0.1 rounded to float32: scale became a float32 tensor: "
                "torch.tensor(scale) without dtype= makes one, which keeps 7 digits of it; "
                "multiply by the Python float itself", mistake="ScaledSigmoid/float32-scale")


def check_mask_not_float32(function, spec: Spec, device) -> None:
    """A gradient (grad_output all ones) equal, at every x probed, to the mask x.float() > 0
    and not to x > 0: the mask was taken in float32, where 1e-300 and 1e-46 round to 0 (1e-44
    and 1e-40 do not, which a threshold such as 1e-6 would zero). A call that raises is left to
    the battery."""
    x = torch.tensor([1e-300, 1e-46, 1e-44, 1e-40, 2.0, -1.0, -1e-300], dtype=torch.float64,
                     device=device)
    inputs = make_inputs({"x": x})
    try:
        forward = run_forward(function, spec, inputs)
        grad = run_backward(spec, forward.output, inputs, torch.ones_like(x)).grads[0]
    except Exception:  # noqa: BLE001 - the battery reports it
        return
    narrow, true = (x.float() > 0).to(x.dtype), (x > 0).to(x.dtype)
    if comparable(grad, x) and torch.equal(grad, narrow) and not torch.equal(grad, true):
        raise GradingError(
            f"{spec.name}'s gradient at x = 1e-300 is {grad[0].item()!r}, where x > 0 and "
            "the gradient is grad_output (1 here): at every x probed your gradient is the mask "
            "x > 0 taken in float32, where 1e-300 rounds to 0; take the mask of x in its own "
            "dtype", mistake=f"{spec.name}/mask-in-float32")


def check_gradient_count(function, spec: Spec, values: dict) -> None:
    """Backward returns one gradient per input, no more: the engine drops extra trailing
    Nones without a word, so only what backward itself returned shows them. A call that raises
    is left to the battery."""
    probe, returned = record_returned_gradients(function)
    inputs = make_inputs(values)
    try:
        forward = run_forward(probe, spec, inputs)
        run_backward(spec, forward.output, inputs, torch.ones_like(forward.output))
    except Exception:  # noqa: BLE001 - the battery reports it
        return
    for grads in returned:
        if isinstance(grads, tuple) and len(grads) > len(inputs):
            raise GradingError(
                f"{spec.name}.backward returned {len(grads)} gradients for {len(inputs)} inputs "
                f"({', '.join(inputs)}): the contract asks one per input, in forward's order; "
                "PyTorch drops extra trailing Nones without a word, but an extra gradient "
                "that is not None fails", mistake=f"{spec.name}/wrong-gradient-count")

