"""Lesson 01: MySigmoid, MyReLU and ScaledSigmoid."""

from contextlib import suppress

import torch

from ...checks import (Spec, case, check_backward_by_hand, check_gradcheck, check_is_function,
                      check_no_ctx_tensors, check_values_and_gradients, check_version_tracking,
                      run_backward, run_forward, make_inputs)
from dataclasses import replace

from ...contract import check_each_input_alone, covers
from ...domain import Constant, Domain, sampled
from ...default_device import check_default_device
from ...returned_dtypes import check_returned_dtypes
from ...errors import GradingError
from ...exercise import Exercise, sample
from ...function_contract import rule_reference
from .extremes import (check_relu_largest_finite, check_relu_non_finite_grad_output,
                       check_relu_smallest_positive, check_scaled_large_x)
from .scaled_scales import (SCALED_SIGMOID, scaled_values, check_no_division_by_scale,
                            check_tiny_scales)
from .sigmoid_probes import (check_branches_not_swapped, check_gradient_count,
                             check_mask_not_float32, check_output_used_as_sigmoid,
                             check_scale_not_float32, comparable, overflow_cause)
from ..shared.call_state import check_class_untouched, check_one_ctx_per_call
from ..shared.grad_output import check_uses_grad_output
from .sigmoid_accuracy import (check_near_zero, check_tails, check_whole_line, judge_line,
                               line_values)
from .saving import (HUGE, check_huge_call, check_input_untouched, check_saves_mask_or_output,
                     check_saves_only_output, relu_watch, sigmoid_watch)
from .watch import Watch

LINE_SCALE = 2.5  # ScaledSigmoid's scale on the dense line of x

LARGE = (64, 128)  # 8192 entries: a Function that behaves otherwise past some size shows here

# 0-d last, so that the first failure comes from a shape whose hint can name the mistake.
SHAPES = [(7,), (3, 4), (2, 3, 4), ()]

MY_SIGMOID = Spec("MySigmoid", ("x",), lambda x: torch.sigmoid(x))
MY_RELU = Spec("MyReLU", ("x",), lambda x: torch.relu(x))


def extreme_line(device) -> torch.Tensor:
    """x from -800 to 800, 8193 points: large |x| and a large x in one."""
    return torch.linspace(-800, 800, 8193, dtype=torch.float64, device=device)


def check_extreme_inputs(function, spec: Spec, device) -> None:
    """Finite outputs and gradients for |x| up to 800 in float64."""
    x = torch.linspace(-800, 800, 33, dtype=torch.float64, device=device)
    inputs = make_inputs({"x": x})
    forward = run_forward(function, spec, inputs)
    output = forward.output.detach()
    bad = ~torch.isfinite(output)
    if bad.any():
        cause = overflow_cause(x, bad)
        raise GradingError(f"{spec.name} returns inf or nan for large |x|{': ' if cause else ''}"
                           f"{cause} (at x = {x[bad][0].item()!r} it gives "
                           f"{output[bad][0].item()!r})",
                           mistake={"overflows": "MySigmoid/exp-overflows"})
    grad = run_backward(spec, forward.output, inputs, torch.ones_like(forward.output)).grads[0]
    if comparable(grad, x) and not torch.isfinite(grad).all():
        at = int((~torch.isfinite(grad)).nonzero()[0])
        raise GradingError(
            f"{spec.name}'s gradient is {grad[at].item()!r} at x = {x[at].item()!r}, where your "
            f"output is finite ({output[at].item()!r}): your backward makes it; a derivative "
            "written in y alone needs no exponential", mistake=f"{spec.name}/backward-not-finite")
    check_values_and_gradients(function, spec, {"x": x})
    covers("|x| up to 800")
    check_tails(function, spec, device)
    covers("left tail")


