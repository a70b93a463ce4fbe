"""Lesson 00: WeightedSum's weights, Python floats: each call's own, never swapped, never
rounded through a narrower dtype, never dropped when tiny or 0, never a tensor on ctx; and no
input saved, since neither gradient reads one."""

import torch

from ...checks import Spec, check_values_and_gradients, make_inputs, run_backward, run_forward
from ...contract import covers
from ...errors import GradingError
from ...function_contract import rule_reference
from ...exercise import sample
from ...probes import reachable, record_returned_gradients
from ...returned_dtypes import dtypes_watched
from ..shared.call_state import check_call_places, check_one_ctx_per_call

WEIGHTED_SUM = Spec("WeightedSum", ("x1", "x2", "w1", "w2"),
                    lambda x1, x2, w1, w2: w1 * x1 + w2 * x2)


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
    """check_call_places for WeightedSum (x1._weights = ...)."""
    check_call_places(function, WEIGHTED_SUM, _weighted_values((4,), device))


# dtypes a weight may have gone through on its way to a float64 result, narrowest last
NARROWER = (torch.float32, torch.bfloat16, torch.float16)


def check_weights_not_rounded(function, device) -> None:
    """Weights float32 cannot hold (0.1, -1/3): a result equal, to float64's precision, to the
    one for a weight rounded through float32 (or bfloat16, float16), and not to the true one,
    proves that weight went through a tensor of that dtype (torch.tensor(w) without dtype= is
    float32)."""
    values = _weighted_values((4,), device, w1=0.1, w2=-1 / 3, seed=3)
    inputs = make_inputs(values)
    forward = run_forward(function, WEIGHTED_SUM, inputs)
    grad_output = sample((4,), device, seed=9)
    grads = run_backward(WEIGHTED_SUM, forward.output, inputs, grad_output).grads
    x1, x2 = values["x1"], values["x2"]
    true = {"w1": values["w1"], "w2": values["w2"]}
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
        for dtype in NARROWER:
            rounded = {n: torch.tensor(w, dtype=dtype).item() for n, w in true.items()}
            for chosen in [names[:1], names[1:], names] if len(names) > 1 else [names]:
                if torch.allclose(got, result(*(rounded[n] if n in chosen else true[n]
                                                 for n in names)), rtol=1e-12, atol=0):
                    weights = " and ".join(f"{n} = {rounded[n]!r}" for n in chosen)
                    given = " and ".join(repr(true[n]) for n in chosen)
                    kind = str(dtype).removeprefix("torch.")
                    raise GradingError(
                        f"{what} is what {weights} would give ({given} rounded to {kind}): a "
                        f"weight made into a {kind} tensor (torch.tensor(w) without dtype= "
                        "gives float32) loses the digits float64 inputs keep: where does your "
                        "code turn a weight into a tensor, and of which dtype?",
                        mistake="WeightedSum/float32-constant")


# weights with 16 significant digits, more than rounding to 12 decimals keeps
MANY_DIGITS = (0.1234567890123456, -1 / 3)


def check_every_digit(function, device) -> None:
    """Weights of 16 significant digits in float64: the value and the gradients within 1e-14
    of the size of their terms (float64 arithmetic is within a few 1e-16). A weight rounded to
    12 decimals (off by up to 4e-12 of itself) fails; it is named with its numbers. An error
    beyond 1e-9 (float32 arithmetic) is left to the precision checks, which name it."""
    rtol = 1e-14
    w1, w2 = MANY_DIGITS
    values = _weighted_values((4,), device, w1=w1, w2=w2, seed=21)
    inputs = make_inputs(values)
    forward = run_forward(function, WEIGHTED_SUM, inputs)
    grad_output = sample((4,), device, seed=22)
    grads = run_backward(WEIGHTED_SUM, forward.output, inputs, grad_output).grads
    x1, x2 = values["x1"], values["x2"]
    results = [("grad_x1", grads[0], w1 * grad_output, (w1 * grad_output).abs()),
               ("grad_x2", grads[1], w2 * grad_output, (w2 * grad_output).abs()),
               ("WeightedSum's output", forward.output, w1 * x1 + w2 * x2,
                (w1 * x1).abs() + (w2 * x2).abs())]
    for what, got, truth, size in results:
        if not (isinstance(got, torch.Tensor) and got.dtype == torch.float64
                and got.shape == truth.shape):
            continue
        error = (got.detach() - truth).abs()
        # beyond 1e-9 (float32 arithmetic, 6e-8) is the precision checks' to name, after this
        if bool((error <= rtol * size).all()) or bool((error > 1e-9 * size).any()):
            continue
        raise GradingError(
            f"{what} is off by {(error / size).max().item():.2g} of its terms with w1={w1!r}, "
            f"w2={w2!r} in float64, which keeps about 16 digits (its own rounding is about "
            f"1e-16, the check allows {rtol:g}): a weight is a Python float, and every "
            "digit of it counts; does your code round a weight, or compute with fewer digits "
            "than it has?",
            mistake="WeightedSum/rounds-weight")


# weights far below any threshold a rounding-noise test would pick, each alone and together
TINY_WEIGHTS = [(5e-8, 1.5), (-0.5, -1e-9), (5e-8, -1e-9)]


