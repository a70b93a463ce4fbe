"""Lesson 04: SwishFunction (differentiable twice) and CubeOnce (@once_differentiable). The
checks compare second derivatives through the learner's backward with the composed reference's,
name the usual cause when they differ, and finish with gradgradcheck."""

import torch
from torch.autograd.function import once_differentiable

from ...checks import (Spec, case, check_backward_by_hand, check_gradcheck, check_is_function, check_no_ctx_tensors,
                      check_values_and_gradients, make_inputs, run_forward)
from ...contract import check_each_input_alone, covers
from ...diagnose import diagnose_gradient
from ...domain import Constant, Domain, sampled
from ...errors import GradingError
from ...exercise import Exercise, sample
from ..shared.call_state import check_class_untouched
from ..shared.reentry import limit_nesting
from ..shared.saved_copies import check_no_copy_saved, check_no_copy_saved_strided
from ..shared.saved_reads import check_backward_reads_saved
from .second_derivatives import (ONCE_DIFFERENTIABLE_ERROR, _random_like, check_gradgradcheck,
                                 check_differentiable_backward)
from .second_derivative_points import (check_second_at_beta_zero, name_nan_second_derivative,
                                       zero_cause)
from .ctx_arrays import check_no_ctx_arrays
from .backward_ctx import check_backward_ctx_both_dtypes
from .cube_numpy import check_local_in_numpy
from .cube_once_errors import _create_graph_error, check_zero_dim, numpy_return_named
from .cube_points import check_cube_range_ends, check_every_x, name_narrowed_step
from .float32_saturation import check_float32_second_derivatives, name_nonfinite_float32
from .stand_in_device import check_result_on_x_device
from .call_probes import check_calls_independent, check_dtype_per_call
from .saved_alias import check_saved_guarded
from .swish_chain_rule import name_dropped_inner_factor
from .swish_tails import check_saturated_tails
from .swish_tiny_beta import check_tiny_beta
from .swish_wider_beta import check_wider_beta
from .constant_grad_output import first_derivatives

# CubeOnce's contract names a 0-d x, the trap of its NumPy backward (NumPy on a 0-d array returns
# a scalar torch.from_numpy refuses); SwishFunction's "x of any shape" is tried on a 0-d and an
# empty x in check_float32_saturation (0-d inputs are graded where a contract names them).
SHAPES = [(6,), (3, 4), (2, 3, 2)]
BETAS = [1.3, -0.7, 0.0]
_ONCE_WRAPPER = once_differentiable(lambda ctx: None).__code__  # every wrapper's code object


def is_marked(function) -> bool:
    """Whether function.backward is once_differentiable's wrapper (in either decorator order)."""
    fn = function.__dict__.get("backward", getattr(function, "backward", None))
    for _ in range(8):
        fn = getattr(fn, "__func__", fn)  # a staticmethod object, in the reversed order
        if getattr(fn, "__code__", None) is _ONCE_WRAPPER:
            return True
        if (fn := getattr(fn, "__wrapped__", None)) is None:
            return False
    return False

SWISH = Spec("SwishFunction", ("x", "beta"), lambda x, beta: x * torch.sigmoid(beta * x))
CUBE_ONCE = Spec("CubeOnce", ("x",), lambda x: x ** 3)


def swish_values(shape, device, *, beta=1.3, seed=0, dtype=torch.float64) -> dict:
    return {"x": 2 * sample(shape, device, seed=seed, dtype=dtype),
            "beta": torch.tensor(beta, dtype=dtype, device=device)}