def my_sigmoid_full(MySigmoid, device) -> None:
    watch = sigmoid_watch(MY_SIGMOID)  # every call below: what it saves, its ops, x untouched
    function = watch.wrap(check_is_function(MySigmoid, MY_SIGMOID))
    check_class_untouched(function, MY_SIGMOID_DOMAIN, device)
    check_branches_not_swapped(function, MY_SIGMOID, device)
    check_uses_grad_output(function, MY_SIGMOID, {"x": 3 * sample((7,), device)})
    for seed, shape in enumerate(SHAPES):
        values = {"x": 3 * sample(shape, device, seed=seed)}
        with case(f"x of shape {shape}"):
            forward, backward = check_values_and_gradients(function, MY_SIGMOID, values)
            check_no_ctx_tensors(MY_SIGMOID, forward)
            check_saves_only_output(MY_SIGMOID, forward, backward)
            check_backward_by_hand(MY_SIGMOID, backward)
    check_input_untouched(function, MY_SIGMOID, {"x": 3 * sample((32, 32), device)},
                          {"x": 3 * sample(LARGE, device)}, {"x": extreme_line(device)})
    check_huge_call(function, MY_SIGMOID, {"x": 3 * sample(HUGE, device, seed=11)})
    check_each_input_alone(function, MY_SIGMOID, {"x": 3 * sample((3, 4), device)})
    check_extreme_inputs(function, MY_SIGMOID, device)
    check_near_zero(function, MY_SIGMOID, device)
    # two calls in flight: a backward that reads a global gets the later call's y
    check_one_ctx_per_call(function, MY_SIGMOID, {"x": 3 * sample((5,), device, seed=1)},
                           {"x": 3 * sample((5,), device, seed=2)})
    check_version_tracking(function, MY_SIGMOID, {"x": sample((4,), device)})
    check_gradcheck(function, MY_SIGMOID, {"x": sample((3,), device)})
    # last: the mistakes named above show here too, on a denser grid that names them less well
    check_whole_line(function, MY_SIGMOID, device)
    watch.settle()  # on every call above, large, non-leaf and grad-free x included
    covers("saves only its output")
    covers("its own forward")


def check_mask_blocks_negatives(function, spec: Spec, device) -> None:
    """A mask true at every entry (y >= 0 on the saved output y = max(x, 0)) passes grad_output
    through at x < 0, where torch.relu's gradient is 0: named before the shapes' comparisons
    blame a wrong gradient in general."""
    x = torch.tensor([-1e300, -2.0, -0.5, 1.0, 2.0], dtype=torch.float64, device=device)
    inputs = make_inputs({"x": x})
    forward = run_forward(function, spec, inputs)
    pristine = torch.tensor([0.7, -1.3, 2.1, 0.4, -0.9], dtype=torch.float64, device=device)
    grad_output = pristine.clone()  # a backward that writes into it is named elsewhere
    grad = run_backward(spec, forward.output, inputs, grad_output).grads[0]
    if (comparable(grad, x) and torch.equal(grad_output, pristine)
            and torch.equal(grad, pristine)):
        raise GradingError(
            f"{spec.name}'s gradient is grad_output itself at x < 0 too (at x = -1e300, -2, "
            "-0.5), "
            "where torch.relu's is 0: the mask lets every entry through; a mask on the saved "
            "output y = max(x, 0) must tell y = 0 from y > 0 (y >= 0 holds for every y)",
            mistake=f"{spec.name}/mask-passes-negatives")


def check_gradient_at_zero(function, spec: Spec, device) -> None:
    """The contract (as torch.relu) gives gradient 0 at x = 0 exactly, +0.0 and -0.0 alike."""
    # 1e-300 and -1e-300: a mask with a threshold (x > 1e-6), or one computed in a narrower
    # dtype, misplaces them
    x = torch.tensor([-1.0, 0.0, 2.0, -0.0, 1e-300, -1e-300], dtype=torch.float64, device=device)
    inputs = make_inputs({"x": x})
    forward = run_forward(function, spec, inputs)
    grad = run_backward(spec, forward.output, inputs, torch.ones_like(forward.output)).grads[0]
    if comparable(grad, x) and bool(grad[[1, 3]].ne(0).any()):
        at_zero = grad[[1, 3]]
        # grad_output is 1 here: a gradient of exactly 1 at 0 is grad_output passed through
        cause = (": x = 0 is on the side the mask passes grad_output through"
                 if bool((at_zero == 1).all()) else "")
        raise GradingError(
            f"{spec.name}'s gradient at x = 0 is {at_zero[0].item()!r}"
            f"{'' if at_zero[0] == at_zero[1] else f' (at -0.0: {at_zero[1].item()!r})'}, where "
            f"the contract (and torch.relu) gives 0{cause}",
            mistake={"the side the mask passes": "MyReLU/mask-includes-zero"})
    if comparable(grad, x) and grad[4].item() == 0 and grad[2].item() == 1:
        raise GradingError(
            f"{spec.name}'s gradient at x = 1e-300 is 0, where torch.relu's is grad_output (1 "
            "here): the mask's threshold lies above 0 (x > 0 exactly is torch.relu's: every "
            "positive x, however small, passes grad_output through)",
            mistake=f"{spec.name}/mask-threshold-above-zero")
    with case("x holding exact zeros"):
        check_values_and_gradients(function, spec, {"x": x})
    covers("x exactly 0")


