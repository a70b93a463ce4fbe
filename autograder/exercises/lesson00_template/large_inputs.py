"""Lesson 00: "any shape" and "any m and n" at a size the other checks never reach. A backward
that narrows its arithmetic only above some size is right on every small input and off by the
narrower dtype's digits on a large one: one large case in float64 (1e-12) and in float32 (1e-5),
compared relatively to the products' own scale, named as a size-dependent narrowing when the
same code is right on a small input, and only when the worst entry's own values, re-run alone
in a small input, come out right: a backward wrong at some values (a threshold on |x|) is named
by those values, not by a size."""

import torch

from ...checks import Spec, make_inputs, reference_gradients, run_backward, run_forward
from ...errors import GradingError

RTOL = {torch.float64: 1e-12, torch.float32: 1e-5}
DIGITS = {torch.float64: "float64 keeps about 16 digits, float32 about 7",
          torch.float32: "float32 keeps about 7 digits, float16 and bfloat16 3 or fewer"}


def _worst(function, spec: Spec, values: dict, seed: int):
    """(what, relative error, index of the worst entry) of the value and each gradient's worst entry against float64
    autograd, each error over the same sums taken on absolute values (no cancellation can
    shrink the scale); None where a result is not a tensor of the reference's shape."""
    inputs = make_inputs(values)
    forward = run_forward(function, spec, inputs)
    output = forward.output
    grad_output = torch.randn(output.shape, dtype=output.dtype,
                              generator=torch.Generator().manual_seed(seed)).to(output.device)
    grads = run_backward(spec, output, inputs, grad_output).grads
    absolute = {name: value.abs() for name, value in values.items()}
    want = reference_gradients(spec, inputs, grad_output)
    scale = reference_gradients(spec, make_inputs(absolute), grad_output.abs())
    pairs = [("output", output.detach(), spec.reference(**values), spec.reference(**absolute))]
    pairs += [(f"gradient for {name}", got, want[name], scale[name])
              for name, got in zip(spec.input_names, grads)]
    worst = []
    for what, got, right, bound in pairs:
        if not (isinstance(got, torch.Tensor) and got.shape == right.shape):
            return None
        error = ((got.detach().double() - right.double()) / bound.double().clamp_min(1e-300)).abs()
        if not error.numel():
            worst.append((what, 0.0, ()))
            continue
        flat = int(error.flatten().argmax())
        index = tuple(int(i) for i in torch.unravel_index(torch.tensor(flat), error.shape))
        worst.append((what, error.flatten()[flat].item(), index))
    return worst


def check_large_sizes(function, spec: Spec, small: dict, large: dict, shapes: str,
                      alone=None) -> None:
    """``large`` (float64 values, 10^4 entries or more), in float64 and in float32, compared at
    RTOL; named only when ``small`` is right at RTOL too in that dtype (an answer narrower at
    every size is named by the precision checks). ``alone(values, what, index)``: small inputs
    that together hold what the worst entry reads, each with its shapes in words; re-run, a
    result wrong on one of them is named by its values, not by a size."""
    for dtype, rtol in RTOL.items():
        def cast(values):
            return {name: value.to(dtype) for name, value in values.items()}
        small_worst = _worst(function, spec, cast(small), seed=31)
        if small_worst is None or any(error > rtol for _, error, _ in small_worst):
            continue
        large_worst = _worst(function, spec, cast(large), seed=32)
        for what, error, index in large_worst or ():
            if error > rtol:
                name = str(dtype).removeprefix("torch.")
                for few, words in (alone(cast(large), what, index) if alone else ()):
                    again = _worst(function, spec, few, seed=33)
                    if again is not None and any(e > rtol for _, e, _ in again):
                        at = ", ".join(f"{n} = {v.flatten()[0].item():.4g}" if v.numel() == 1
                                       else f"{n} of shape {tuple(v.shape)}"
                                       for n, v in few.items())
                        raise GradingError(
                            f"your {what} is off by a relative {error:.3g} at entry {index} of "
                            f"{shapes} ({name}), where {at}, and as far off with those values "
                            f"alone ({words}): it is the values, not the size; which values of "
                            "the contract does your code get wrong?",
                            mistake=f"{spec.name}/wrong-at-some-values")
                raise GradingError(
                    f"your {what} is off by a relative {error:.3g} at {shapes} ({name}), and "
                    f"right to {rtol:g} on a small input: {DIGITS[dtype]}; does your code "
                    "narrow the dtype, or switch method, above some size? The contract holds "
                    f"at every size, with {name}'s digits for {name} inputs",
                    mistake=f"{spec.name}/narrows-large-input")