def check_tiny_weights(function, device) -> None:
    """Tiny non-zero weights (5e-8, -1e-9) are weights like any other: the value and the
    gradients compared relatively (an absolute tolerance would pass 0 for 5e-8 * grad_output),
    in float64 and float32. A result off by more than 0.1% of its terms (a weight taken for 0
    below a threshold is off by 100%) is named; a rounding error (float32 arithmetic on float64
    inputs, 6e-8) is left to the precision checks, which name it."""
    rtol = 1e-3
    for dtype in (torch.float64, torch.float32):
        for w1, w2 in TINY_WEIGHTS:
            values = _weighted_values((2, 3), device, w1, w2, seed=13, dtype=dtype)
            inputs = make_inputs(values)
            forward = run_forward(function, WEIGHTED_SUM, inputs)
            grad_output = sample((2, 3), device, seed=14, dtype=dtype)
            grads = run_backward(WEIGHTED_SUM, forward.output, inputs, grad_output).grads
            x1, x2 = values["x1"].double(), values["x2"].double()
            g = grad_output.double()
            # (what, the result, the true one, the size of its terms: a sum's error is
            # relative to its terms, which may cancel, a product's to itself)
            results = [("grad_x1", grads[0], w1 * g, (w1 * g).abs(), w1),
                       ("grad_x2", grads[1], w2 * g, (w2 * g).abs(), w2),
                       ("WeightedSum's output", forward.output, w1 * x1 + w2 * x2,
                        (w1 * x1).abs() + (w2 * x2).abs(), None)]
            for what, got, truth, size, weight in results:
                if not isinstance(got, torch.Tensor) or got.shape != truth.shape:
                    continue
                error = (got.detach().double() - truth).abs()
                if bool((error <= rtol * size).all()):
                    continue
                dropped = [n for n, w in (("w1", w1), ("w2", w2))
                           if abs(w) < 1e-6 and (weight is None or w == weight)]
                raise GradingError(
                    f"{what} is wrong with w1={w1}, w2={w2} ({dtype}): largest relative error "
                    f"{(error / size).max().item():.3g}; "
                    + (f"a tiny weight ({' and '.join(dropped)}) is a weight like any other, "
                       "not rounding noise: is it treated as 0 below some threshold? "
                       if dropped else "")
                    + "a weight is a Python float, and every digit of it counts",
                    mistake="WeightedSum/drops-tiny-weight")
    covers("tiny weights")


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
                        f"(ctx.{name} = {name}); backward needs no tensor from forward here "
                        + rule_reference("ctx"), mistake="WeightedSum/weight-as-tensor-on-ctx")


def check_saves_no_input(function, device) -> None:
    """The gradients w1 * grad_output and w2 * grad_output read no input: a saved x1 or x2 is
    memory held to backward for nothing (the contract: forward saves only what they read)."""
    values = _weighted_values((3, 4), device, 0.5, -2.0, seed=23)
    forward = run_forward(function, WEIGHTED_SUM, make_inputs(values))
    saved = [s.role.removeprefix("input ") for s in forward.saved if s.role.startswith("input ")]
    if saved:
        names = " and ".join(dict.fromkeys(saved))
        raise GradingError(
            f"WeightedSum saved {names} for backward, which neither gradient reads: a saved "
            "tensor is held in memory until backward runs (for every layer of a model at "
            "once); the contract: forward saves only what the gradients read",
            mistake="WeightedSum/saves-unread-input")
    covers("saves only what the gradients read")


def _check_weighted(function, values: dict):
    """Values and gradients (the forward and backward traces); a None returned for the input
    whose weight is 0 is named so, and an error the learner's code raises at a weight of 0 (a
    division by it) given its case."""
    w1, w2 = values["w1"], values["w2"]
    try:
        return check_values_and_gradients(function, WEIGHTED_SUM, values)
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
            + (f" ({text})" if text else "") + ": a weight of 0 is a Python float like any other, and "
            "every weight before it passed; does your forward or backward divide by a "
            "weight?", mistake="WeightedSum/fails-at-zero-weight") from error


def check_weight_special_cases(function, device) -> None:
    """A special case on the weights taken where it is wrong (x1 itself returned under a test
    such as w1 == 1 and w2 != 0, or w2 == 1): values and gradients at pairs beside the usual
    ones, w1 = 1 with w2 of +-1 and +-1e-6, w1 = 2 with w2 = 0, both weights 0, and w1 = 0 with
    w2 = 1 (x2 itself returned there: the generic watch of autograder.untouched names it)."""
    for w1, w2 in [(1.0, 1.0), (1.0, -1.0), (1.0, 1e-6), (1.0, -1e-6), (2.0, 0.0), (0.0, 0.0),
                   (0.0, 1.0)]:
        values = _weighted_values((2, 3), device, w1, w2, seed=11)
        with dtypes_watched("WeightedSum", function, values) as watched:  # rule 2's dtype at 0
            _check_weighted(watched, values)


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


def check_gradient_count(function, device) -> None:
    """What backward itself returned (recorded before the engine sees it): one value for each
    of the four inputs. The engine drops extra trailing Nones without a word."""
    probe, calls = record_returned_gradients(function)
    inputs = make_inputs(_weighted_values((3,), device, seed=17))
    output = run_forward(probe, WEIGHTED_SUM, inputs).output
    run_backward(WEIGHTED_SUM, output, inputs, sample((3,), device, seed=18))
    count = len(calls[0]) if calls else 4
    if count != 4:
        raise GradingError(
            f"WeightedSum.backward returned {count} values for WeightedSum's 4 inputs (x1, x2, "
            "w1, w2): one value per input of forward, a gradient or None, in forward's order; "
            "autograd drops extra trailing Nones without a word, the contract counts them "
            + rule_reference("gradients"), mistake="WeightedSum/wrong-gradient-count")
    covers("one value per input")
