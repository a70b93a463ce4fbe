"""Lesson 02's transfer exercise: Bilinear, F.bilinear with a three-index weight."""

import itertools

import torch
import torch.nn.functional as F

from ..checks import (Spec, case, check_gradcheck, check_is_function, check_no_ctx_tensors,
                      check_values_and_gradients, make_inputs, reference_gradients, run_backward,
                      run_forward)
from ..contract import check_each_input_alone, covers
from ..diagnose import diagnose_gradient
from ..exercise import Exercise, sample

LATER_IN_LESSON = True

BILINEAR = Spec("Bilinear", ("x1", "x2", "weight", "bias"),
                lambda x1, x2, weight, bias=None: F.bilinear(x1, x2, weight, bias))

OUT = 4
LEADING_SHAPES = [(5,), (2, 3), ()]
# n1 != n2 first, so that x1 and x2 mixed up cannot even have the right shapes; then n1 == n2,
# where a weight read as (out, n2, n1) runs and is wrong.
FEATURES = [(3, 2), (3, 3)]


def bilinear_values(leading, n1, n2, device, *, bias=True, seed=0) -> dict:
    values = {"x1": sample((*leading, n1), device, seed=seed),
              "x2": sample((*leading, n2), device, seed=seed + 1),
              "weight": sample((OUT, n1, n2), device, seed=seed + 2)}
    if bias:
        values["bias"] = sample((OUT,), device, seed=seed + 3)
    return values


def check_noncontiguous_grad_output(function, spec: Spec, values: dict) -> None:
    """autograd may hand backward a grad_output that is not contiguous (a transpose's
    gradient is one): every gradient must still be right. ``.view`` raises on it."""
    inputs = make_inputs(values)
    forward = run_forward(function, spec, inputs)
    shape = tuple(forward.output.shape)
    grad_output = sample(shape[::-1], forward.output.device, seed=9).permute(
        *reversed(range(len(shape))))
    grads = run_backward(spec, forward.output, inputs, grad_output).grads
    truth = reference_gradients(spec, inputs, grad_output.contiguous())
    for name, grad in zip(inputs, grads):
        if name in truth:
            diagnose_gradient(name, grad, truth[name], rtol=1e-5, atol=1e-7)
    covers("non-contiguous grad_output")


def bilinear_full(Bilinear, device) -> None:
    function = check_is_function(Bilinear, BILINEAR)
    cases = itertools.product(FEATURES, LEADING_SHAPES, (True, False))
    for seed, ((n1, n2), leading, bias) in enumerate(cases):
        values = bilinear_values(leading, n1, n2, device, bias=bias, seed=seed)
        with case(f"x1 of shape {(*leading, n1)}, x2 of shape {(*leading, n2)}, "
                  f"bias={'a tensor' if bias else 'None'}"):
            forward, _ = check_values_and_gradients(function, BILINEAR, values)
            check_no_ctx_tensors(BILINEAR, forward)
    covers("x1 and x2 with no leading dimension")
    covers("bias=None")
    covers("n1 == n2")
    with case("grad_output not contiguous"):
        check_noncontiguous_grad_output(function, BILINEAR, bilinear_values((2, 3), 3, 2, device))
    for bias in (True, False):
        check_each_input_alone(function, BILINEAR,
                               bilinear_values((5,), 3, 2, device, bias=bias),
                               frozen_get_none=True)
    covers("each gradient only when needed")
    check_gradcheck(function, BILINEAR, bilinear_values((2,), 2, 3, device))


EXERCISES = [
    Exercise("Bilinear", "02_linear", bilinear_full,
             contract=("x1 and x2 with no leading dimension", "bias=None", "n1 == n2",
                       "non-contiguous grad_output", "each gradient only when needed"),
             example=lambda: tuple(bilinear_values((5,), 3, 2, "cpu").values())),
]
