"""Lesson 00: Square and WeightedSum."""

import torch

from ...checks import (Spec, case, check_gradcheck, check_is_function, check_no_ctx_tensors,
                      check_values_and_gradients, make_inputs, reference_gradients, run_backward,
                      run_forward)
from ...contract import check_each_input_alone, covers
from ...diagnose import diagnose_gradient
from ...domain import Constant, Domain
from ...errors import GradingError
from ...exercise import Exercise, sample
from ...probes import reachable

# 0-d last: on a single element every wrong gradient looks like a sign or a constant factor,
# so the first failure should come from a shape whose hint can tell them apart.
SHAPES = [(5,), (3, 4), (2, 3, 4), ()]

SQUARE = Spec("Square", ("x",), lambda x: x ** 2)
WEIGHTED_SUM = Spec("WeightedSum", ("x1", "x2", "w1", "w2"),
                    lambda x1, x2, w1, w2: w1 * x1 + w2 * x2)


def _version_blind_alias(function, spec: Spec, values: dict, name: str) -> bool:
    """Did forward save a tensor that shares ``name``'s memory but not its version counter (what
    ``x.data`` gives)? Bump ``name``'s version and see which saved tensors follow."""
    inputs = make_inputs(values)
    forward = run_forward(function, spec, inputs)
    aliases = [saved.tensor for saved in forward.saved if saved.role == f"input {name}"]
    before = [alias._version for alias in aliases]
    with torch.no_grad():
        inputs[name].add_(0)
    return any(alias._version == version for alias, version in zip(aliases, before))


def check_input_version_tracking(function, spec: Spec, values: dict, name: str | None = None
                                 ) -> None:
    """Change an input in place between forward and backward: autograd must refuse, or every
    gradient must still be the one of the input forward saw. A backward that silently uses the
    new values read a tensor that autograd's version counter does not cover."""
    name = name or spec.input_names[0]
    inputs = make_inputs(values)
    # function.apply, not run_forward: saved-tensor hooks (which the probes use) turn autograd's
    # version check off
    output = function.apply(*inputs.values())
    grad_output = torch.ones_like(output)
    with torch.no_grad():
        inputs[name].mul_(2)
    wanted = [n for n, v in inputs.items() if isinstance(v, torch.Tensor) and v.requires_grad]
    try:
        grads = torch.autograd.grad(output, [inputs[n] for n in wanted], grad_output,
                                    allow_unused=True)
    except RuntimeError as error:
        # what save_for_backward is for; for a view saved in forward, autograd's view check
        if any(words in str(error) for words in ("modified by an inplace operation",
                                                 "has been modified inplace")):
            return
        raise
    fresh = make_inputs(values, requires_grad=set(wanted))
    expected = torch.autograd.grad(spec.reference(**fresh), [fresh[n] for n in wanted],
                                   grad_output)
    if all(not isinstance(g, torch.Tensor) or g.shape != e.shape or torch.allclose(g, e)
           for g, e in zip(grads, expected)):
        return
    if _version_blind_alias(function, spec, values, name):
        raise GradingError(
            f"{spec.name} saved a tensor autograd cannot check for in-place changes: it shares "
            f"{name}'s memory but not its version counter (as {name}.data does), so backward "
            f"silently used {name}'s new values; save {name} itself with "
            f"ctx.save_for_backward({name})", mistake=f"{spec.name}/saves-untracked-alias")
    raise GradingError(
        f"after {name} was changed in place, {spec.name}'s backward silently used the new "
        f"values: it read {name} from somewhere ctx.save_for_backward does not guard; save "
        f"{name} itself with ctx.save_for_backward({name})",
        mistake=f"{spec.name}/reads-unguarded-input")


def check_one_ctx_per_call(function, spec: Spec, first: dict, second: dict) -> None:
    """Two calls in flight: forward on ``first``, forward on ``second``, then the first call's
    backward. ``ctx`` is one per call; state kept on the class or in a global belongs to
    whichever call ran last. Raises only when the first call's gradient is the one the second
    call's inputs give."""
    inputs, later = make_inputs(first), make_inputs(second)
    output = run_forward(function, spec, inputs).output
    run_forward(function, spec, later)
    grad_output = 0.5 + torch.rand(output.shape, dtype=output.dtype,
                                   generator=torch.Generator().manual_seed(5)).to(output.device)
    grads = run_backward(spec, output, inputs, grad_output).grads
    truth = reference_gradients(spec, inputs, grad_output)
    crossed = reference_gradients(spec, later, grad_output)
    for name, grad in zip(inputs, grads):
        if (name in truth and isinstance(grad, torch.Tensor) and grad.shape == truth[name].shape
                and not torch.allclose(grad, truth[name]) and torch.allclose(grad, crossed[name])):
            raise GradingError(
                f"{spec.name}'s backward used another call's inputs: called twice, the first "
                f"call got grad_{name} for the second call's inputs; keep what backward needs "
                "on ctx, which is one per call, not where calls share it (the class, a global)",
                mistake=f"{spec.name}/state-shared-between-calls")


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
            if grad_output.shape == inputs[name].shape:  # element-wise: a diagonal Jacobian
                remedy = (f"multiply by grad_output (chain rule: grad_{name} = grad_output * "
                          f"dy/d{name}, entry by entry)")
            else:  # each entry of the input reaches many outputs, each with its own weight
                remedy = (f"{name}[k] reaches several outputs y[i, j], and each carries its own "
                          f"weight grad_output[i, j]: grad_{name}[k] = sum over i, j of "
                          f"grad_output[i, j] * dy[i, j]/d{name}[k], not grad_output times "
                          f"dy/d{name} (those shapes differ)")
            raise GradingError(
                f"{spec.name}.backward ignores grad_output: grad_{name} is the local derivative "
                f"dy/d{name} alone, the right gradient only when grad_output is all ones; "
                f"{remedy}", mistake=f"{spec.name}/ignores-grad-output")


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
            grads = run_backward(spec, forward.output, inputs, grad_output).grads
            truth = reference_gradients(spec, inputs, grad_output.contiguous())
            for name, grad in zip(inputs, grads):
                if name in truth:  # float64's bound, as check_values_and_gradients holds it
                    diagnose_gradient(name, grad, truth[name], rtol=1e-9, atol=1e-10,
                                      inputs=inputs, computed_in=inputs[name].dtype)