def check_output_is_new(function, spec: Spec, device, values=(1.0, 2.0, 3.0),
                        where="above 0") -> None:
    """Where every entry of x is ``where`` (above 0 for relu), the output has x's values: an
    answer that returns x itself there hands the caller x's memory, so a write into the output
    writes into x."""
    x = torch.tensor(values, dtype=torch.float64, device=device)
    for grad in (True, False):
        with torch.set_grad_enabled(grad):
            leaf = x.clone().requires_grad_(grad)
            y = function.apply(leaf)
            if isinstance(y, torch.Tensor) and y.untyped_storage().data_ptr() == \
                    leaf.untyped_storage().data_ptr():
                raise GradingError(
                    f"{spec.name} returned x itself where every entry of x is {where} (x = "
                    f"[{', '.join(f'{v:g}' for v in values)}], grad "
                    f"{'enabled' if grad else 'disabled'}): its output shares "
                    "x's memory, so a caller who writes into the output writes into x (or, "
                    "with grad, autograd refuses the write); what must forward return, "
                    "whatever x holds?", mistake=f"{spec.name}/returns-input")


def check_backward_keeps_output(function, spec: Spec, device) -> None:
    """Backward leaves forward's output as it was: an answer that saves y and turns it into its
    mask in place (y.sign_()) gives the right gradient once, and changes the y its caller
    holds; named here, before a probe that reads the output after backward blames a value."""
    x = sample((7,), device, away_from_zero=0.1)
    inputs = make_inputs({"x": x})
    forward = run_forward(function, spec, inputs)
    if not isinstance(forward.output, torch.Tensor):
        return  # the battery names it
    before, version = forward.output.detach().clone(), forward.output._version
    with suppress(Exception):  # an error in backward: the battery names it
        run_backward(spec, forward.output, inputs, torch.ones_like(forward.output))
    if forward.output._version != version or not torch.equal(forward.output.detach(), before):
        raise GradingError(
            f"{spec.name}.backward changes a tensor that forward saved, in place: its output y, "
            "which the caller holds too, is not what forward returned after backward ran; build "
            "new tensors from the saved ones (torch.sign(y), not y.sign_()) "
            f"{rule_reference('unwritten')}", mistake=f"{spec.name}/backward-modifies-saved-tensor")


