"""Lesson 00: Square and WeightedSum."""

import re

import torch

from ...checks import (Spec, case, check_backward_by_hand, check_is_function, check_no_ctx_tensors,
                      check_values_and_gradients, make_inputs, run_backward, run_forward)
from ...contract import check_each_input_alone, covers
from ...domain import Constant, Domain
from ...errors import GradingError
from ...function_contract import rule_reference
from ...mistakes import RAISED, mistake_of
from ...exercise import Exercise, sample
from ...probes import reachable
from ..shared.call_state import (check_call_places, check_class_untouched,
                                 check_input_version_tracking, check_one_ctx_per_call)
from ..shared.grad_output import check_strided_grad_output, check_uses_grad_output
from .contracts import SQUARE_LAYOUTS, WEIGHTED_SUM_LAYOUTS
from ..shared.reuse import check_second_call_after_step
from ..shared.saved_reads import check_backward_reads_saved
from .kept import check_empty_shapes, gradcheck_named
from .weights import (WEIGHTED_SUM, _check_weighted, _weighted_values,  # noqa: F401
                      check_no_state_on_inputs, check_one_ctx_per_call_weights,
                      check_gradient_count, check_tiny_weights,
                      check_weight_special_cases,
                      check_every_digit, check_saves_no_input, check_weights_kept_as_floats,
                      check_weights_not_rounded,
                      check_weights_not_swapped)
from ..shared.jacobian_memory import check_backward_memory_linear
from .large_inputs import check_large_sizes
from .square_extremes import SQUARE, check_square_at_zero, check_square_float32_ends

# size-1 dimensions and 0-d last: on a single element every wrong gradient looks like a sign or
# a constant factor, so the first failure should come from a shape whose hint can tell them
# apart. (3, 1) and (1,): a gradient .squeeze()d to (3,) or () is no gradient of x's shape.
SHAPES = [(5,), (3, 4), (2, 3, 4), (3, 1), (1,), ()]
# "any shape" includes an empty one: tried after every other shape, so that a failure there
# (a loop over the entries joined by torch.stack) is named as one
EMPTY_SHAPES = [(0,), (2, 0)]



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
            "for x has the wrong sign wherever x < 0 (sqrt(y) is |x|, not x)",
            mistake="Square/saves-output-loses-sign")
    raise GradingError(
        "your gradient for x has the wrong sign wherever x < 0 and is right where x > 0: it "
        "uses |x| where the derivative of x ** 2 is 2x", mistake="Square/uses-abs-x")


def check_square_keeps_sign_named(function, device) -> None:
    """check_square_keeps_sign, the first call on x of a new shape, (6,) after (4,): a size
    mismatch backward raises there, against a size the x of this call does not have, comes from
    a tensor of an earlier call (a queue or a global every call shares); named so."""
    try:
        check_square_keeps_sign(function, device)
    except GradingError as error:
        sizes = {int(n) for n in re.findall(r"size of tensor [ab] \((\d+)\)", error.hint)}
        if not mistake_of(error).startswith(RAISED) or not sizes - {6}:
            raise
        raise GradingError(
            f"Square.backward, called for x of shape (6,), used a tensor of size "
            f"{min(sizes - {6})} along a dimension where x has 6: a tensor from an earlier call "
            "of another shape; does backward take it from somewhere every call shares (a "
            "queue, a global, the class)? Keep it with ctx.save_for_backward, one per call "
            + rule_reference("ctx"),
            error.details, mistake="Square/state-shared-between-calls") from error


def square_full(Square, device) -> None:
    function = check_is_function(Square, SQUARE)
    # first, before any call: an attribute set once (a cache) is there for every later snapshot
    check_class_untouched(function, SQUARE_DOMAIN, device)
    check_call_places(function, SQUARE, {"x": sample((4,), device, seed=12)})
    check_uses_grad_output(function, SQUARE, {"x": sample((4,), device)})
    check_square_keeps_sign_named(function, device)
    # 1-D, before the other shapes: a torch.diag(2 * x) of a 1-D x is named, not the error
    # the same code raises on a 2-D x
    check_backward_memory_linear(function, SQUARE, {"x": sample((256,), device, seed=5)},
                                 "x of shape (256,)")
    covers("memory linear in the size of x")
    for seed, shape in enumerate(SHAPES):
        values = {"x": sample(shape, device, seed=seed)}
        with case(f"x of shape {shape}"):
            forward, backward = check_values_and_gradients(function, SQUARE, values)
            check_no_ctx_tensors(SQUARE, forward)
            # the derivation is the exercise: no autograd inside backward (rule 3)
            check_backward_by_hand(SQUARE, backward)
    covers("0-d x")
    check_square_at_zero(function, device)
    check_square_float32_ends(function, device)
    check_strided_grad_output(function, SQUARE, {"x": sample((3, 4), device, seed=4)})
    with case("x of shape (5,)"):
        check_one_ctx_per_call(function, SQUARE, {"x": sample((5,), device, seed=1)},
                               {"x": sample((5,), device, seed=2)})
        check_input_version_tracking(function, SQUARE, {"x": sample((5,), device)})
        check_backward_reads_saved(function, SQUARE, {"x": sample((5,), device, seed=3)}, "x")
        check_second_call_after_step(function, SQUARE, {"x": sample((5,), device, seed=6)})
    check_each_input_alone(function, SQUARE, {"x": sample((3, 4), device)})
    covers("float32")
    check_values_and_gradients(function, SQUARE, {"x": sample((3, 4), device, dtype=torch.float32)},
                               rtol=1e-5, atol=1e-6)
    check_empty_shapes(function, SQUARE, [({"x": sample(shape, device)}, f"x of shape {shape}")
                                          for shape in EMPTY_SHAPES], "x")
    covers("empty x")
    gradcheck_named(function, SQUARE, {"x": sample((3,), device)})
    # "any shape": every digit at 2^17 entries too (a narrower dtype above some size)
    check_large_sizes(function, SQUARE, {"x": sample((3, 4), device, seed=8)},
                      {"x": sample((256, 512), device, seed=9)}, "x of shape (256, 512)",
                      alone=lambda values, what, index: [
                          ({"x": values["x"][index].reshape(1)}, "x of shape (1,)")])


