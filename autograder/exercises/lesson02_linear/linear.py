"""Lesson 02: MyLinearFunction and FusedLinearReLU."""

import itertools

import torch
import torch.nn.functional as F

from ...checks import (Spec, case, check_backward_by_hand, check_gradcheck, check_is_function,
                      check_no_ctx_tensors, check_values_and_gradients, make_inputs,
                      run_backward, run_forward)
from ...contract import check_each_input_alone, covers
from ...domain import Domain, sampled
from ...errors import GradingError
from ...exercise import Exercise, sample
from ..shared.backward_reads import unsaved_input_named
from ..shared.call_state import (check_call_places, check_class_untouched,
                                 check_input_version_tracking)
from ..shared.grad_output import check_noncontiguous_grad_output, name_ignored_grad_output
from .backward_work import (check_frozen_bias_not_summed, check_no_linear_in_backward,
                            check_no_work_for_frozen)
from .needs_grad import NEEDS, check_needs_input_grad
from .global_state import (check_fresh_call_state, check_same_shape_calls,
                           check_weight_stepped, state_before_values)
from .layouts import check_layouts
from .many_rows import check_many_rows
from .contracts import FUSED_RULES, LINEAR_LAYOUT_CLAUSE, MY_LINEAR_RULES
from .leading_dims import (IN_FEATURES, LEADING_SHAPES, OUT_FEATURES, linear_values,
                           raise_none_for_empty, values_and_gradients)
from .size_one import squeeze_named
from .relu_mask import (check_bias_gradient_masked, check_exact_zero_pre_activation,
                        check_mask_from_sign, check_no_float_kept, check_saves_bool_mask)

# empty batches, the 0 first, in the middle and last of the leading dims: F.linear gives a
# (*leading, out) output and zero parameter gradients (a reshape(rows, -1) keyed on one leading
# size, or a special case for x.shape[0] == 0, fails past the first)
EMPTY_SHAPES = ((0,), (2, 0), (3, 0, 2))

MY_LINEAR = Spec("MyLinearFunction", ("x", "weight", "bias"),
                 lambda x, weight, bias=None: F.linear(x, weight, bias))
FUSED_LINEAR_RELU = Spec("FusedLinearReLU", ("x", "weight", "bias"),
                         lambda x, weight, bias=None: torch.relu(F.linear(x, weight, bias)))


def _linear_case(values: dict) -> str:
    bias = "a tensor" if "bias" in values else "None"
    return f"x of shape {tuple(values['x'].shape)}, bias={bias}"


def check_grad_x_formula(function, spec: Spec, device) -> None:
    """With a square weight a wrong transpose keeps the shape: name the popular mistake. In the
    fused layer, name a grad_x that skips the ReLU's mask (the linear layer's own grad_x)."""
    values = {"x": sample((5, 3), device), "weight": sample((3, 3), device, seed=1)}
    inputs = make_inputs(values)
    forward = run_forward(function, spec, inputs)
    grad_output = sample((5, 3), device, seed=2)
    backward = run_backward(spec, forward.output, inputs, grad_output)
    grad_x, weight = backward.grads[0], values["weight"]
    if not isinstance(grad_x, torch.Tensor):
        return
    if spec is FUSED_LINEAR_RELU:  # the ReLU passes grad_output where the pre-activation > 0
        unmasked, grad_output = grad_output, grad_output * (values["x"] @ weight.T > 0)
        if (not torch.allclose(grad_x, grad_output @ weight)
                and torch.allclose(grad_x, unmasked @ weight)):
            raise GradingError(
                "grad_x is the plain linear layer's, grad_output @ weight, as if there were no "
                "ReLU: where the pre-activation is <= 0 the ReLU passes no gradient back, so "
                "none reaches x from there either. In exercise 1's formulas, what takes "
                "grad_output's place here, for grad_x as for the other two?",
                mistake=f"{spec.name}/grad-x-unmasked")
    if (not torch.allclose(grad_x, grad_output @ weight)
            and torch.allclose(grad_x, grad_output @ weight.T)):
        raise GradingError(
            "grad_x = grad_output @ weight.T is wrong, a transpose too many: with this square "
            "weight the shapes fit and only the values are off (with in != out it would not "
            "run). Which product of grad_output (*, out) and weight (out, in) has x's shape "
            "(*, in)? Step 2 of the derivation, and its live checker, settle it",
            mistake=f"{spec.name}/grad-x-transposed")