def my_relu_full(MyReLU, device) -> None:
    watch = relu_watch(MY_RELU)  # every call below: what it saves, x untouched
    function = watch.wrap(check_is_function(MyReLU, MY_RELU))
    check_class_untouched(function, MY_RELU_DOMAIN, device)
    check_uses_grad_output(function, MY_RELU, {"x": sample((7,), device, away_from_zero=0.1)})
    check_backward_keeps_output(function, MY_RELU, device)
    check_mask_blocks_negatives(function, MY_RELU, device)
    for seed, shape in enumerate(SHAPES):
        values = {"x": sample(shape, device, seed=seed, away_from_zero=0.1)}
        with case(f"x of shape {shape}"):
            forward, backward = check_values_and_gradients(function, MY_RELU, values)
            check_no_ctx_tensors(MY_RELU, forward)
            check_backward_by_hand(MY_RELU, backward)
    for dtype in MY_RELU_DOMAIN.dtypes:  # x of 8192 entries: the watch sees what these save,
        # and whether backward writes into grad_output
        x = sample(LARGE, device, seed=7, dtype=dtype, away_from_zero=0.1).requires_grad_()
        with suppress(Exception):  # a call that raises is left to the checks of each dtype
            function.apply(x).backward(sample(LARGE, device, seed=8, dtype=dtype))
        check_input_untouched(function, MY_RELU, {"x": x})
    check_input_untouched(function, MY_RELU, {"x": sample((32, 32), device, seed=3,
                                                          away_from_zero=0.1)},
                          {"x": 1e300 * sample(LARGE, device, seed=4, away_from_zero=0.1)})
    for dtype in MY_RELU_DOMAIN.dtypes:  # 2^17 entries, forward and backward, in each dtype
        check_huge_call(function, MY_RELU, {"x": sample(HUGE, device, seed=10, dtype=dtype)})
    for values in ((1.0, 2.0, 3.0), (700.0, 800.0), (1e300,)):
        check_output_is_new(function, MY_RELU, device, values)
    covers("grad_output and x untouched")
    check_mask_not_float32(function, MY_RELU, device)
    check_gradient_at_zero(function, MY_RELU, device)
    check_relu_smallest_positive(function, MY_RELU, device)
    covers("smallest positive x")
    with case("x of 8192 entries, exact zeros among them"):  # a size-gated mask shows here
        large = sample(LARGE, device, seed=9)
        large[::7] = 0.0
        check_values_and_gradients(function, MY_RELU, {"x": large})
    check_relu_largest_finite(function, MY_RELU, device)
    covers("largest finite x")
    check_saves_mask_or_output(function, MY_RELU, device)
    check_each_input_alone(function, MY_RELU, {"x": sample((3, 4), device, away_from_zero=0.1)})
    check_one_ctx_per_call(function, MY_RELU, {"x": sample((5,), device, seed=1,
                                                          away_from_zero=0.1)},
                           {"x": sample((5,), device, seed=2, away_from_zero=0.1)})
    check_gradcheck(function, MY_RELU, {"x": sample((4,), device, away_from_zero=0.1)})
    watch.settle()  # on every call above: each dtype, the largest finite x, non-leaf x
    covers("at most one byte an element")
    # last: an answer that breaks another clause and multiplies by its mask is named for that
    check_relu_non_finite_grad_output(function, MY_RELU, device)
    covers("grad_output not finite")


def scaled_sigmoid_full(ScaledSigmoid, device) -> None:
    watch = Watch(SCALED_SIGMOID)  # every call below: x untouched, no attribute set on x
    function = watch.wrap(check_is_function(ScaledSigmoid, SCALED_SIGMOID))
    check_class_untouched(function, SCALED_SIGMOID_DOMAIN, device)
    with case("x of shape (7,), scale=0.0"):
        check_no_division_by_scale(function, device)
    with case("x of shape (7,), scale=2.5"):
        check_output_used_as_sigmoid(function, SCALED_SIGMOID, device)
    with case("x of shape (7,), scale=0.1"):
        check_scale_not_float32(function, SCALED_SIGMOID, device)
    for seed, shape in enumerate(SHAPES + [(0,)]):  # any shape: an empty x too, last
        for scale in (2.5, -1.0, 0.0):
            with case(f"x of shape {shape}, scale={scale}"):
                forward, backward = check_values_and_gradients(
                    function, SCALED_SIGMOID, scaled_values(shape, device, scale, seed))
                check_no_ctx_tensors(SCALED_SIGMOID, forward)
                check_backward_by_hand(SCALED_SIGMOID, backward)
    with case("x from -8 to 8 with 0 exactly, scale=0.0"):  # large |x|: check_scaled_large_x
        check_values_and_gradients(function, SCALED_SIGMOID, {
            "x": torch.linspace(-8, 8, 33, dtype=torch.float64, device=device),
            "scale": 0.0})
    # rule 2's dtype, read before autograd's cast, and the default device, at scale 0 too: a
    # backward with a case of its own there (zeros of the default dtype or on the default
    # device, say) is never reached at the domain's scale
    with case("x of shape (3, 4), scale=0.0"):
        check_returned_dtypes(SCALED_SIGMOID_AT_ZERO, function, device)
        check_default_device(SCALED_SIGMOID_AT_ZERO, function, device)  # and rule 6's device
    covers("scale of 0")
    covers("negative scale")
    check_tiny_scales(function, device)
    check_gradient_count(function, SCALED_SIGMOID, scaled_values((3, 4), device, 2.5))
    check_input_untouched(function, SCALED_SIGMOID, scaled_values((32, 32), device, 2.5),
                          scaled_values(LARGE, device, 0.0), {"x": extreme_line(device),
                                                              "scale": -1.0})
    check_huge_call(function, SCALED_SIGMOID, scaled_values(HUGE, device, -1.5, seed=12))
    check_each_input_alone(function, SCALED_SIGMOID, scaled_values((3, 4), device, 2.5))
    check_gradcheck(function, SCALED_SIGMOID, scaled_values((3,), device, -1.5))
    # last: a float32 step or state shared between calls is named above, where it shows first
    check_scaled_large_x(function, SCALED_SIGMOID, device)
    covers("large |x|")
    # a dense line of x, both halves, one call: sigma treated as 1 past a threshold shows here
    if (line := line_values(function, SCALED_SIGMOID, device, scale=LINE_SCALE)) is not None:
        judge_line(SCALED_SIGMOID, line, scale=LINE_SCALE)
    covers("x on a dense line")
    watch.settle()