def check_square_keeps_sign(function, device) -> None:
    """A gradient 2|x| * grad_output (right where x > 0, the wrong sign where x < 0) is what x
    recovered from the output as sqrt(x ** 2) gives: name it, and name the saved output when
    forward saved it."""
    values = {"x": sample((6,), device, seed=11, away_from_zero=0.1)}
    inputs = make_inputs(values)
    forward = run_forward(function, SQUARE, inputs)
    grad_output = 0.5 + torch.rand(6, dtype=torch.float64,
                                   generator=torch.Generator().manual_seed(4)).to(device)
    grad, = run_backward(SQUARE, forward.output, inputs, grad_output).grads
    x = values["x"]
    if not (isinstance(grad, torch.Tensor) and grad.shape == x.shape and (x < 0).any()
            and torch.allclose(grad, 2 * x.abs() * grad_output)):
        return
    if any(saved.role == "output" for saved in forward.saved):
        raise GradingError(
            "Square saved its output y = x ** 2, which has lost the sign of x: your gradient "
            "for x has the wrong sign wherever x < 0 (sqrt(y) is |x|); save x instead",
            mistake="Square/saves-output-loses-sign")
    raise GradingError(
        "your gradient for x has the wrong sign wherever x < 0 and is right where x > 0: it "
        "uses |x| where the derivative of x ** 2 is 2x", mistake="Square/uses-abs-x")


def square_full(Square, device) -> None:
    function = check_is_function(Square, SQUARE)
    check_uses_grad_output(function, SQUARE, {"x": sample((4,), device)})
    check_square_keeps_sign(function, device)
    for seed, shape in enumerate(SHAPES):
        values = {"x": sample(shape, device, seed=seed)}
        with case(f"x of shape {shape}"):
            forward, _ = check_values_and_gradients(function, SQUARE, values)
            check_no_ctx_tensors(SQUARE, forward)
    covers("0-d x")
    check_strided_grad_output(function, SQUARE, {"x": sample((3, 4), device, seed=4)})
    with case("x of shape (5,)"):
        check_one_ctx_per_call(function, SQUARE, {"x": sample((5,), device, seed=1)},
                               {"x": sample((5,), device, seed=2)})
        check_input_version_tracking(function, SQUARE, {"x": sample((5,), device)})
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
            "grad_output", mistake="WeightedSum/swaps-weights")


def check_weights_not_rounded(function, device) -> None:
    """Weights float32 cannot hold (0.1, -1/3): a result equal, to float64's precision, to the
    one for a weight rounded through float32, and not to the true one, proves that weight went
    through a float32 tensor (torch.tensor(w) without dtype= is float32)."""
    values = _weighted_values((4,), device, w1=0.1, w2=-1 / 3, seed=3)
    inputs = make_inputs(values)
    forward = run_forward(function, WEIGHTED_SUM, inputs)
    grad_output = sample((4,), device, seed=9)
    grads = run_backward(WEIGHTED_SUM, forward.output, inputs, grad_output).grads
    x1, x2 = values["x1"], values["x2"]
    true = {"w1": values["w1"], "w2": values["w2"]}
    rounded = {name: torch.tensor(w, dtype=torch.float32).item() for name, w in true.items()}
    # (what, the result, its weights' names, the result as a function of those weights)
    results = [("WeightedSum's output", forward.output, ("w1", "w2"),
                lambda w1, w2: w1 * x1 + w2 * x2),
               ("grad_x1", grads[0], ("w1",), lambda w1: w1 * grad_output),
               ("grad_x2", grads[1], ("w2",), lambda w2: w2 * grad_output)]
    for what, got, names, result in results:
        if not (isinstance(got, torch.Tensor) and got.dtype == torch.float64
                and got.shape == x1.shape):
            continue
        truth = result(*(true[n] for n in names))
        if torch.allclose(got, truth, rtol=1e-12, atol=0):
            continue
        for chosen in [names[:1], names[1:], names] if len(names) > 1 else [names]:
            if torch.allclose(got, result(*(rounded[n] if n in chosen else true[n]
                                             for n in names)), rtol=1e-12, atol=0):
                weights = " and ".join(f"{n} = {rounded[n]!r}" for n in chosen)
                given = " and ".join(repr(true[n]) for n in chosen)
                raise GradingError(
                    f"{what} is what {weights} would give ({given} rounded to float32): a "
                    "weight made into a float32 tensor (torch.tensor(w) without dtype= gives "
                    "float32) loses the digits float64 inputs keep; use the Python float "
                    "itself, or a tensor of the input's dtype",
                    mistake="WeightedSum/float32-constant")