# the inputs each gradient's formula reads (besides grad_output and, fused, the mask)
def check_shapes_and_bias(function, spec: Spec, device, *, fused: bool) -> None:
    """Every leading shape (none included), with a bias and with bias=None."""
    for seed, (leading, bias) in enumerate(itertools.product(LEADING_SHAPES, (True, False))):
        values = linear_values(leading, device, bias=bias, seed=seed)
        with case(_linear_case(values)):
            forward, backward = values_and_gradients(function, spec, values, device)
            check_no_ctx_tensors(spec, forward)
            if fused:
                check_saves_bool_mask(spec, forward)
            check_backward_by_hand(spec, backward)
    covers("x with no leading dimension")
    covers("bias=None")
    with case("grad_output not contiguous"):
        check_noncontiguous_grad_output(function, spec, linear_values((2, 5), device))
    if fused:
        covers("saves a boolean mask")


def check_empty_batch(function, spec: Spec, device) -> None:
    """x of shape (*leading, in) with a 0 in the leading dims (first, last or between), after
    every other leading shape passed: F.linear's output is (*leading, out) and the gradients of
    weight and bias are zeros, a sum over no rows."""
    for leading in EMPTY_SHAPES:
        values = linear_values(leading, device)
        with case(_linear_case(values)):
            try:
                check_values_and_gradients(function, spec, values)
            except GradingError as error:
                raise_none_for_empty(function, spec, values, "F.linear" if spec.name.startswith(
                    "MyLinear") else "torch.relu(F.linear(...))")
                raise GradingError(
                    f"{spec.name} fails for an empty batch, x of shape "
                    f"{tuple(values['x'].shape)}, and is right for every non-empty leading "
                    f"shape: there F.linear's output has shape {(*leading, OUT_FEATURES)} and "
                    "the gradients of weight and bias are zeros, sums over no rows. Does your "
                    "code divide by the number of rows, pick one row out, or ask reshape to "
                    "infer a size from zero elements?",
                    error.details or error.hint, mistake=f"{spec.name}/empty-batch") from error
    covers("an empty batch")


def check_one_feature(function, spec: Spec, device) -> None:
    """in = out = 1 (a regression head, as the lesson's two-layer network ends): weight (1, 1)
    and bias (1,), where a squeeze() meant for another dimension of size 1 drops the feature
    dimension too; then a single vector x (no leading dimension) with out = 1, and with
    in = 1, where a squeeze() that undoes an added leading dimension drops it as well."""
    values = linear_values((5,), device, features=(1, 1), seed=7)
    with case("x of shape (5, 1), weight of shape (1, 1) (in = out = 1), bias=a tensor"):
        check_values_and_gradients(function, spec, values)
    for features, sizes in (((IN_FEATURES, 1), "out = 1"), ((1, OUT_FEATURES), "in = 1")):
        values = linear_values((), device, features=features, seed=8)
        in_features, out_features = features
        with case(f"x of shape ({in_features},), weight of shape ({out_features}, "
                  f"{in_features}) ({sizes}), bias=a tensor"):
            with squeeze_named(function, spec, values, sizes):
                check_values_and_gradients(function, spec, values)


def check_each_alone(function, spec: Spec, device, *, frozen_get_none: bool,
                     biases=(True, False)) -> None:
    """Each of x, weight and bias as the only input that requires grad, then x and weight
    without a bias."""
    for bias in biases:
        check_each_input_alone(function, spec, linear_values((2, 5), device, bias=bias),
                               frozen_get_none=frozen_get_none)


def check_saved_through_ctx(function, spec: Spec, device) -> None:
    """x, then weight, changed in place between forward and backward: autograd must refuse (what
    ctx.save_for_backward guards), or the gradients must be those of the values forward saw. A
    backward reading x or weight kept in a global (a dict keyed by id(ctx)) uses the new ones."""
    for name in ("x", "weight"):
        with case(f"{name} changed in place after forward, x of shape (5, {IN_FEATURES})"):
            check_input_version_tracking(function, spec, linear_values((5,), device), name)


# what a None saved in place of an input that a wanted gradient reads is told
SAVE_ADVICE = ("which entry of ctx.needs_input_grad says that gradient is wanted, and what "
               "does your forward save when it is True?")