def check_zeros_and_saturation(function) -> None:
    """x holding exact zeros (ReLU outputs, padding) and |beta x| large enough to saturate the
    sigmoid: values and first and second derivatives stay finite and right."""
    x = torch.tensor([-615.0, -3.0, 0.0, 0.5, 0.0, 615.0], dtype=torch.float64)
    values = {"x": x, "beta": torch.tensor(1.3, dtype=torch.float64)}
    with case("x holding zeros and values of |beta x| up to 800 (799.5), beta=1.3 (exp and cosh overflow float64 past 709)"):
        try:
            check_values_and_gradients(function, SWISH, values)
            check_differentiable_backward(function, SWISH, values, ["x", "beta"])
        except GradingError as error:
            inputs = make_inputs(values)
            try:
                grads = torch.autograd.grad(function.apply(*inputs.values()), list(inputs.values()),
                                            torch.ones(6, dtype=torch.float64), allow_unused=True)
            except RuntimeError:
                raise error from None
            nan = torch.isnan(grads[0]) if grads[0] is not None else torch.zeros(6, dtype=bool)
            if nan.any() and torch.equal(nan, x == 0):
                raise GradingError(
                    "your gradient for x is NaN exactly where x = 0, and finite elsewhere: "
                    "backward divides by x there (0 / 0, as s = y / x does), and x = 0 is a "
                    "value the contract allows (a ReLU's output, padding); what can backward "
                    "recompute s from that never divides by x?", str(error),
                    mistake="SwishFunction/divides-by-x") from error
            name_nan_second_derivative(function, SWISH, values, error)
            moved = dict(values, x=torch.where(x == 0, 0.25, x))
            try:  # the same checks with the zeros moved away pass: the fault is at x = 0 only
                check_values_and_gradients(function, SWISH, moved)
                check_differentiable_backward(function, SWISH, moved, ["x", "beta"])
            except GradingError:
                raise error from None
            raise GradingError(
                "SwishFunction is right everywhere but at x = 0: there its second derivatives "
                f"are wrong: {zero_cause(function, values)}; the sigmoid itself is smooth at "
                "0: which op can build s with no kink and no branch there?",
                error.details, mistake="SwishFunction/kink-at-zero") from error  # only the numbers: the general hint's guess is not it


def check_float32_saturation(function, device) -> None:
    """float32, where |beta x| saturates the sigmoid (about 100, past exp's float32 overflow at
    88.7, and about 800, past float64's at 709), both signs of x and of beta, and x 0-d and
    empty: values and first derivatives right and finite. A first derivative built from exp
    with z clamped to float64's range is nan there in float32."""
    x = torch.tensor([-615.0, -77.0, 0.5, 77.0, 615.0], dtype=torch.float32, device=device)
    for beta in (1.3, -1.3):
        values = {"x": x, "beta": torch.tensor(beta, dtype=torch.float32, device=device)}
        with case(f"float32 x = (-615, -77, 0.5, 77, 615), beta={beta}: |beta x| up to 799.5"):
            try:
                check_values_and_gradients(function, SWISH, values)
            except GradingError as error:
                name_nonfinite_float32(function, values, error)
                raise
    for shape, x in [("0-d x = -77.0", torch.tensor(-77.0)), ("0-d x = 0.0", torch.tensor(0.0)),
                     ("empty x, shape (2, 0)", torch.zeros(2, 0))]:
        for dtype in (torch.float64, torch.float32):
            with case(f"{shape}, beta=1.3, {str(dtype).removeprefix('torch.')}"):
                check_values_and_gradients(function, SWISH, {
                    "x": x.to(device, dtype), "beta": torch.tensor(1.3, dtype=dtype,
                                                                   device=device)})
    covers("float32 saturation")
    covers("0-d and empty x")


SAVED_OUTPUT_FIX = ("compute the gradient with tensor ops on ctx.saved_tensors and grad_output; "
                    "torch.autograd.grad of a saved output runs this very backward again")


def swish_full(SwishFunction, device) -> None:
    function = check_is_function(SwishFunction, SWISH)
    with limit_nesting(function, SAVED_OUTPUT_FIX):
        check_calls_independent(function, SWISH, swish_values((4,), device, seed=11), "(4,)")
        _swish_checks(function, device)


