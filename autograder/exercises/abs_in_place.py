"""Lesson 07's transfer exercise: AbsInPlace, |x| written into x. Its gradient needs the sign
x had before the write, which the output no longer holds: forward must save it first, in at
most one byte per element."""

import torch

from ..checks import Spec, case, check_is_function, gradcheck_callable
from ..contract import check_each_input_alone, covers
from ..diagnose import diagnose_gradient
from ..errors import GradingError
from ..exercise import Exercise, sample
from .in_place import (Cloned, check_leaf_error, check_on_view, check_plain_tensor,
                       check_version_tracking, gradient_through, with_zeros)

LATER_IN_LESSON = True
NAME = "AbsInPlace"
ABS = Spec(NAME, ("x",), torch.abs)
SHAPES = [(7,), (3, 4), (2, 3, 4), ()]


def check_saved_sign(forward, x: torch.Tensor) -> None:
    """Only the sign, saved before the write, in at most one byte per element."""
    for saved in forward.saved:  # reached with a right gradient only: check_abs runs first
        if saved.role == "output" or saved.role.startswith("input"):
            raise GradingError(
                f"{NAME}'s gradient is right, but it saves the tensor it returns (x, which "
                "holds |x| after the write) besides what it kept of the sign: the contract asks "
                "for the sign alone, so that a later in-place write into the output does not "
                "break backward, one int8 tensor computed before the write (-1, 0 and 1 tell "
                "the zeros too)")
        if saved.dtype.is_floating_point:
            raise GradingError(
                f"{NAME} saves a {str(saved.dtype)[6:]} tensor of shape {saved.shape} "
                f"({saved.nbytes} bytes): the gradient needs only the sign of x, which fits in "
                "one byte per element: save torch.sign(x) as int8, which holds -1, 0 and 1 (one "
                "bool per element cannot tell the three apart)")
    total = sum(saved.nbytes for saved in forward.saved)
    if total > max(x.numel(), 1):
        raise GradingError(
            f"{NAME} saves {total} bytes for {x.numel()} elements: at most one byte per element "
            "(the sign of x as one int8 tensor) is all its gradient needs")


def _lost_sign(forward, before: torch.Tensor) -> str:
    """The hint for a gradient of +grad_output where x was negative, by what forward saved."""
    if any(saved.role == "output" or saved.role.startswith("input") for saved in forward.saved):
        return (f"{NAME}'s gradient is +grad_output where x was negative: it read the sign "
                "after the write, when x holds |x| (save_for_backward(x) packs x when forward "
                "returns, even if called before the write): compute the sign as a new int8 "
                "tensor before writing into x, and save that")
    if any(saved.dtype == torch.bool and saved.tensor.shape == before.shape
           and torch.equal(saved.tensor, before != 0) for saved in forward.saved):
        return (f"{NAME}'s gradient is +grad_output where x was negative: it saves a bool that "
                "is True wherever x != 0, so -1 and +1 look the same (a bool of torch.sign(x) "
                "keeps no sign): save the sign as int8, which holds -1, 0 and 1 in one byte")
    return (f"{NAME}'s gradient is +grad_output where x was negative: what it saved is 1 where "
            "x was negative, the sign of |x| rather than of x (taken after the write, or from "
            "something that lost the -1): compute torch.sign(x) as int8 before writing, and "
            "save that")


def _nonzero_at_zero(forward, before: torch.Tensor, at_zero: float) -> str:
    """The hint for a gradient of +-grad_output at x == 0, by what forward saved."""
    said = f"{NAME}'s gradient at x == 0 is {'-' if at_zero < 0 else ''}grad_output"
    for saved in forward.saved:
        tensor = saved.tensor
        if tensor.shape != before.shape:
            continue
        masks = {"x > 0": before > 0, "x >= 0": before >= 0, "x < 0": before < 0,
                 "x <= 0": before <= 0}
        for convention, mask in masks.items():
            if tensor.dtype == torch.bool and torch.equal(tensor, mask):
                side = "negative" if at_zero < 0 else "positive"
                return (f"{said}, as from the bool mask {convention} it saves: a bool holds two "
                        "values, but the gradient needs three (-1 where x < 0, 0 where x == 0, "
                        f"+1 where x > 0), so the zeros of x were read as {side}; torch.abs "
                        "gives 0 there: save the sign itself, -1, 0 or 1, in one byte (int8)")
        if not tensor.dtype.is_floating_point and tensor.dtype != torch.bool and bool(
                (tensor[before == 0] == int(at_zero)).all()):
            return (f"{said}: the sign it saves is {int(at_zero):+d} where x was 0, but "
                    "torch.abs's gradient is 0 there: keep the 0 (torch.sign(x) gives it)")
    return f"{said}; torch.abs gives 0 there, as torch.sign(0) is 0"


