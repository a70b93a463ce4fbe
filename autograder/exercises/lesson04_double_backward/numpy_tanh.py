"""Lesson 04, transfer: NumpyTanh, a NumPy forward and a NumPy backward, twice differentiable.
Forward computes tanh with NumPy on a CPU tensor of any shape, 0-d included (where NumPy returns
a scalar, not an array, which torch.from_numpy refuses); backward is NumPy too
(torch only converts), yet gradcheck and gradgradcheck pass, as backward calls a Function of its
own whose backward is NumPy as well. Checked on the CPU whatever the grading device."""

import re

import torch

from ...checks import (Spec, case, check_backward_by_hand, check_gradcheck, check_is_function, check_no_ctx_tensors,
                      check_values_and_gradients, make_inputs, run_backward, run_forward)
from ...contract import check_each_input_alone, covers
from ...domain import Domain
from ...errors import GradingError
from ...explain import _explain_runtime_error
from ...function_contract import rule_reference
from ...exercise import Exercise, sample
from ...probes import _OpLog
from .numpy_tanh_graph import (check_inner_class_state, check_inner_ctx,
                               check_inner_reads_saved, name_saved_copy, reaches)
from .backward_ctx import check_backward_ctx_both_dtypes
from .ctx_arrays import check_no_ctx_arrays, check_saves_output_itself, named_empty_pop
from .backward_saves import check_backward_saves_no_copy, check_hessian_vector_product
from .second_derivatives import ONCE_DIFFERENTIABLE_ERROR, check_gradgradcheck
from ..shared.reentry import limit_nesting
from ..shared.saved_copies import check_no_copy_saved, check_no_copy_saved_strided
from ..shared.saved_reads import check_backward_reads_saved
from .call_probes import check_calls_independent
from .inner_none import check_inner_returned_dtypes, check_inner_returns_none
from .numpy_tanh_saturation import check_saturated, name_float32_second

NUMPY_TANH = Spec("NumpyTanh", ("x",), torch.tanh)
SHAPES = [(6,), (3, 4), (2, 3, 2)]
_COUNT = re.compile(r"function (\w+) returned an incorrect number of gradients \(expected (\d+), "
                    r"got (\d+)\)")

# What "torch only converts" leaves torch to do: conversions, copies and views, no arithmetic.
CONVERSIONS = {"detach", "lift_fresh", "lift_fresh_copy", "alias", "view", "_unsafe_view",
               "reshape", "_reshape_alias", "contiguous", "clone", "copy_", "_to_copy",
               "empty", "empty_like", "empty_strided", "expand", "t", "transpose", "permute",
               "squeeze", "unsqueeze", "as_strided", "resolve_conj", "resolve_neg", "select",
               "slice", "unbind", "zeros", "zeros_like", "ones_like", "_local_scalar_dense"}

CONVERT = ("compute it in NumPy on .detach().cpu().numpy() and use torch only to convert "
           "(torch.from_numpy, .to)")


def _arithmetic(ops: list[str]) -> list[str]:
    return [op for op in ops if op not in CONVERSIONS]


def _values(shape, seed=0) -> dict:
    x = 1.5 * sample(shape, "cpu", seed=seed)
    if seed == 0:  # zeros, where y = 0: a second backward dividing by g * y gives nan there
        x[::3] = 0.0
    return {"x": x}


def check_forward_in_numpy(function, values: dict) -> None:
    """Forward computes tanh with NumPy: torch ops only to convert (tanh from exp is torch too)."""
    inputs = make_inputs(values)
    with _OpLog() as log:
        run_forward(function, NUMPY_TANH, inputs)
    if computed := _arithmetic(log.ops):
        raise GradingError(f"NumpyTanh.forward computes with the torch op {computed[0]}: "
                           f"{CONVERT}", mistake="NumpyTanh/torch-in-forward")


