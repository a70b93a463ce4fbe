"""Turn a wrong gradient into a hint that names the likely mistake."""

import itertools

import torch

from .errors import GradingError
from .function_contract import rule_reference
from .precision import FLOAT32_STEP, note_precision, running_exercise  # noqa: F401 (FLOAT32_STEP: exercises quote it)


def exact(value: float) -> str:
    """Every digit of ``value`` (Python's shortest round trip), ``.0`` dropped: -0.9999999
    never reads as -1, and 2.0 reads as 2."""
    text = repr(value)
    return text.removesuffix(".0")


def factor(value: float) -> str:
    """A constant factor to four digits, unless those would read as 1 or -1 (the factor of a
    right gradient, and of a sign slip): then every digit."""
    text = f"{value:.4g}"
    return exact(value) if float(text) in (1.0, -1.0) and float(text) != value else text


def apart(a: float, b: float, least: int = 4) -> tuple[str, str]:
    """``a`` and ``b`` to the fewest significant digits, ``least`` or more, that tell them
    apart (every digit where only the last ones differ); a zero as 0, whatever its sign, where
    the other value is not a zero (adding 0.0 turns -0.0 into 0.0, nothing else)."""
    for digits in range(least, 17):
        shown = f"{a + 0.0:.{digits}g}", f"{b + 0.0:.{digits}g}"
        if shown[0] != shown[1]:
            return shown
    return exact(a), exact(b)


def input_value(value: float) -> str:
    """``= v`` for an input short to write in full, else ``≈ v`` to six significant digits."""
    text = exact(value)
    return f"= {text}" if len(text.lstrip("-")) <= 8 else f"≈ {value:.6g}"


def _named(exercise_name: str, suffix: str) -> str:
    """The id ``Exercise/suffix`` of a fact the check proved: of the exercise the caller named,
    else of the exercise whose battery is running; none outside a battery."""
    exercise_name = exercise_name or running_exercise()
    return f"{exercise_name}/{suffix}" if exercise_name else ""


def _shape(t) -> str:
    return str(tuple(t.shape))


def _close(a: torch.Tensor, b: torch.Tensor, rtol: float, atol: float) -> bool:
    return a.shape == b.shape and bool(torch.allclose(a, b, rtol=rtol, atol=atol, equal_nan=False))


def _at(worst: tuple, inputs: dict | None, shape: torch.Size) -> str:
    """Where the largest error sits: its index and the inputs of the same shape there."""
    values = [f"{name} {input_value(value[worst].item())}"
              for name, value in (inputs or {}).items()
              if isinstance(value, torch.Tensor) and value.shape == shape and value.numel() > 1]
    return f"at index {worst}" + (f", where {', '.join(values)}" if values else "")


def _worst(got: torch.Tensor, expected: torch.Tensor, inputs: dict | None,
           grad_output=None) -> str:
    """The largest error, where it sits, and the two values there; for a gradient taken with a
    random ``grad_output`` (one tensor, or one per output), that it is random, and its value
    there where it has the gradient's shape."""
    if got.shape != expected.shape or got.numel() == 0:
        return "no values to compare"
    error = (got - expected).abs()
    worst = tuple(int(i) for i in torch.unravel_index(torch.argmax(error), error.shape))
    shown = apart(got[worst].item(), expected[worst].item())
    random = ""
    if isinstance(grad_output, torch.Tensor):
        there = (f", {grad_output[worst].item() + 0.0:.4g} there" if grad_output.shape == got.shape
                 else "")
        random = f"; grad_output is random{there}"
    elif grad_output:
        random = "; the grad_outputs are random"
    return (f"largest error {error.max().item():.3g} {_at(worst, inputs, got.shape)} "
            f"(got {shown[0]}, expected {shown[1]}{random})")


def _non_finite_where(got: torch.Tensor, inputs: dict | None) -> str:
    """Where a gradient is inf or nan: with an empty input, that; else the first such entry,
    the inputs there, and whether it is so exactly where an input is negative."""
    tensors = {name: value for name, value in (inputs or {}).items()
               if isinstance(value, torch.Tensor)}
    empty = [name for name, value in tensors.items() if value.numel() == 0]
    if empty:
        return (f", with {empty[0]} empty: a sum over no elements is 0, but a mean (or a "
                "division by a count) over none is not")
    bad = ~torch.isfinite(got)
    if got.dim() == 0:  # the point and the value, no guessed cause
        at = [f"{name} = {value.item():g}" for name, value in tensors.items() if value.dim() == 0]
        return f" ({got.item()}" + (f", with {', '.join(at)})" if at else ")")
    first = tuple(int(i) for i in bad.nonzero()[0])
    negative = [name for name, value in tensors.items() if value.shape == got.shape
                and value.numel() > 1 and torch.equal(bad, value.detach() < 0)]
    where = f", exactly where {negative[0]} < 0" if negative else ""
    return (f", first {_at(first, inputs, got.shape)} ({got[first].item()}){where}: a formula "
            "undefined there, or numerically unstable?")