# the domain's checks (after the battery) watched too, each finding raised at once
MY_SIGMOID_DOMAIN = Domain(MY_SIGMOID, sampled(MY_SIGMOID, {"x": (3, 4)}, scale=3.0),
                           prepare=lambda answer: sigmoid_watch(MY_SIGMOID).prepare(answer))
MY_RELU_DOMAIN = Domain(MY_RELU, sampled(MY_RELU, {"x": (3, 4)}, away_from_zero=0.1),
                        prepare=lambda answer: relu_watch(MY_RELU).prepare(answer),
                        dtypes=(torch.float64, torch.float32, torch.float16),
                        dtype_clause="the value and the gradient of torch.relu in float64, "
                                     "float32 and float16, each in the input's dtype")
# scale is any Python float: large magnitudes of both signs, a point off every power of two,
# 0 and magnitudes far below 1 (check_tiny_scales holds those to relative precision)
SCALE = Constant(-1e3, 1e3, "scale a Python float (any sign, 0 and tiny magnitudes included)",
                 also=(0.0, -1e-12, 1e-6))
SCALED_SIGMOID_DOMAIN = Domain(SCALED_SIGMOID,
                               sampled(SCALED_SIGMOID, {"x": (3, 4)}, {"scale": 2.5}),
                               prepare=lambda answer: Watch(SCALED_SIGMOID).prepare(answer),
                               constants={"scale": SCALE})
# the same domain at scale 0, where an answer that keeps y needs a path of its own
SCALED_SIGMOID_AT_ZERO = replace(SCALED_SIGMOID_DOMAIN,
                                 values=sampled(SCALED_SIGMOID, {"x": (3, 4)}, {"scale": 0.0}))


EXERCISES = [
    Exercise("MySigmoid", "01_sigmoid", my_sigmoid_full,
             contract=("|x| up to 800", "left tail", "saves only its output", "right half",
                       "gradients on both halves", "its own forward"),
             example=lambda: (3 * sample((5,), "cpu"),), domain=MY_SIGMOID_DOMAIN),
    Exercise("MyReLU", "01_sigmoid", my_relu_full,
             contract=("x exactly 0", "smallest positive x", "grad_output and x untouched",
                       "at most one byte an element", "largest finite x",
                       "grad_output not finite"),
             example=lambda: (sample((6,), "cpu", away_from_zero=0.1),), domain=MY_RELU_DOMAIN),
    Exercise("ScaledSigmoid", "01_sigmoid", scaled_sigmoid_full,
             contract=("scale of 0", "negative scale", "tiny scales", "large |x|",
                       "x on a dense line"),
             example=lambda: tuple(scaled_values((5,), "cpu", 2.5).values()),
             domain=SCALED_SIGMOID_DOMAIN),
]