def check_backward_in_numpy(function, values: dict) -> None:
    """The first backward and the backward of that backward may not compute with torch ops."""
    inputs = make_inputs(values)
    forward = run_forward(function, NUMPY_TANH, inputs)
    grad_output = sample(values["x"].shape, "cpu", seed=31)
    backward = run_backward(NUMPY_TANH, forward.output, inputs, grad_output)
    if computed := _arithmetic(backward.ops):
        raise GradingError(f"NumpyTanh.backward computes with the torch op {computed[0]}: "
                           f"{CONVERT}", mistake="NumpyTanh/torch-in-backward")
    inputs = make_inputs(values)
    output = _apply(function, inputs)
    grad_output = grad_output.clone().requires_grad_()
    first, = torch.autograd.grad(output, inputs["x"], grad_output, create_graph=True)
    if not first.requires_grad:
        return  # check_second_derivatives names this
    direction = sample(first.shape, "cpu", seed=32)
    with _OpLog() as log:
        try:
            torch.autograd.grad(first, (inputs["x"], grad_output), direction)
        except RuntimeError:
            return  # check_second_derivatives explains it
    if computed := _arithmetic(log.ops):
        raise GradingError(f"the backward of NumpyTanh's backward computes with the torch op "
                           f"{computed[0]}: the Function your backward calls must have a NumPy "
                           "backward too; " + CONVERT, mistake="NumpyTanh/torch-in-inner-backward")


def _apply(function, inputs: dict):
    try:
        return function.apply(inputs["x"])
    except RuntimeError as error:
        raise _explain_runtime_error(NUMPY_TANH, "forward", error, inputs) from error


def _first_derivative(function, values: dict) -> None:
    """Another call, on other inputs, and its first derivative with create_graph=True (which
    runs the forward of the Function its backward calls)."""
    x = make_inputs({"x": 0.5 * values["x"]})["x"]
    torch.autograd.grad(function.apply(x), x, torch.ones_like(x), create_graph=True)


def check_second_derivatives(function, values: dict, other_call: bool = True) -> None:
    """Differentiate the gradient again: with respect to x and to grad_output; with
    ``other_call``, another call's first derivative runs between the first and the second."""
    inputs = make_inputs(values)
    output = _apply(function, inputs)
    grad_output = sample(values["x"].shape, "cpu", seed=41).requires_grad_()
    try:
        first, = torch.autograd.grad(output, inputs["x"], grad_output, create_graph=True)
    except RuntimeError as error:
        raise _explain_runtime_error(NUMPY_TANH, "backward", error, inputs) from error
    if not first.requires_grad:
        raise GradingError(
            "grad_x from NumpyTanh's backward is cut off from autograd (as a NumPy result, a "
            ".detach() or torch.no_grad leaves it), so a second backward sees a constant: "
            "autograd cannot record NumPy, so what could record the NumPy gradient as one step "
            "of a graph?", mistake="NumpyTanh/backward-detached")
    check_inner_ctx(first.grad_fn)
    check_inner_class_state(function, first, lambda: other_call and _first_derivative(
        function, values))
    direction = sample(first.shape, "cpu", seed=42)
    try:  # backward(), not grad(): only a full backward runs once_differentiable's error node
        torch.autograd.backward(first, direction)
    except RuntimeError as error:
        if ONCE_DIFFERENTIABLE_ERROR in str(error):
            raise GradingError(
                "NumpyTanh's backward is marked @once_differentiable: a second backward "
                "through it raised the mark's error, where the contract asks for a second "
                "derivative; autograd cannot record NumPy, so what could it differentiate "
                "instead?", str(error),
                mistake="NumpyTanh/once-differentiable") from error
        if (match := _COUNT.search(str(error))) and match[1] != "NumpyTanhBackward":
            raise GradingError(
                f"the Function your backward calls ({match[1].removesuffix('Backward')}) returned "
                f"{match[3]} gradient{'s' if match[3] != '1' else ''} from its backward, for "
                f"{match[2]} inputs of its forward: return one per input, in the order of "
                "forward's arguments (each grad_b times the derivative of b with respect to that "
                "input)", str(error), mistake="NumpyTanh/inner-gradient-count") from error
        raise _explain_runtime_error(NUMPY_TANH, "backward", error, inputs) from error
    x, g, v = values["x"], grad_output.detach(), direction
    y = torch.tanh(x)
    truths = {"x": -2 * g * v * y * (1 - y * y), "grad_output": v * (1 - y * y)}
    swapped = [-2 * g * v * y, -2 * g * v * y * (1 - y * y)]  # d b/d(saved) given to grad_output
    if grad_output.grad is not None and not torch.allclose(grad_output.grad, truths["grad_output"]) \
            and any(torch.allclose(grad_output.grad, wrong) for wrong in swapped):
        raise GradingError(
            "the backward of the Function your backward calls returns its two gradients in the "
            "wrong order: the one for grad_output (grad_b times tanh') comes first, then the one "
            "for the saved tensor, in the order of that Function's forward arguments",
            mistake="NumpyTanh/inner-gradients-swapped")
    for name, leaf in (("x", inputs["x"]), ("grad_output", grad_output)):
        got = torch.zeros_like(x) if leaf.grad is None else leaf.grad
        if not torch.allclose(got, truths[name]) and not reaches(first.grad_fn, leaf):
            if name == "x":
                name_saved_copy(output, inputs["x"])
            raise GradingError(
                f"the second derivative through NumpyTanh with respect to {name} is zero: the "
                + ("y (or x)" if name == "x" else "grad_output") + " your backward passes to "
                "the Function it calls is cut from the graph (a .detach(), .data or a NumPy "
                f"round trip), so nothing links grad_x back to {name}; pass "
                + ("the saved tensor itself" if name == "x" else "grad_output itself"), mistake={
                    "with respect to x is zero": "NumpyTanh/detaches-saved-tensor",
                    "with respect to grad_output is zero": "NumpyTanh/detaches-grad-output"})
        if not torch.allclose(got, truths[name], rtol=1e-7, atol=1e-9):
            if other_call:
                _name_shared_state(function, values, name)
            name_float32_second(got, truths[name], name)
            if name == "x":
                _name_saved_tensor_factor(got, truths["x"], g, v, y)
            raise GradingError(
                f"the second derivative through NumpyTanh with respect to {name} is wrong: the "
                "Function your backward calls computes b = grad_output * tanh'(x) from "
                "grad_output and a saved tensor (y = tanh(x), or x); its backward must return "
                "grad_b times the derivative of b with respect to each of those inputs"
                + (", here the saved tensor (y or x): b depends on it through tanh'"
                   if name == "x" else ", here grad_output"),
                f"largest error: {(got - truths[name]).abs().max().item():.3g}")