def _swish_checks(function, device) -> None:
    for seed, shape in enumerate(SHAPES):
        for beta in BETAS:
            values = swish_values(shape, device, beta=beta, seed=seed)
            with case(f"x of shape {shape}, beta={beta}"):
                try:
                    forward, backward = check_values_and_gradients(function, SWISH, values)
                except GradingError as error:
                    name_dropped_inner_factor(function, values, error)
                    raise
                check_backward_by_hand(SWISH, backward)
                check_no_ctx_tensors(SWISH, forward)
                check_no_copy_saved(SWISH, forward, values)
        with case(f"x of shape {shape}, beta=1.3, second derivatives for x and beta"):
            check_differentiable_backward(function, SWISH,
                                          swish_values(shape, device, seed=seed), ["x", "beta"])
    check_backward_ctx_both_dtypes(function, SWISH, lambda dtype: swish_values(
        (4,), device, seed=12, dtype=dtype), "(4,), beta=1.3")
    check_each_input_alone(function, SWISH, swish_values((3, 4), device, seed=6))
    with case("x of shape (4,), beta=-0.7 not requiring grad, second derivatives"):
        check_differentiable_backward(function, SWISH, swish_values((4,), device, beta=-0.7),
                                      ["x"])
    with case("x of shape (4,) not requiring grad, beta=1.3 alone, second derivatives"):
        check_differentiable_backward(function, SWISH, swish_values((4,), device), ["beta"])
    check_zeros_and_saturation(function)
    check_float32_saturation(function, device)
    with case("x of shape (4,), beta=0, second derivatives for x and beta"):
        check_second_at_beta_zero(function, SWISH, swish_values((4,), device, beta=0.0, seed=3))
    covers("beta = 0")
    covers("beta not requiring grad")
    with case("x of shape (3, 4), beta=1.3, saved tensors doctored by saved-tensor hooks"):
        check_backward_reads_saved(function, SWISH, swish_values((3, 4), device, seed=6),
                                   "x and beta")
    with case("x transposed, (4, 3)"):
        check_no_copy_saved_strided(function, SWISH, swish_values((3, 4), device, seed=8), "x")
    with case("x of shape (3, 4), beta=1.3, float32"):
        values = swish_values((3, 4), device, seed=9, dtype=torch.float32)
        inputs = make_inputs(values)
        check_no_copy_saved(SWISH, run_forward(function, SWISH, inputs), inputs)
        # a first derivative with a grad_output that needs no grad, here in one dtype: a backward
        # that records only when grad_output requires grad is named before the wider-beta case
        first_derivatives(SWISH.name, function.apply, tuple(make_inputs(values).values()),
                          torch.ones_like(values["x"]))
    with case("x of shape (3, 4), float32, beta=1.3, float64: beta wider than x"):
        check_wider_beta(function, SWISH, device)
    check_float32_second_derivatives(function, SWISH, device)
    for beta in (1.3, -0.7):
        values = swish_values((3,), device, beta=beta, seed=5)
        with case(f"x of shape (3,), beta={beta}"):
            check_gradcheck(function, SWISH, values)
            check_gradgradcheck(function, SWISH, values, ["x", "beta"])
            check_gradgradcheck(function, SWISH, values, ["x"])
            check_gradgradcheck(function, SWISH, values, ["beta"])
    check_saturated_tails(function, SWISH, device)  # last: the absolute checks name the rest
    check_tiny_beta(function, SWISH, device)


def check_second_backward_raises(function, spec: Spec, device) -> None:
    """With create_graph=True the first derivative is right, and differentiating it raises
    once_differentiable's error."""
    values = {"x": sample((4,), device, seed=3)}
    inputs = make_inputs(values)
    forward = run_forward(function, spec, inputs)
    grad_output = _random_like(forward.output, 21).requires_grad_()
    try:
        grad_x, = torch.autograd.grad(forward.output, inputs["x"], grad_output,
                                      create_graph=True, allow_unused=True)
    except RuntimeError as error:
        raise _create_graph_error(is_marked(function), spec, error, inputs) from error
    diagnose_gradient("x", grad_x, 3 * values["x"] ** 2 * grad_output.detach())
    try:  # backward(), not grad(): only a full backward runs once_differentiable's error node
        torch.autograd.backward((grad_x * _random_like(grad_x, 22)).sum())
    except RuntimeError as error:
        if ONCE_DIFFERENTIABLE_ERROR in str(error):
            return
        raised = f"a second backward through {spec.name} raised \"{str(error).splitlines()[0]}\""
        if not is_marked(function):
            raise GradingError(
                f"{raised}: your backward is not marked @once_differentiable"
                + (", and the gradient it returns has no graph (a NumPy result, or a .detach(), "
                   "is a constant to autograd), so the second backward finds nothing to "
                   "differentiate" if not grad_x.requires_grad else "")
                + "; the contract asks for once_differentiable's own clear error there: where "
                "does the mark go, on a backward that already carries @staticmethod?", str(error),
                mistake=f"{spec.name}/unmarked-second-backward-raises") from error
        raise GradingError(f"{raised} instead of once_differentiable's clear error, though "
                           "backward carries the mark: what raised before the mark's error node "
                           "was reached? (the details show it)", str(error)) from error
    raise GradingError(
        f"a second backward through {spec.name} succeeded: its backward is not marked "
        "@once_differentiable, and the contract asks that a second backward raise "
        "once_differentiable's error: where does the mark go, on a backward that already "
        "carries @staticmethod?",
        mistake=f"{spec.name}/not-once-differentiable")


def cube_once_full(CubeOnce, device) -> None:
    function = check_is_function(CubeOnce, CUBE_ONCE)
    with limit_nesting(function, SAVED_OUTPUT_FIX):
        check_class_untouched(function, CUBE_DOMAIN, device)  # before the copy-kept-aside check
        numpy_return_named(lambda: (check_calls_independent(
            function, CUBE_ONCE, {"x": sample((4,), device, seed=11)}, "(4,)"),
            _cube_once_checks(function, device)))