def weighted_sum_full(WeightedSum, device) -> None:
    function = check_is_function(WeightedSum, WEIGHTED_SUM)
    check_class_untouched(function, WEIGHTED_SUM_DOMAIN, device)
    check_call_places(function, WEIGHTED_SUM,
                              _weighted_values((4,), device, 0.3711, -1.25, seed=19))
    check_no_state_on_inputs(function, device)
    check_weights_not_swapped(function, device)
    check_uses_grad_output(function, WEIGHTED_SUM, _weighted_values((4,), device))
    check_backward_memory_linear(function, WEIGHTED_SUM, _weighted_values((256,), device, seed=5),
                                 "x1 and x2 of shape (256,)")
    covers("memory linear in the sizes")
    for seed, shape in enumerate(SHAPES):
        for w1, w2 in [(0.5, -2.0), (1.0, 0.0), (0.0, 1.5), (3.0, 3.0)]:
            values = _weighted_values(shape, device, w1, w2, seed)
            forward, backward = _check_weighted(function, values)
            check_weights_kept_as_floats(forward, values)
            check_no_ctx_tensors(WEIGHTED_SUM, forward)
            check_backward_by_hand(WEIGHTED_SUM, backward)
    check_gradient_count(function, device)
    check_weights_not_rounded(function, device)
    check_weight_special_cases(function, device)
    check_tiny_weights(function, device)
    covers("a weight of 0")
    covers("0-d inputs")
    check_one_ctx_per_call_weights(function, device)
    check_second_call_after_step(function, WEIGHTED_SUM, _weighted_values((4,), device, seed=6))
    check_each_input_alone(function, WEIGHTED_SUM, _weighted_values((2, 3), device))
    covers("float32")
    check_values_and_gradients(function, WEIGHTED_SUM,
                               _weighted_values((3, 4), device, dtype=torch.float32),
                               rtol=1e-5, atol=1e-6)
    check_empty_shapes(function, WEIGHTED_SUM,
                       [(_weighted_values(shape, device), f"x1 and x2 of shape {shape}")
                        for shape in EMPTY_SHAPES], "x1 and x2")
    covers("empty inputs")
    gradcheck_named(function, WEIGHTED_SUM, _weighted_values((3,), device))
    # every digit of each weight (any Python float), then what is saved: last, so every
    # earlier check names what it names first
    check_every_digit(function, device)
    check_saves_no_input(function, device)


# 2.0: a weight compared with a round number (w == 2) between the other points
WEIGHT = Constant(-8.0, 8.0, "w1, w2 Python floats", also=(0.0, 1e-4, 2.0))


SQUARE_DOMAIN = Domain(SQUARE, lambda device, dtype=torch.float64, seed=0: {
    "x": sample((3, 4), device, seed=seed, dtype=dtype)}, layout_clause=SQUARE_LAYOUTS)
WEIGHTED_SUM_DOMAIN = Domain(WEIGHTED_SUM, lambda device, dtype=torch.float64, seed=0, w1=0.5,
                             w2=-2.0: _weighted_values((3, 4), device, w1, w2, seed, dtype),
                             constants={"w1": WEIGHT, "w2": WEIGHT},
                             layout_clause=WEIGHTED_SUM_LAYOUTS)


EXERCISES = [
    Exercise("Square", "00_template", square_full,
             contract=("memory linear in the size of x", "0-d x", "x = 0",
                       "every x with 2x finite, in float32", "empty x",
                       "non-contiguous grad_output", "float32"),
             example=lambda: (sample((4,), "cpu"),),
             domain=SQUARE_DOMAIN),
    Exercise("WeightedSum", "00_template", weighted_sum_full,
             contract=("memory linear in the sizes", "a weight of 0", "tiny weights",
                       "one value per input", "0-d inputs",
                       "empty inputs", "float32", "saves only what the gradients read"),
             example=lambda: tuple(_weighted_values((4,), "cpu").values()),
             domain=WEIGHTED_SUM_DOMAIN),
]