def _name_saved_tensor_factor(got, truth, g, v, y) -> None:
    """The second derivative with respect to x off by a factor the inner backward's gradient
    for the saved tensor proves: its sign, or grad_output left out of d b / d y."""
    if torch.allclose(got, -truth, rtol=1e-7, atol=1e-9):
        raise GradingError(
            "the second derivative through NumpyTanh with respect to x has the wrong sign "
            "everywhere: the gradient the inner backward returns for the saved tensor (y or x) "
            "is negated; which sign does the derivative of tanh' = 1 - y**2 have where y > 0?",
            mistake="NumpyTanh/inner-gradient-sign")
    if torch.allclose(got, -2 * v * y * (1 - y * y), rtol=1e-7, atol=1e-9):
        raise GradingError(
            "the second derivative through NumpyTanh with respect to x lacks the factor "
            "grad_output: b = grad_output * tanh'(x) is a product, so its derivative with "
            "respect to the saved tensor (y or x) keeps grad_output; the inner backward's "
            "gradient for the saved tensor leaves it out",
            mistake="NumpyTanh/inner-gradient-drops-grad-output")


def _name_shared_state(function, values: dict, name: str) -> None:
    """A second derivative wrong only when another call ran in between: right alone."""
    try:
        check_second_derivatives(function, values, other_call=False)
    except (GradingError, RuntimeError, TypeError, ValueError, IndexError):
        return
    raise GradingError(
        f"NumpyTanh keeps state shared between calls (a module-level list or variable, a "
        f"class attribute): its second derivative with respect to {name} is right for one call "
        "alone but wrong once another call has run in between; the second backward runs "
        "NumpyTanh's backward again, for the path through y, and it read the other call's "
        "tensor; take what backward needs from ctx.saved_tensors, one set per call",
        mistake="NumpyTanh/state-shared-between-calls")


WATCHED = {"x": "its input x", "y": "its output y (the tensor the caller holds, also the one "
           "saved)", "grad_output": "grad_output",
           "grad_b": "the gradient its backward's Function receives (grad_b)"}
PHASES = ("forward", "backward (its own, or the forward of the Function it calls)",
          "second backward (the backward of the Function its backward calls)")