def check_weights_kept_as_floats(forward, values: dict) -> None:
    """A 0-d tensor on ctx that forward made (it requires no grad, so it is no input) holding
    w1's or w2's value: a weight made into a tensor, ctx.w1 = torch.tensor(w1). Named before
    check_no_ctx_tensors, whose save_for_backward remedy would keep the float32 tensor."""
    for attribute, value in forward.ctx_attributes.items():
        for path, tensor in reachable(value, f"ctx.{attribute}"):
            if tensor.dim() != 0 or tensor.requires_grad or not tensor.is_floating_point():
                continue
            for name in ("w1", "w2"):
                if tensor.item() == torch.tensor(values[name], dtype=tensor.dtype).item():
                    raise GradingError(
                        f"WeightedSum keeps {name} on ctx as a 0-d {tensor.dtype} tensor, "
                        f"{path}: {name} is a Python float: keep it as one, a plain attribute "
                        f"(ctx.{name} = {name}); backward needs no tensor from forward here",
                        mistake="WeightedSum/weight-as-tensor-on-ctx")


def _check_weighted(function, values: dict):
    """Values and gradients; a None returned for the input whose weight is 0 is named so."""
    try:
        return check_values_and_gradients(function, WEIGHTED_SUM, values)[0]
    except GradingError as error:
        for name, weight in (("x1", values["w1"]), ("x2", values["w2"])):
            if weight == 0 and error.hint.startswith(f"backward returned None for {name},"):
                raise GradingError(
                    f"backward returned None for {name} when its weight is 0 (w1={values['w1']}, "
                    f"w2={values['w2']}): {name} still requires grad, and its gradient is a "
                    f"tensor of zeros; None leaves {name}.grad at None and makes "
                    f"torch.autograd.grad raise for {name}: return grad_{name} whatever the "
                    "weight", error.details, mistake="WeightedSum/none-for-zero-weight"
                ) from error
        raise


def weighted_sum_full(WeightedSum, device) -> None:
    function = check_is_function(WeightedSum, WEIGHTED_SUM)
    check_weights_not_swapped(function, device)
    check_uses_grad_output(function, WEIGHTED_SUM, _weighted_values((4,), device))
    for seed, shape in enumerate(SHAPES):
        for w1, w2 in [(0.5, -2.0), (1.0, 0.0), (3.0, 3.0)]:
            values = _weighted_values(shape, device, w1, w2, seed)
            forward = _check_weighted(function, values)
            check_weights_kept_as_floats(forward, values)
            check_no_ctx_tensors(WEIGHTED_SUM, forward)
    check_weights_not_rounded(function, device)
    covers("a weight of 0")
    covers("0-d inputs")
    check_one_ctx_per_call(function, WEIGHTED_SUM, _weighted_values((4,), device),
                           _weighted_values((4,), device, 3.0, 1.5, seed=1))
    check_each_input_alone(function, WEIGHTED_SUM, _weighted_values((2, 3), device))
    covers("float32")
    check_values_and_gradients(function, WEIGHTED_SUM,
                               _weighted_values((3, 4), device, dtype=torch.float32),
                               rtol=1e-5, atol=1e-6)
    check_gradcheck(function, WEIGHTED_SUM, _weighted_values((3,), device))


WEIGHT = Constant(-8.0, 8.0, "w1, w2 Python floats", also=(0.0, 1e-4))

EXERCISES = [
    Exercise("Square", "00_template", square_full,
             contract=("0-d x", "non-contiguous grad_output", "float32"),
             example=lambda: (sample((4,), "cpu"),),
             domain=Domain(SQUARE, lambda device, dtype=torch.float64, seed=0: {
                 "x": sample((3, 4), device, seed=seed, dtype=dtype)})),
    Exercise("WeightedSum", "00_template", weighted_sum_full,
             contract=("a weight of 0", "0-d inputs", "float32"),
             example=lambda: tuple(_weighted_values((4,), "cpu").values()),
             domain=Domain(WEIGHTED_SUM, lambda device, dtype=torch.float64, seed=0, w1=0.5,
                           w2=-2.0: _weighted_values((3, 4), device, w1, w2, seed, dtype),
                           constants={"w1": WEIGHT, "w2": WEIGHT})),
]