def _misshapen(name: str, got: torch.Tensor, expected: torch.Tensor) -> str:
    """The shape hint, and what the values prove: the right ones with the dimensions in another
    order (an einsum's output letters), or flattened."""
    said = f"grad_{name} has shape {tuple(got.shape)} but {name} has shape {tuple(expected.shape)}"
    if got.numel() == expected.numel() and got.dim() > 2 and got.device == expected.device:
        for order in itertools.permutations(range(got.dim())):
            moved = got.permute(order)
            if moved.shape == expected.shape and _close(moved, expected, 1e-5, 1e-7):
                return (f"{said}: it holds the right values with its dimensions in another order "
                        f"(permute{order} of it is right); in an einsum, write the output's "
                        f"letters in {name}'s order")
    if (got.numel() == expected.numel() and got.device == expected.device
            and _close(got.reshape(expected.shape), expected, 1e-5, 1e-7)):
        return f"{said}: it holds the right values, flattened: reshape it back to {name}'s shape"
    return shape_hint(name, tuple(got.shape), tuple(expected.shape))


def shape_hint(name: str, got: tuple, expected: tuple) -> str:
    """The hint for a gradient of shape ``got`` returned for an input of shape ``expected``."""
    said = f"grad_{name} has shape {got} but {name} has shape {expected}"
    if len(got) == 2 and got == expected[::-1]:
        return f"{said}: a transpose?"
    if _broadcasts_to(expected, got):
        return (f"{said}: {name} broadcasts to that shape; sum over the dimensions {name} was "
                "broadcast along")
    return (f"{said}: a gradient has its input's shape, or one the input broadcasts to "
            f"{rule_reference('gradients')}")


def _broadcasts_to(shape: tuple, target: tuple) -> bool:
    """Does a tensor of ``shape`` broadcast to ``target`` (ones or missing dims stretched)?"""
    try:
        return torch.broadcast_shapes(shape, target) == torch.Size(target)
    except RuntimeError:
        return False