def _name_writes(function, values: dict, error: GradingError) -> None:
    """A NumPy write through .numpy() into x, y or grad_output, found by comparing each with a
    copy taken before: named first, whichever later check it made fail (autograd's version
    counter never sees such a write, so no error names it)."""
    x = make_inputs(values)["x"]
    watched, kept = {"x": x}, {"x": x.detach().clone()}
    for phase in PHASES:
        try:
            if phase == PHASES[0]:
                output = function.apply(x)
            elif phase == PHASES[1]:
                grad_output = sample(x.shape, "cpu", seed=51).requires_grad_()
                watched.update(y=output, grad_output=grad_output)
                kept.update(y=output.detach().clone(), grad_output=grad_output.detach().clone())
                first, = torch.autograd.grad(output, x, grad_output, create_graph=True)
            elif first.requires_grad:
                direction = sample(x.shape, "cpu", seed=52)
                watched["grad_b"], kept["grad_b"] = direction, direction.clone()
                torch.autograd.backward(first, direction)
        except (RuntimeError, TypeError, ValueError, AttributeError):
            return
        written = [name for name, tensor in watched.items()
                   if not torch.equal(tensor.detach(), kept[name])]
        if written:
            name = written[0]
            raise GradingError(
                f"NumpyTanh's {phase} wrote into {WATCHED[name]}: an array from .numpy() shares "
                "the tensor's memory, so a NumPy write through it (out=, *=, a[...] =) changes "
                "the tensor itself, and autograd's version counter, which guards saved tensors "
                "against in-place changes, never sees it; write into a new array (no out=, or "
                "a .copy() first)", f"{name} before: {kept[name].flatten()[:4].tolist()}, after: "
                f"{watched[name].detach().flatten()[:4].tolist()}\n{error}",
                mistake="NumpyTanh/writes-through-numpy") from error


def _name_x_for_y(function, values: dict, error: GradingError) -> None:
    """A first derivative of 1 - x**2 instead of 1 - tanh(x)**2: x saved, used as if it were y."""
    x = make_inputs(values)["x"]
    try:
        grad, = torch.autograd.grad(function.apply(x), x, torch.ones_like(x))
    except (RuntimeError, TypeError, ValueError):
        return
    value = x.detach()
    if isinstance(grad, torch.Tensor) and grad.shape == value.shape \
            and torch.allclose(grad, 1 - value * value):
        raise GradingError(
            "your gradient for x is 1 - x**2, not tanh'(x) = 1 - tanh(x)**2 = 1 - y**2: backward "
            "uses the saved x as if it were the output y; save y, or take tanh of x in NumPy "
            "first", str(error), mistake="NumpyTanh/uses-x-as-y") from error


def check_output_dtype(output, x: torch.Tensor) -> None:
    """The output in x's dtype: a float64 output for a float32 x is named before the checks of
    what is saved, which it would otherwise fail as a copy widened."""
    if isinstance(output, torch.Tensor) and output.dtype != x.dtype:
        got, want = (str(t.dtype).removeprefix("torch.") for t in (output, x))
        raise GradingError(
            f"NumpyTanh's output has dtype {got} for a {want} x: return x's dtype; NumPy keeps "
            f"an array's dtype, so a {got} result comes from an array made {got} on the way "
            f"(.astype(np.{got}), x.double()); compute in {want}, or cast the result back with "
            ".to(x.dtype) and save the tensor you return",
            mistake="NumpyTanh/wrong-output-dtype")


def full(submission, device) -> None:
    function = check_is_function(submission, NUMPY_TANH)
    with limit_nesting(function, "compute the gradient in NumPy from the saved tensors and "
                       "grad_output; torch.autograd.grad of a saved output runs this very "
                       "backward again"):
        named_empty_pop(NUMPY_TANH, lambda: _checks(function))


def _case_checks(function, values: dict) -> None:
    try:
        forward, backward = check_values_and_gradients(function, NUMPY_TANH, values,
                                                       rtol=1e-7, atol=1e-9)
    except GradingError as error:
        _name_x_for_y(function, values, error)  # _checks names a NumPy write before this
        raise
    check_backward_by_hand(NUMPY_TANH, backward)
    check_no_ctx_tensors(NUMPY_TANH, forward)
    check_no_ctx_arrays(NUMPY_TANH, forward)
    check_no_copy_saved(NUMPY_TANH, forward, values)
    check_forward_in_numpy(function, values)
    check_backward_in_numpy(function, values)
    check_second_derivatives(function, values)
    check_backward_saves_no_copy(function, values)
    check_hessian_vector_product(function, values)