def unsaved_named(function, device, spec: Spec):
    """bilinear's unsaved_input_named, with x or weight alone requiring grad."""
    return unsaved_input_named(function, lambda: linear_values((5,), device), NEEDS,
                               ("x", "weight"), SAVE_ADVICE, spec.name)


def my_linear_full(MyLinearFunction, device) -> None:
    function = check_is_function(MyLinearFunction, MY_LINEAR)
    with (unsaved_named(function, device, MY_LINEAR),
          state_before_values(function, MY_LINEAR, _fresh_values(device),
                              MY_LINEAR_RULES["values"])):
        _my_linear_checks(function, device)


def _same_shapes(function, spec: Spec, device) -> None:
    """State outside ctx named first: on an input tensor or in a mutable default, a stale
    cached weight.T, then two calls of one shape."""
    check_call_places(function, spec, linear_values((5,), device))
    check_weight_stepped(function, spec, linear_values((5,), device))
    check_same_shape_calls(function, spec, linear_values((2, 3), device, bias=False),
                           linear_values((2, 3), device, bias=False, seed=7))


def _uses_grad_output(function, spec: Spec, device) -> None:
    """A gradient that is the local derivative alone, grad_output left out (learner trial 82:
    Bilinear's grad_weight), is named as lessons 00 and 01 name it."""
    with case(f"x of shape (5, {IN_FEATURES}), bias=a tensor"):
        name_ignored_grad_output(function, spec, linear_values((5,), device))


def _my_linear_checks(function, device) -> None:
    _same_shapes(function, MY_LINEAR, device)
    check_class_untouched(function, MY_LINEAR_DOMAIN, device)
    _uses_grad_output(function, MY_LINEAR, device)
    check_grad_x_formula(function, MY_LINEAR, device)
    check_shapes_and_bias(function, MY_LINEAR, device, fused=False)
    check_saved_through_ctx(function, MY_LINEAR, device)
    check_empty_batch(function, MY_LINEAR, device)
    check_many_rows(function, MY_LINEAR, _many(device), "x")
    check_one_feature(function, MY_LINEAR, device)
    # names a gate slip before the FLOP count; the pass after it tries bias=None too
    check_each_alone(function, MY_LINEAR, device, frozen_get_none=False, biases=(True,))
    check_needs_input_grad(function, MY_LINEAR, device)  # names the matmuls to skip
    check_each_alone(function, MY_LINEAR, device, frozen_get_none=True)
    check_frozen_bias_not_summed(function, MY_LINEAR, linear_values((6,), device))
    check_no_work_for_frozen(function, MY_LINEAR, linear_values((6,), device))
    covers("skips every unneeded matmul")
    check_no_linear_in_backward(function, MY_LINEAR, linear_values((2, 5), device))
    check_gradcheck(function, MY_LINEAR, linear_values((2,), device))
    check_layouts(function, MY_LINEAR_DOMAIN, device, linear_values((6,), device))
    check_fresh_call_state(function, MY_LINEAR, _fresh_values(device))


_FRESH_ROWS = itertools.count()


def fused_full(FusedLinearReLU, device) -> None:
    function = check_is_function(FusedLinearReLU, FUSED_LINEAR_RELU)
    with (unsaved_named(function, device, FUSED_LINEAR_RELU),
          state_before_values(function, FUSED_LINEAR_RELU, _fresh_values(device),
                              (*FUSED_RULES["values"], "FusedLinearReLU/saves-no-mask"))):
        _fused_checks(function, device)