def diagnose_gradient(
    name: str,
    got: torch.Tensor | None,
    expected: torch.Tensor,
    *,
    rtol: float = 1e-5,
    atol: float = 1e-7,
    inputs: dict | None = None,
    computed_in: torch.dtype | None = None,
    exercise_name: str = "",
    grad_output=None,
) -> None:
    """Raise a GradingError naming the mistake if ``got`` is not the gradient ``expected``;
    ``inputs`` name their values where the error is largest; ``computed_in`` is the dtype the
    learner's code ran in (None where unknown: ``got`` may be widened); ``exercise_name`` (by
    default the exercise whose battery runs) gives the facts it proves their ids (None, not a
    tensor, shape, device, dtype; inf or nan where the true gradient is finite; the true one
    times -1, zero everywhere, times one constant factor, or transposed), a gradient that only
    differs none; ``grad_output``, the random one (or ones)
    the gradients were taken with, is said to be random."""
    grad_name = f"grad_{name}"
    if got is None:
        shortcut = (f" ({name} is empty, so grad_output holds no nonzero entry: does backward "
                    "return None when grad_output is all zeros?)" if expected.numel() == 0
                    else "")
        raise GradingError(
            f"backward returned None for {name}, which requires grad{shortcut}: return "
            f"{grad_name}, a tensor even where it is all zeros {rule_reference('gradients')}",
            mistake=_named(exercise_name, "returns-none-gradient"))
    if not isinstance(got, torch.Tensor):
        raise GradingError(
            f"backward returned a {type(got).__name__} for {name}: return a tensor {grad_name}",
            mistake=_named(exercise_name, "gradient-not-a-tensor"))
    if got.shape != expected.shape:
        raise GradingError(_misshapen(name, got.detach(), expected.detach()),
                           mistake=_named(exercise_name, "wrong-gradient-shape"))
    if got.device != expected.device:
        raise GradingError(
            f"{grad_name} is on {got.device} but {name} is on {expected.device}: "
            "create new tensors on the input's device",
            mistake=_named(exercise_name, "gradient-on-wrong-device"))
    if got.dtype != expected.dtype:
        raise GradingError(
            f"{grad_name} has dtype {got.dtype} but {name} has dtype {expected.dtype}: "
            f"keep the input's dtype {rule_reference('gradients')}",
            mistake=_named(exercise_name, "wrong-gradient-dtype"))
    got, expected = got.detach(), expected.detach()
    if not torch.isfinite(got).all() and torch.isfinite(expected).all():
        raise GradingError(
            f"{grad_name} contains inf or nan where the true gradient is finite"
            + _non_finite_where(got, inputs), mistake=_named(exercise_name, "non-finite-gradient"))
    if note_precision(grad_name, got, expected, computed_in,
                      within=_close(got, expected, rtol, atol),
                      where=lambda: _worst(got, expected, inputs, grad_output)):
        return
    if _close(got, -expected, rtol, atol):
        raise GradingError(
            f"your gradient for {name} is the expected one times -1: check the sign",
            mistake=_named(exercise_name, "wrong-gradient-sign"))
    if not got.any():
        raise GradingError(f"your gradient for {name} is zero everywhere, where the expected one "
                           "is not", mistake=_named(exercise_name, "zero-gradient"))
    # With a single nonzero element every wrong value is "a constant factor": say so only
    # when the factor fits at least two of them.
    scale = _best_scale(got, expected) if expected.count_nonzero() >= 2 else None
    if scale is not None and _close(got, scale * expected, rtol, atol):
        raise GradingError(f"your gradient for {name} is off by a constant factor "
                           f"{factor(scale)}: a factor missing, or one too many?",
                           mistake=_named(exercise_name, "gradient-off-by-a-factor"))
    if got.dim() == 2 and got.shape[0] == got.shape[1] and _close(got, expected.T, rtol, atol):
        raise GradingError(f"{grad_name} is the transpose of the true gradient: a transpose?",
                           mistake=_named(exercise_name, "transposed-gradient"))
    raise GradingError(f"your gradient for {name} is wrong: "
                       f"{_worst(got, expected, inputs, grad_output)}")


def _best_scale(got: torch.Tensor, expected: torch.Tensor) -> float | None:
    """The least-squares c in got ≈ c * expected, or None when expected is zero."""
    denominator = (expected * expected).sum()
    if denominator.item() == 0:
        return None
    return ((got * expected).sum() / denominator).item()


def diagnose_values(
    what: str, got, expected: torch.Tensor, *, rtol: float = 1e-5, atol: float = 1e-7,
    inputs: dict | None = None, computed_in: torch.dtype | None = None,
    exercise_name: str = "",
) -> None:
    """Raise a GradingError if a forward result differs from the reference; ``inputs`` name
    their values where the error is largest; ``computed_in`` and ``exercise_name`` as for
    ``diagnose_gradient``."""
    if not isinstance(got, torch.Tensor):
        raise GradingError(f"{what} returned a {type(got).__name__}: return a tensor",
                           mistake=_named(exercise_name, "output-not-a-tensor"))
    if got.shape != expected.shape:
        raise GradingError(
            f"{what} has shape {_shape(got)} but should have shape {_shape(expected)}",
            mistake=_named(exercise_name, "wrong-output-shape"))
    if got.dtype != expected.dtype:
        raise GradingError(
            f"{what} has dtype {got.dtype} but should have dtype {expected.dtype}: "
            "keep the input's dtype", mistake=_named(exercise_name, "wrong-output-dtype"))
    if got.device != expected.device:
        raise GradingError(f"{what} is on {got.device} but should be on {expected.device}",
                           mistake=_named(exercise_name, "output-on-wrong-device"))
    got, expected = got.detach(), expected.detach()
    if torch.isfinite(expected).all() and not torch.isfinite(got).all():
        raise GradingError(
            f"{what} contains inf or nan where the true value is finite: "
            "a numerically unstable formula?", mistake=_named(exercise_name, "non-finite-output"))
    if got.numel() == 0 or note_precision(
            what, got, expected, computed_in, within=_close(got, expected, rtol, atol),
            where=lambda: _worst(got, expected, inputs)):
        return
    raise GradingError(f"{what} is wrong: {_worst(got, expected, inputs)}")
