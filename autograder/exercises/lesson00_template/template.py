"""Lesson 00: Square and WeightedSum."""

import torch

from ...checks import (Spec, case, check_is_function, check_no_ctx_tensors,
                      check_values_and_gradients, make_inputs, run_backward, run_forward)
from ...contract import check_each_input_alone, covers
from ...domain import Constant, Domain
from ...errors import GradingError
from ...exercise import Exercise, sample
from ...probes import reachable
from ..shared.call_state import check_input_version_tracking, check_one_ctx_per_call
from ..shared.grad_output import check_strided_grad_output, check_uses_grad_output
from .contracts import SQUARE_CLAUSES, WEIGHTED_SUM_CLAUSES
from ..shared.saved_reads import check_backward_reads_saved
from .kept import check_empty_shapes, gradcheck_named
from .linear_memory import check_backward_memory_linear

# 0-d last: on a single element every wrong gradient looks like a sign or a constant factor,
# so the first failure should come from a shape whose hint can tell them apart.
SHAPES = [(5,), (3, 4), (2, 3, 4), ()]
# "any shape" includes an empty one: tried after every other shape, so that a failure there
# (a loop over the entries joined by torch.stack) is named as one
EMPTY_SHAPES = [(0,), (2, 0)]

SQUARE = Spec("Square", ("x",), lambda x: x ** 2)
WEIGHTED_SUM = Spec("WeightedSum", ("x1", "x2", "w1", "w2"),
                    lambda x1, x2, w1, w2: w1 * x1 + w2 * x2)


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


def check_square_at_zero(function, device) -> None:
    """x = 0 and x = -0.0 (no sample draws them), where the gradient 2x is 0: a gradient
    recovered from the saved output by dividing by x (2 * y / x) is nan there and right
    everywhere else; named."""
    x = torch.tensor([0.0, -0.0, 1.5, -0.5], dtype=torch.float64, device=device)
    with case("x = 0 and x = -0.0"):
        try:
            check_values_and_gradients(function, SQUARE, {"x": x})
        except GradingError as error:
            if error.mistake != "Square/non-finite-gradient":
                raise
            raise GradingError(
                "your gradient for x is nan at x = 0, where 2x is 0: does backward divide by "
                "x (2 * y / x, the output over the input)? x = 0 is in the contract; save x "
                "and return grad_output * 2 * x", error.details,
                mistake="Square/nan-at-zero") from error
    covers("x = 0")


def square_full(Square, device) -> None:
    function = check_is_function(Square, SQUARE)
    check_uses_grad_output(function, SQUARE, {"x": sample((4,), device)})
    check_square_keeps_sign(function, device)
    # 1-D, before the other shapes: a torch.diag(2 * x) of a 1-D x is named, not the error
    # the same code raises on a 2-D x
    check_backward_memory_linear(function, SQUARE, {"x": sample((256,), device, seed=5)},
                                 "x of shape (256,)")
    covers("memory linear in the size of x")
    for seed, shape in enumerate(SHAPES):
        values = {"x": sample(shape, device, seed=seed)}
        with case(f"x of shape {shape}"):
            forward, _ = check_values_and_gradients(function, SQUARE, values)
            check_no_ctx_tensors(SQUARE, forward)
    covers("0-d x")
    check_square_at_zero(function, device)
    check_strided_grad_output(function, SQUARE, {"x": sample((3, 4), device, seed=4)})
    with case("x of shape (5,)"):
        check_one_ctx_per_call(function, SQUARE, {"x": sample((5,), device, seed=1)},
                               {"x": sample((5,), device, seed=2)})
        check_input_version_tracking(function, SQUARE, {"x": sample((5,), device)})
        check_backward_reads_saved(function, SQUARE, {"x": sample((5,), device, seed=3)}, "x")
    check_each_input_alone(function, SQUARE, {"x": sample((3, 4), device)})
    covers("float32")
    check_values_and_gradients(function, SQUARE, {"x": sample((3, 4), device, dtype=torch.float32)},
                               rtol=1e-5, atol=1e-6)
    check_empty_shapes(function, SQUARE, [({"x": sample(shape, device)}, f"x of shape {shape}")
                                          for shape in EMPTY_SHAPES], "x")
    covers("empty x")
    gradcheck_named(function, SQUARE, {"x": sample((3,), device)})


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