def _one_bool_multiplied(forward, got, pristine, before: torch.Tensor) -> str | None:
    """The hint for grad_output * mask, a saved bool mask of one sign: only when it saved it."""
    masks = {"x < 0": before < 0, "x > 0": before > 0, "x <= 0": before <= 0,
             "x >= 0": before >= 0}
    for convention, mask in masks.items():
        if torch.allclose(got, pristine * mask) and any(
                saved.dtype == torch.bool and torch.equal(saved.tensor, mask)
                for saved in forward.saved):
            return (f"{NAME}'s gradient is grad_output where {convention} and 0 elsewhere, as "
                    f"from the bool mask {convention} it saves, multiplied in: one bool per "
                    "element holds two values, the sign three (-1, 0 and 1): save "
                    "torch.sign(x) as int8")
    return None


def both_signs(x: torch.Tensor) -> torch.Tensor:
    """``with_zeros(x)`` with a positive and a negative entry too (where there is room), so that
    a saved tensor that keeps one sign alone cannot pass for the sign."""
    x = with_zeros(x)
    flat = x.view(-1)
    if flat.numel() >= 3:
        flat[1], flat[2] = flat[1].abs(), -flat[2].abs()
    return x


def check_abs(function, x: torch.Tensor, *, seed: int = 0) -> None:
    """Written in place, marked dirty, the gradient sign(x) * grad_output with 0 at 0."""
    forward, got, pristine, before = gradient_through(function, ABS, x, seed)
    expected = pristine * torch.sign(before)
    if isinstance(got, torch.Tensor) and got.shape == x.shape and not torch.allclose(got, expected):
        zero = before == 0
        if (before < 0).any() and torch.allclose(got, pristine * (before != 0)):
            raise GradingError(_lost_sign(forward, before))
        if (before < 0).any() and torch.allclose(got, pristine * torch.where(
                before < 0, 255.0, torch.sign(before))):
            raise GradingError(
                f"{NAME}'s gradient is 255 * grad_output where x was negative: its sign was "
                "saved as uint8, which has no -1 (torch.sign(x).to(torch.uint8) turns -1 into "
                "255); save it as int8, which holds -1, 0 and 1 in one byte")
        for at_zero in (-1.0, 1.0):
            wrong = torch.where(zero, at_zero * pristine, expected)
            if zero.any() and torch.allclose(got, wrong):
                raise GradingError(_nonzero_at_zero(forward, before, at_zero))
        one_bool = _one_bool_multiplied(forward, got, pristine, before)
        if one_bool is not None:
            raise GradingError(one_bool)
    diagnose_gradient("x", got, expected)
    check_saved_sign(forward, before)


def abs_full(AbsInPlace, device) -> None:
    function = check_is_function(AbsInPlace, ABS)
    for seed, shape in enumerate(SHAPES):
        with case(f"x of shape {shape} with some entries exactly 0"):
            check_abs(function, both_signs(sample(shape, device, seed=seed)), seed=seed)
    covers("x == 0")
    covers("0-d x")
    covers("the sign saved in one byte per element")
    check_leaf_error(function, ABS, device)
    covers("a leaf that requires grad")
    check_each_input_alone(Cloned(function), ABS, {"x": sample((3, 4), device, seed=5,
                                                                 away_from_zero=0.1)})
    with case("x of shape (3, 6) in float32"):
        check_abs(function, both_signs(sample((3, 6), device, dtype=torch.float32)))
    covers("float32")
    with case("x a view, b[1:], of a tensor b that is not a leaf"):
        check_on_view(function, ABS, device)
    covers("a view of a non-leaf")
    check_plain_tensor(function, ABS, device)
    check_version_tracking(function, ABS, device)
    covers("version counter")
    gradcheck_callable(ABS, lambda t: function.apply(t.clone()),
                       sample((2, 4), device, seed=1, away_from_zero=0.1))


EXERCISES = [
    Exercise(NAME, "07_outputs", abs_full,
             contract=("x == 0", "0-d x", "the sign saved in one byte per element",
                       "a leaf that requires grad", "float32", "a view of a non-leaf",
                       "version counter")),
]
