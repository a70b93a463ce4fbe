"""What backward does with grad_output: multiplies by it (the chain rule), whatever its strides."""

import torch

from ...checks import (Spec, case, check_untouched, make_inputs, reference_gradients,
                      run_backward, run_forward)
from ...contract import covers
from ...diagnose import diagnose_gradient
from ...errors import GradingError
from ...exercise import sample


def check_uses_grad_output(function, spec: Spec, values: dict) -> None:
    """The chain rule multiplies by grad_output: a backward that returns the local derivative
    alone (``2 * x`` for Square) gives the gradient for grad_output = 1, whatever it is given."""
    inputs = make_inputs(values)
    forward = run_forward(function, spec, inputs)
    grad_output = 0.5 + torch.rand(forward.output.shape, dtype=forward.output.dtype,
                                   generator=torch.Generator().manual_seed(3))
    grad_output = grad_output.to(forward.output.device)
    pristine, version = grad_output.clone(), grad_output._version
    grads = run_backward(spec, forward.output, inputs, grad_output).grads
    check_untouched(spec, grad_output, pristine, version)
    true = reference_gradients(spec, inputs, pristine)  # the reference gets its own copy
    local = reference_gradients(spec, inputs, torch.ones_like(pristine))
    for name, grad in zip(inputs, grads):
        if (name in true and isinstance(grad, torch.Tensor) and grad.shape == true[name].shape
                and not torch.allclose(grad, true[name]) and torch.allclose(grad, local[name])):
            # a question that leads to the chain rule, never its formula (the lesson's step 2)
            if grad_output.shape == inputs[name].shape:  # element-wise: a diagonal Jacobian
                remedy = (f"grad_output[i] is dL/dy[i]: by the chain rule, what is "
                          f"dL/d{name}[i] in terms of it and dy[i]/d{name}[i]?")
            else:  # each entry of the input reaches many outputs, each with its own weight
                weight = "factor" if name == "weight" else "weight"  # not the input's name
                remedy = (f"{name}[k] reaches several outputs y[i, j], and each carries its own "
                          f"{weight} grad_output[i, j]: how must those {weight}s and dy[i, j]/"
                          f"d{name}[k] combine into grad_{name}[k]? (Not grad_output times "
                          f"dy/d{name}: those shapes differ.)")
            raise GradingError(
                f"{spec.name}.backward ignores grad_output: grad_{name} is the local derivative "
                f"dy/d{name} alone, the right gradient only when grad_output is all ones; "
                f"{remedy}", mistake=f"{spec.name}/ignores-grad-output")


def name_ignored_grad_output(function, spec: Spec, values: dict) -> None:
    """``check_uses_grad_output`` as a probe, early in a battery: a gradient that leaves
    grad_output out is named; any other failure is left to the checks after it, with their
    cases and probes (a backward that raises for these shapes, say)."""
    try:
        check_uses_grad_output(function, spec, values)
    except Exception as error:  # noqa: BLE001 - a probe: anything else is for later checks
        if isinstance(error, GradingError) and error.mistake == f"{spec.name}/ignores-grad-output":
            raise


def check_strided_grad_output(function, spec: Spec, values: dict) -> None:
    """A 2-D output's grad_output as a larger graph may hand it over, a transposed view (.mT)
    and every other column of a wider tensor: the gradients must not depend on its strides."""
    covers("non-contiguous grad_output")
    output = spec.reference(**make_inputs(values, requires_grad=False))
    rows, columns = output.shape
    wide = sample((rows, 2 * columns), output.device, seed=12)
    for layout, grad_output in (("transposed", sample((columns, rows), output.device,
                                                      seed=13).mT),
                                ("column slice", wide[:, ::2])):
        with case(f"a {layout} grad_output of shape {tuple(grad_output.shape)}, strides "
                  f"{grad_output.stride()}"):
            inputs = make_inputs(values)
            forward = run_forward(function, spec, inputs)
            dense = grad_output.contiguous()  # taken before backward: the reference's own
            grads = run_backward(spec, forward.output, inputs, grad_output).grads
            truth = reference_gradients(spec, inputs, dense)
            for name, grad in zip(inputs, grads):
                if name in truth:  # float64's bound, as check_values_and_gradients holds it
                    diagnose_gradient(name, grad, truth[name], rtol=1e-9, atol=1e-10,
                                      inputs=inputs, computed_in=inputs[name].dtype)


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