def check_second_derivative_0d(submission, device) -> None:
    """Rule 1 for the second derivative too: a 0-d x, where NumPy arithmetic on a 0-d array
    returns a NumPy scalar, which torch.from_numpy refuses. Last (Exercise.last): an answer
    wrong there is named first by whichever other check it fails."""
    function = check_is_function(submission, NUMPY_TANH)
    values = {"x": torch.tensor(0.7, dtype=torch.float64)}
    with case("x of shape () (0-d), a second derivative"):
        try:
            check_second_derivatives(function, values, other_call=False)
        except (TypeError, ValueError) as error:
            raise GradingError(
                f"the second derivative through NumpyTanh raised {type(error).__name__} at a "
                f"0-d x: {str(error).splitlines()[0] if str(error) else ''}; first derivatives "
                "passed there, so it is the Function your backward calls: what does NumPy "
                "arithmetic on a 0-d array return, and what does torch.from_numpy take? "
                f"{rule_reference('values')}", str(error),
                mistake="NumpyTanh/second-derivative-0d") from error


def _checks(function) -> None:
    for seed, shape in enumerate(SHAPES):
        values = _values(shape, seed)
        with case(f"x of shape {shape}" + (", one entry 0" if seed == 0 else "")):
            try:
                _case_checks(function, values)
            except GradingError as error:
                _name_writes(function, values, error)
                raise
    covers("1-D x")
    check_backward_ctx_both_dtypes(function, NUMPY_TANH,
                                   lambda dtype: {"x": _values((4,), 13)["x"].to(dtype)}, "(4,)")
    check_each_input_alone(function, NUMPY_TANH, _values((3, 4), 7), rtol=1e-7, atol=1e-9)
    with case("x of shape (3, 4), saved tensors doctored by saved-tensor hooks"):
        check_backward_reads_saved(function, NUMPY_TANH, _values((3, 4), 11), "y (or x)")
        check_inner_reads_saved(function, *(sample((3, 4), "cpu", seed=s) for s in (11, 43, 44)))
    with case("x transposed, (4, 3)"):
        check_no_copy_saved_strided(function, NUMPY_TANH, _values((3, 4), 9), "x")
    with case("x of shape (3, 4), float32"):
        float32 = {"x": _values((3, 4), 10)["x"].float()}
        inputs = make_inputs(float32)
        forward = run_forward(function, NUMPY_TANH, inputs)
        check_output_dtype(forward.output, inputs["x"])  # before the copy checks: the engine
        # hands backward a grad_output cast to the output's dtype, which a save then widens
        check_saves_output_itself(NUMPY_TANH, forward, inputs["x"])
        check_no_copy_saved(NUMPY_TANH, forward, inputs)
        check_backward_saves_no_copy(function, float32)
    # after the checks that name a NumPy write (which also spoils a second call), before gradcheck
    check_calls_independent(function, NUMPY_TANH, _values((4,), 12), "(4,)")
    with case("large |x|, where tanh saturates (float64 and float32)"):
        check_saturated(function, NUMPY_TANH)
    covers("saturated tanh")
    with case("x of shape (4,)"):
        check_gradcheck(function, NUMPY_TANH, _values((4,), 8))
        check_gradgradcheck(function, NUMPY_TANH, _values((4,), 8), ["x"])
    # last, in no case (the first line ends with the rule it cites): the engine drops what it
    # finds, so it changes no value another check sees
    check_inner_returns_none(function, _values((3, 4), 14))
    check_inner_returned_dtypes(function, {"x": _values((3, 4), 14)["x"].float()})


LATER_IN_LESSON = True  # the lesson's transfer exercise, after CubeOnce
EXERCISES = [
    Exercise("NumpyTanh", "04_double_backward", full, contract=("1-D x", "saturated tanh"),
             example=lambda: (sample((5,), "cpu"),),
             # a CPU tensor by contract, whatever device the grader has
             domain=Domain(NUMPY_TANH, lambda device, dtype=torch.float64, seed=0:
                           {"x": 1.5 * sample((3, 4), "cpu", seed=seed, dtype=dtype)}),
             last=check_second_derivative_0d),
]