def check_no_state_on_inputs(function, device) -> None:
    """An attribute forward hangs on an input tensor (x1._weights = ...) is state every call on
    that tensor shares, and save_for_backward does not keep it: saved-tensor hooks (the grader
    runs under them) hand backward a tensor without it. Named before backward reads it."""
    inputs = make_inputs(_weighted_values((4,), device))
    before = {name: set(vars(value)) for name, value in inputs.items()
              if isinstance(value, torch.Tensor)}
    run_forward(function, WEIGHTED_SUM, inputs)
    for name, had in before.items():
        added = sorted(set(vars(inputs[name])) - had)
        if added:
            raise GradingError(
                f"WeightedSum.forward set {name}.{added[0]}, an attribute on its input {name}: "
                f"every call on {name} shares it (a second call made before the first one's "
                "backward overwrites it), and save_for_backward does not keep it (under "
                "saved-tensor hooks, as the grader runs, backward gets a tensor without it); "
                "keep what backward needs on ctx, one per call",
                mistake="WeightedSum/state-on-input")


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
                    "float32) loses the digits float64 inputs keep: where does your code turn "
                    "a weight into a tensor, and of which dtype?",
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
    """Values and gradients; a None returned for the input whose weight is 0 is named so, and
    an error the learner's code raises at a weight of 0 (a division by it) given its case."""
    w1, w2 = values["w1"], values["w2"]
    try:
        return check_values_and_gradients(function, WEIGHTED_SUM, values)[0]
    except GradingError as error:
        for name, weight in (("x1", w1), ("x2", w2)):
            if weight == 0 and error.hint.startswith(f"backward returned None for {name},"):
                raise GradingError(
                    f"backward returned None for {name} when its weight is 0 (w1={w1}, "
                    f"w2={w2}): {name} still requires grad, and its gradient is a "
                    f"tensor of zeros; None leaves {name}.grad at None and makes "
                    f"torch.autograd.grad raise for {name}: return grad_{name} whatever the "
                    "weight", error.details, mistake="WeightedSum/none-for-zero-weight"
                ) from error
        raise
    except NotImplementedError:
        raise
    except Exception as error:  # the learner's own error (explain names only torch's)
        if 0 not in (w1, w2):
            raise
        text = (str(error).strip().splitlines() or [""])[0]
        raise GradingError(
            f"WeightedSum raised {type(error).__name__} with w1={w1}, w2={w2}"
            + (f" ({text})" if text else "") + ": a weight of 0 is in the contract, and "
            "every weight before it passed; does your forward or backward divide by a "
            "weight?", mistake="WeightedSum/fails-at-zero-weight") from error


def check_weight_special_cases(function, device) -> None:
    """A special case on the weights taken where it is wrong (x1 itself returned under a test
    such as w1 == 1 and w2 != 0, or w2 == 1): values and gradients at pairs beside the usual
    ones, w1 = 1 with w2 of +-1 and +-1e-6, w1 = 2 with w2 = 0, both weights 0."""
    for w1, w2 in [(1.0, 1.0), (1.0, -1.0), (1.0, 1e-6), (1.0, -1e-6), (2.0, 0.0), (0.0, 0.0)]:
        _check_weighted(function, _weighted_values((2, 3), device, w1, w2, seed=11))


def check_one_ctx_per_call_weights(function, device) -> None:
    """check_one_ctx_per_call, its hint in WeightedSum's terms: the gradients depend on the
    weights alone, so what another call's backward used is its weights."""
    first = _weighted_values((4,), device)
    second = _weighted_values((4,), device, 3.0, 1.5, seed=1)
    try:
        check_one_ctx_per_call(function, WEIGHTED_SUM, first, second)
    except GradingError as error:
        if error.mistake != "WeightedSum/state-shared-between-calls":
            raise
        raise GradingError(
            "WeightedSum's backward used another call's weights: called twice, with w1="
            f"{first['w1']}, w2={first['w2']} and then w1={second['w1']}, w2={second['w2']}, the "
            "first call's gradients are the second call's weights times grad_output; keep what "
            "backward needs on ctx, which is one per call, not where calls share it (the class, "
            "a global)", error.details, mistake=error.mistake) from error


def weighted_sum_full(WeightedSum, device) -> None:
    function = check_is_function(WeightedSum, WEIGHTED_SUM)
    check_no_state_on_inputs(function, device)
    check_weights_not_swapped(function, device)
    check_uses_grad_output(function, WEIGHTED_SUM, _weighted_values((4,), device))
    check_backward_memory_linear(function, WEIGHTED_SUM, _weighted_values((256,), device, seed=5),
                                 "x1 and x2 of shape (256,)")
    covers("memory linear in the sizes")
    for seed, shape in enumerate(SHAPES):
        for w1, w2 in [(0.5, -2.0), (1.0, 0.0), (0.0, 1.5), (3.0, 3.0)]:
            values = _weighted_values(shape, device, w1, w2, seed)
            forward = _check_weighted(function, values)
            check_weights_kept_as_floats(forward, values)
            check_no_ctx_tensors(WEIGHTED_SUM, forward)
    check_weights_not_rounded(function, device)
    check_weight_special_cases(function, device)
    covers("a weight of 0")
    covers("0-d inputs")
    check_one_ctx_per_call_weights(function, device)
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


# 2.0: a weight compared with a round number (w == 2) between the other points
WEIGHT = Constant(-8.0, 8.0, "w1, w2 Python floats", also=(0.0, 1e-4, 2.0))


EXERCISES = [
    Exercise("Square", "00_template", square_full,
             contract=("memory linear in the size of x", "0-d x", "x = 0", "empty x",
                       "non-contiguous grad_output", "float32"),
             clauses=SQUARE_CLAUSES,
             example=lambda: (sample((4,), "cpu"),),
             domain=Domain(SQUARE, lambda device, dtype=torch.float64, seed=0: {
                 "x": sample((3, 4), device, seed=seed, dtype=dtype)})),
    Exercise("WeightedSum", "00_template", weighted_sum_full,
             contract=("memory linear in the sizes", "a weight of 0", "0-d inputs",
                       "empty inputs", "float32"),
             clauses=WEIGHTED_SUM_CLAUSES,
             example=lambda: tuple(_weighted_values((4,), "cpu").values()),
             domain=Domain(WEIGHTED_SUM, lambda device, dtype=torch.float64, seed=0, w1=0.5,
                           w2=-2.0: _weighted_values((3, 4), device, w1, w2, seed, dtype),
                           constants={"w1": WEIGHT, "w2": WEIGHT})),
]
