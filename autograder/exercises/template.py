"""Lesson 00: Square and WeightedSum."""

import torch

from ..checks import (Spec, case, check_gradcheck, check_is_function, check_no_ctx_tensors,
                      check_values_and_gradients, make_inputs, reference_gradients, run_backward,
                      run_forward)
from ..contract import check_each_input_alone, covers
from ..errors import GradingError
from ..exercise import Exercise, sample

# 0-d last: on a single element every wrong gradient looks like a sign or a constant factor,
# so the first failure should come from a shape whose hint can tell them apart.
SHAPES = [(5,), (3, 4), (2, 3, 4), ()]

SQUARE = Spec("Square", ("x",), lambda x: x ** 2)
WEIGHTED_SUM = Spec("WeightedSum", ("x1", "x2", "w1", "w2"),
                    lambda x1, x2, w1, w2: w1 * x1 + w2 * x2)


def check_input_version_tracking(function, spec: Spec, values: dict) -> None:
    """Change the input in place between forward and backward: autograd must refuse, or the
    gradient must still be the one of the input forward saw. A backward that silently uses the
    new values read a tensor saved without version tracking (``x.data``, ``x.detach()``)."""
    name = spec.input_names[0]
    inputs = make_inputs(values)
    # function.apply, not run_forward: saved-tensor hooks (which the probes use) turn autograd's
    # version check off
    output = function.apply(*inputs.values())
    grad_output = torch.ones_like(output)
    with torch.no_grad():
        inputs[name].mul_(2)
    try:
        grad, = torch.autograd.grad(output, inputs[name], grad_output, allow_unused=True)
    except RuntimeError as error:
        if "modified by an inplace operation" in str(error):  # what save_for_backward is for
            return
        raise
    fresh = make_inputs(values)
    expected, = torch.autograd.grad(spec.reference(**fresh), fresh[name], grad_output)
    if isinstance(grad, torch.Tensor) and not torch.allclose(grad, expected):
        raise GradingError(
            f"{spec.name} saved a tensor autograd cannot check for in-place changes (such as "
            f"{name}.data or {name}.detach()): after {name} was changed in place, backward "
            f"silently used the new values; save {name} itself with "
            f"ctx.save_for_backward({name})")


def check_uses_grad_output(function, spec: Spec, values: dict) -> None:
    """The chain rule multiplies by grad_output: a backward that returns the local derivative
    alone (``2 * x`` for Square) gives the gradient for grad_output = 1, whatever it is given."""
    inputs = make_inputs(values)
    forward = run_forward(function, spec, inputs)
    grad_output = 0.5 + torch.rand(forward.output.shape, dtype=forward.output.dtype,
                                   generator=torch.Generator().manual_seed(3))
    grad_output = grad_output.to(forward.output.device)
    grads = run_backward(spec, forward.output, inputs, grad_output).grads
    true = reference_gradients(spec, inputs, grad_output)
    local = reference_gradients(spec, inputs, torch.ones_like(grad_output))
    for name, grad in zip(inputs, grads):
        if (name in true and isinstance(grad, torch.Tensor) and grad.shape == true[name].shape
                and not torch.allclose(grad, true[name]) and torch.allclose(grad, local[name])):
            raise GradingError(
                f"{spec.name}.backward ignores grad_output: grad_{name} is the local derivative "
                f"dy/d{name} alone, the right gradient only when grad_output is all ones; "
                f"multiply by grad_output (chain rule: grad_{name} = grad_output * dy/d{name})")


def square_full(Square, device) -> None:
    function = check_is_function(Square, SQUARE)
    check_uses_grad_output(function, SQUARE, {"x": sample((4,), device)})
    for seed, shape in enumerate(SHAPES):
        values = {"x": sample(shape, device, seed=seed)}
        with case(f"x of shape {shape}"):
            forward, _ = check_values_and_gradients(function, SQUARE, values)
            check_no_ctx_tensors(SQUARE, forward)
            check_input_version_tracking(function, SQUARE, values)
    covers("0-d x")
    check_each_input_alone(function, SQUARE, {"x": sample((3, 4), device)})
    covers("float32")
    check_values_and_gradients(function, SQUARE, {"x": sample((3, 4), device, dtype=torch.float32)},
                               rtol=1e-5, atol=1e-6)
    check_gradcheck(function, SQUARE, {"x": sample((3,), device)})


def _weighted_values(shape, device, w1=0.5, w2=-2.0, seed=0, dtype=torch.float64) -> dict:
    return {"x1": sample(shape, device, seed=seed, dtype=dtype),
            "x2": sample(shape, device, seed=seed + 100, dtype=dtype), "w1": w1, "w2": w2}


def check_weights_not_swapped(function, device) -> None:
    """grad_x1 = w2 * grad_output and grad_x2 = w1 * grad_output: name the swap."""
    values = _weighted_values((4,), device)
    inputs = make_inputs(values)
    forward = run_forward(function, WEIGHTED_SUM, inputs)
    grad_output = sample((4,), device, seed=7)
    grads = run_backward(WEIGHTED_SUM, forward.output, inputs, grad_output).grads
    w1, w2 = values["w1"], values["w2"]
    if (all(isinstance(g, torch.Tensor) and g.shape == grad_output.shape for g in grads[:2])
            and torch.allclose(grads[0], w2 * grad_output)
            and torch.allclose(grads[1], w1 * grad_output)):
        raise GradingError(
            f"the weights are swapped: with w1={w1} and w2={w2} grad_x1 is w2 * grad_output and "
            "grad_x2 is w1 * grad_output; since y = w1 * x1 + w2 * x2, grad_x1 = w1 * "
            "grad_output")


def weighted_sum_full(WeightedSum, device) -> None:
    function = check_is_function(WeightedSum, WEIGHTED_SUM)
    check_weights_not_swapped(function, device)
    check_uses_grad_output(function, WEIGHTED_SUM, _weighted_values((4,), device))
    for seed, shape in enumerate(SHAPES):
        for w1, w2 in [(0.5, -2.0), (1.0, 0.0), (3.0, 3.0)]:
            forward, _ = check_values_and_gradients(
                function, WEIGHTED_SUM, _weighted_values(shape, device, w1, w2, seed))
            check_no_ctx_tensors(WEIGHTED_SUM, forward)
    covers("a weight of 0")
    covers("0-d inputs")
    check_each_input_alone(function, WEIGHTED_SUM, _weighted_values((2, 3), device))
    covers("float32")
    check_values_and_gradients(function, WEIGHTED_SUM,
                               _weighted_values((3, 4), device, dtype=torch.float32),
                               rtol=1e-5, atol=1e-6)
    check_gradcheck(function, WEIGHTED_SUM, _weighted_values((3,), device))


EXERCISES = [
    Exercise("Square", "00_template", square_full, contract=("0-d x", "float32"),
             example=lambda: (sample((4,), "cpu"),)),
    Exercise("WeightedSum", "00_template", weighted_sum_full,
             contract=("a weight of 0", "0-d inputs", "float32"),
             example=lambda: tuple(_weighted_values((4,), "cpu").values())),
]
