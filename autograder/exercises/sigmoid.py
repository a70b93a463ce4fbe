"""Lesson 01: MySigmoid, MyReLU and ScaledSigmoid."""

import torch

from ..checks import (Spec, case, check_backward_by_hand, check_gradcheck, check_is_function,
                      check_no_ctx_tensors, check_values_and_gradients, check_version_tracking,
                      run_backward, run_forward, make_inputs)
from ..contract import check_each_input_alone, covers
from ..errors import GradingError
from ..exercise import Exercise, sample

# 0-d last, so that the first failure comes from a shape whose hint can name the mistake.
SHAPES = [(7,), (3, 4), (2, 3, 4), ()]

MY_SIGMOID = Spec("MySigmoid", ("x",), lambda x: torch.sigmoid(x))
MY_RELU = Spec("MyReLU", ("x",), lambda x: torch.relu(x))
SCALED_SIGMOID = Spec("ScaledSigmoid", ("x", "scale"), lambda x, scale: scale * torch.sigmoid(x))


def check_saves_only_output(spec: Spec, forward) -> None:
    """Sigmoid's derivative is y * (1 - y): the output is all backward needs."""
    roles = [saved.role for saved in forward.saved]
    if roles == ["output"]:
        return
    if any(role.startswith("input") for role in roles):
        raise GradingError(
            f"{spec.name} saved its input x: save the output y instead, since "
            "d sigmoid/dx = y * (1 - y) needs no recomputation"
        )
    if not roles:
        raise GradingError(f"{spec.name} saved nothing with ctx.save_for_backward: save the output y")
    raise GradingError(
        f"{spec.name} saved {len(roles)} tensor{'' if len(roles) == 1 else 's'} "
        f"({', '.join(roles)}): save exactly the output y"
    )


def check_extreme_inputs(function, spec: Spec, device) -> None:
    """Finite outputs and gradients for |x| up to 800 in float64."""
    x = torch.linspace(-800, 800, 33, dtype=torch.float64, device=device)
    inputs = make_inputs({"x": x})
    forward = run_forward(function, spec, inputs)
    if not torch.isfinite(forward.output).all():
        raise GradingError(
            f"{spec.name} returns inf or nan for large |x|: exp(x) overflows for x > 709; "
            "use exp(-|x|), which is at most 1"
        )
    backward = run_backward(spec, forward.output, inputs, torch.ones_like(forward.output))
    if not torch.isfinite(backward.grads[0]).all():
        raise GradingError(f"{spec.name}'s gradient is inf or nan for large |x|: "
                           "compute it from the saved output, y * (1 - y)")
    check_values_and_gradients(function, spec, {"x": x})
    covers("|x| up to 800")
    check_tails(function, spec, device)
    covers("left tail")


# sigma(x) for these x is between 1e-304 and 2e-9: tiny, but a float64 holds it to 16 digits.
TAILS = [-700.0, -300.0, -100.0, -40.0, -20.0]


def check_tails(function, spec: Spec, device) -> None:
    """Relative accuracy in the left tail, where sigma(x) ~ exp(x) is tiny but representable:
    a formula that cancels there (1 - 1 / (1 + z)) returns 0 and passes any absolute check."""
    x = torch.tensor(TAILS, dtype=torch.float64, device=device)
    got = run_forward(function, spec, make_inputs({"x": x})).output.detach()
    expected = torch.sigmoid(x)
    relative = ((got - expected).abs() / expected)
    if bool((relative > 1e-6).any()):
        worst = int(relative.argmax())
        raise GradingError(
            f"{spec.name} loses the left tail: at x = {TAILS[worst]!r} it gives "
            f"{got[worst].item()!r} where sigma(x) = {expected[worst].item()!r} (relative error "
            f"{relative[worst].item():.2g}): 1 - 1 / (1 + z) cancels to 0 there; use z / (1 + z) "
            "for x < 0")


def my_sigmoid_full(MySigmoid, device) -> None:
    function = check_is_function(MySigmoid, MY_SIGMOID)
    for seed, shape in enumerate(SHAPES):
        values = {"x": 3 * sample(shape, device, seed=seed)}
        with case(f"x of shape {shape}"):
            forward, backward = check_values_and_gradients(function, MY_SIGMOID, values)
            check_no_ctx_tensors(MY_SIGMOID, forward)
            check_saves_only_output(MY_SIGMOID, forward)
            check_backward_by_hand(MY_SIGMOID, backward)
    covers("saves only its output")
    check_each_input_alone(function, MY_SIGMOID, {"x": 3 * sample((3, 4), device)})
    check_values_and_gradients(function, MY_SIGMOID,
                               {"x": sample((3, 4), device, dtype=torch.float32)},
                               rtol=1e-5, atol=1e-6)
    check_extreme_inputs(function, MY_SIGMOID, device)
    check_version_tracking(function, MY_SIGMOID, {"x": sample((4,), device)})
    check_gradcheck(function, MY_SIGMOID, {"x": sample((3,), device)})