def _fused_checks(function, device) -> None:
    _same_shapes(function, FUSED_LINEAR_RELU, device)
    check_class_untouched(function, FUSED_DOMAIN, device)
    _uses_grad_output(function, FUSED_LINEAR_RELU, device)
    check_grad_x_formula(function, FUSED_LINEAR_RELU, device)
    check_bias_gradient_masked(function, FUSED_LINEAR_RELU, device)
    check_mask_from_sign(function, FUSED_LINEAR_RELU, device)
    check_shapes_and_bias(function, FUSED_LINEAR_RELU, device, fused=True)
    check_saved_through_ctx(function, FUSED_LINEAR_RELU, device)
    # a batch size this process has not probed yet: a workspace kept per shape in a global is
    # then made by this forward, on a rerun of the self-check too
    rows = 7 + next(_FRESH_ROWS) % 4000
    with case(f"x of shape ({rows}, 3), weight of shape (4, 3), bias=a tensor"):
        check_no_float_kept(function, FUSED_LINEAR_RELU, linear_values((rows,), device))
    check_mask_whichever_frozen(function, FUSED_LINEAR_RELU, linear_values((5,), device))
    check_empty_batch(function, FUSED_LINEAR_RELU, device)
    check_many_rows(function, FUSED_LINEAR_RELU, _many(device), "x")
    check_one_feature(function, FUSED_LINEAR_RELU, device)
    check_exact_zero_pre_activation(function, FUSED_LINEAR_RELU, device)
    check_each_alone(function, FUSED_LINEAR_RELU, device, frozen_get_none=False)
    check_needs_input_grad(function, FUSED_LINEAR_RELU, device)
    check_each_alone(function, FUSED_LINEAR_RELU, device, frozen_get_none=True)
    check_frozen_bias_not_summed(function, FUSED_LINEAR_RELU, linear_values((6,), device))
    check_no_work_for_frozen(function, FUSED_LINEAR_RELU, linear_values((6,), device))
    check_gradcheck(function, FUSED_LINEAR_RELU, linear_values((2,), device))
    check_layouts(function, FUSED_DOMAIN, device, linear_values((6,), device))
    check_fresh_call_state(function, FUSED_LINEAR_RELU, _fresh_values(device))


def check_mask_whichever_frozen(function, spec: Spec, values: dict) -> None:
    """The mask and nothing-else-kept clauses, whichever inputs require grad: each non-empty
    proper subset of x, weight and bias (all three is check_shapes_and_bias's case)."""
    for wanted in (*itertools.combinations(values, 1), *itertools.combinations(values, 2)):
        with case(f"x of shape (5, {IN_FEATURES}), only {' and '.join(wanted)} requiring grad"):
            check_saves_bool_mask(spec, run_forward(function, spec, make_inputs(
                values, requires_grad=set(wanted))))
            check_no_float_kept(function, spec, values, requires_grad=set(wanted))


def _many(device):
    return lambda leading, dtype: linear_values(leading, device, seed=3, dtype=dtype)


def _fresh_values(device):
    return lambda rows, seed: linear_values((rows,), device, seed=seed)


# x with leading dimensions, so that a transposed x is a batch of transposed matrices
SHAPES = {"x": (2, 3, 4), "weight": (5, 4), "bias": (5,)}
# odd seeds (the per-call check's first call) take every size another value: x of another
# leading shape and in, weight and bias of another out (a size kept in a global for backward's
# reshape is then the other call's, whichever size it is)
ROWS = {"x": (6, 3), "weight": (2, 3), "bias": (2,)}


def _by_seed(spec: Spec):
    """The domain's values, x (2, 3, 4) and weight (5, 4) for even seeds, x (6, 3) and weight
    (2, 3) for odd ones, so that the per-call check's two calls differ in every size."""
    even, odd = sampled(spec, SHAPES), sampled(spec, ROWS)
    return lambda device, dtype=torch.float64, seed=0, **given: (
        odd if seed % 2 else even)(device, dtype, seed, **given)


MY_LINEAR_DOMAIN = Domain(MY_LINEAR, _by_seed(MY_LINEAR), optional=("bias",),
                          layout_clause=LINEAR_LAYOUT_CLAUSE)
FUSED_DOMAIN = Domain(FUSED_LINEAR_RELU, _by_seed(FUSED_LINEAR_RELU), optional=("bias",),
                      layout_clause=LINEAR_LAYOUT_CLAUSE)


EXERCISES = [
    Exercise("MyLinearFunction", "02_linear", my_linear_full,
             contract=("x with no leading dimension", "bias=None", "non-contiguous grad_output",
                       "an empty batch", "skips every unneeded matmul"),
             example=lambda: tuple(linear_values((5,), "cpu").values()), domain=MY_LINEAR_DOMAIN),
    Exercise("FusedLinearReLU", "02_linear", fused_full,
             contract=("x with no leading dimension", "bias=None", "non-contiguous grad_output",
                       "an empty batch", "saves a boolean mask",
                       "pre-activations exactly 0"),
             example=lambda: tuple(linear_values((5,), "cpu").values()), domain=FUSED_DOMAIN),
]