def _cube_once_checks(function, device) -> None:
    for seed, shape in enumerate(SHAPES):
        with case(f"x of shape {shape}"):
            try:
                forward, backward = check_values_and_gradients(
                    function, CUBE_ONCE, {"x": sample(shape, device, seed=seed)})
            except GradingError:
                name_narrowed_step(function, CUBE_ONCE, device)
                raise
            check_backward_by_hand(CUBE_ONCE, backward)
            check_no_ctx_tensors(CUBE_ONCE, forward)
            check_no_ctx_arrays(CUBE_ONCE, forward)
            check_no_copy_saved(CUBE_ONCE, forward, {"x": sample(shape, device, seed=seed)})
    check_backward_ctx_both_dtypes(function, CUBE_ONCE, lambda dtype: {
        "x": sample((4,), device, seed=12, dtype=dtype)}, "(4,)")
    check_every_x(function, CUBE_ONCE, device)
    check_each_input_alone(function, CUBE_ONCE, {"x": sample((3, 4), device, seed=6)})
    with case("x of shape (3, 4), saved tensors doctored by saved-tensor hooks"):
        check_backward_reads_saved(function, CUBE_ONCE, {"x": sample((3, 4), device, seed=6)},
                                   "what it needs")
    with case("x of shape (4,), changed in place after forward"):
        check_saved_guarded(function, CUBE_ONCE, device)
    with case("x of shape (3, 4), float32"):
        inputs = make_inputs({"x": sample((3, 4), device, seed=7, dtype=torch.float32)})
        check_no_copy_saved(CUBE_ONCE, run_forward(function, CUBE_ONCE, inputs), inputs)
    with case("x transposed, (4, 3)"):
        check_no_copy_saved_strided(function, CUBE_ONCE, {"x": sample((3, 4), device, seed=8)},
                                    "x")
    with case("x of shape (3,)"):
        check_gradcheck(function, CUBE_ONCE, {"x": sample((3,), device)})
    with case("x of shape (4,)"):
        check_second_backward_raises(function, CUBE_ONCE, device)
    covers("a second backward raises")
    with case("x 0-d, shape ()"):
        check_zero_dim(function, CUBE_ONCE, device)
    covers("0-d x")
    if device.type == "cpu":  # a GPU run tries CUDA itself
        with case("x of shape (3, 4) on a stand-in device that calls itself meta, as a GPU's "
                  "would be (this machine has none; a grader with a GPU tries a real one)"):
            check_result_on_x_device(function, CUBE_ONCE)
    check_cube_range_ends(function, CUBE_ONCE, device)  # last: earlier checks name the rest
    with case("x of shape (4,): a float64 call, then a float32 call in flight, then the first "
              "call's backward"):
        check_dtype_per_call(function, CUBE_ONCE, {"x": sample((4,), device, seed=13)})
    with case("x of shape (3, 4), the ops forward and backward run"):  # last: the rest first
        check_local_in_numpy(function, CUBE_ONCE, device)


SWISH_DOMAIN = Domain(SWISH, lambda device, dtype=torch.float64, seed=0, beta=1.3:
                      swish_values((3, 4), device, beta=beta, seed=seed, dtype=dtype),
                      # any real beta: negative, tiny (down to where a series switch still
                      # shows beyond float64's tolerance) and 0 too
                      constants={"beta": Constant(-8.0, 8.0, "beta a 0-d tensor",
                                                  also=(1e-4, -1e-4, 1e-6, -1e-8, 0.0))})
CUBE_DOMAIN = Domain(CUBE_ONCE, sampled(CUBE_ONCE, {"x": (3, 4)}),
                     cuda="a real CUDA x (a stand-in device checked that your backward brings "
                          "its NumPy result back to x's device)")

EXERCISES = [
    Exercise("SwishFunction", "04_double_backward", swish_full,
             contract=("beta = 0", "beta not requiring grad",
                       "float32 saturation", "0-d and empty x"),
             domain=SWISH_DOMAIN,
             example=lambda: (sample((5,), "cpu"), torch.tensor(1.3, dtype=torch.float64))),
    Exercise("CubeOnce", "04_double_backward", cube_once_full,
             contract=("a second backward raises", "0-d x"),
             example=lambda: (sample((5,), "cpu"),), domain=CUBE_DOMAIN),
]