def check_gradient_at_zero(function, spec: Spec, device) -> None:
    """The contract (as torch.relu) gives gradient 0 at x = 0 exactly, +0.0 and -0.0 alike."""
    x = torch.tensor([-1.0, 0.0, 2.0, -0.0], dtype=torch.float64, device=device)
    inputs = make_inputs({"x": x})
    forward = run_forward(function, spec, inputs)
    grad = run_backward(spec, forward.output, inputs, torch.ones_like(forward.output)).grads[0]
    if isinstance(grad, torch.Tensor) and grad.shape == x.shape and bool(grad[[1, 3]].any()):
        raise GradingError(
            f"{spec.name}'s gradient at x = 0 is {grad[1].item()!r}, where the contract (and "
            "torch.relu) gives 0: the mask is x > 0, not x >= 0")
    with case("x holding exact zeros"):
        check_values_and_gradients(function, spec, {"x": x})
    covers("x exactly 0")


def my_relu_full(MyReLU, device) -> None:
    function = check_is_function(MyReLU, MY_RELU)
    for seed, shape in enumerate(SHAPES):
        values = {"x": sample(shape, device, seed=seed, away_from_zero=0.1)}
        with case(f"x of shape {shape}"):
            forward, backward = check_values_and_gradients(function, MY_RELU, values)
            check_no_ctx_tensors(MY_RELU, forward)
            check_backward_by_hand(MY_RELU, backward)
    covers("grad_output and x untouched")
    check_gradient_at_zero(function, MY_RELU, device)
    check_each_input_alone(function, MY_RELU, {"x": sample((3, 4), device, away_from_zero=0.1)})
    check_values_and_gradients(function, MY_RELU,
                               {"x": sample((3, 4), device, dtype=torch.float32,
                                            away_from_zero=0.1)}, rtol=1e-5, atol=1e-6)
    check_gradcheck(function, MY_RELU, {"x": sample((4,), device, away_from_zero=0.1)})


def _scaled_values(shape, device, scale, seed=0, dtype=torch.float64) -> dict:
    return {"x": sample(shape, device, seed=seed, dtype=dtype), "scale": scale}


def scaled_sigmoid_full(ScaledSigmoid, device) -> None:
    function = check_is_function(ScaledSigmoid, SCALED_SIGMOID)
    for seed, shape in enumerate(SHAPES):
        for scale in (2.5, -1.0, 0.0):
            with case(f"x of shape {shape}, scale={scale}"):
                forward, backward = check_values_and_gradients(
                    function, SCALED_SIGMOID, _scaled_values(shape, device, scale, seed))
                check_no_ctx_tensors(SCALED_SIGMOID, forward)
                check_backward_by_hand(SCALED_SIGMOID, backward)
    covers("scale of 0")
    covers("negative scale")
    check_each_input_alone(function, SCALED_SIGMOID, _scaled_values((3, 4), device, 2.5))
    check_values_and_gradients(function, SCALED_SIGMOID,
                               _scaled_values((3, 4), device, 2.5, dtype=torch.float32),
                               rtol=1e-5, atol=1e-6)
    check_gradcheck(function, SCALED_SIGMOID, _scaled_values((3,), device, -1.5))


EXERCISES = [
    Exercise("MySigmoid", "01_sigmoid", my_sigmoid_full,
             contract=("|x| up to 800", "left tail", "saves only its output"),
             example=lambda: (3 * sample((5,), "cpu"),)),
    Exercise("MyReLU", "01_sigmoid", my_relu_full, contract=("x exactly 0", "grad_output and x untouched"),
             example=lambda: (sample((6,), "cpu", away_from_zero=0.1),)),
    Exercise("ScaledSigmoid", "01_sigmoid", scaled_sigmoid_full,
             contract=("scale of 0", "negative scale"),
             example=lambda: tuple(_scaled_values((5,), "cpu", 2.5).values())),
]
