"""Lesson 07's transfer exercise: AbsInPlace, |x| written into x. Its gradient needs the sign
x had before the write, which the output no longer holds: forward must save it first, in at
most one byte per element."""

import math
from types import SimpleNamespace

import torch

from ...checks import Spec, check_is_function
from ...contract import covers
from ...diagnose import diagnose_gradient
from ...domain import Domain
from ...errors import GradingError
from ...exercise import Exercise, sample
from ...class_state import check_class_state, class_state
from .in_place import (IN_PLACE_LAYOUT_CLAUSE, IN_PLACE_LAYOUTS, check_float32_reading,
                       check_forward_grad_mode, gradient_through,
                       quoting_case, with_infinities, with_zeros, writing_into_a_copy)
from .in_place_rules import check_in_place_rules

LATER_IN_LESSON = True
NAME = "AbsInPlace"
ABS = Spec(NAME, ("x",), torch.abs)
SHAPES = [(7,), (3, 4), (2, 3, 4), ()]


def check_not_narrow_copy(saved) -> None:
    """A one-byte float tensor saved (float8) holds the sign, -1, 0 and 1, not a copy of x."""
    tensor = saved.tensor
    if saved.dtype.is_floating_point and tensor.element_size() == 1 and not bool(
            ((tensor == -1) | (tensor == 0) | (tensor == 1)).all()):
        raise GradingError(
            f"{NAME} saves a {str(saved.dtype)[6:]} tensor of shape {saved.shape} that holds "
            "values other than -1, 0 and 1: a copy of x in a one-byte float, which the "
            "contract rules out (it asks for the sign only) and which rounds small entries "
            "of x to 0", mistake="AbsInPlace/saves-narrow-copy-of-x")


def check_saved_sign(forward, x: torch.Tensor) -> None:
    """Only the sign, saved before the write, in at most one byte per element: an integer, bool
    or one-byte float tensor holding the sign (a float8 sign is one byte per element too); never
    a float copy of x."""
    if x.numel() and not forward.saved:
        raise GradingError(
            f"{NAME}'s gradient is right, but forward saves nothing through "
            "ctx.save_for_backward: backward reads the sign from somewhere every call shares "
            "(a module global, a closure), so a second call in the same graph overwrites the "
            "first's sign before its backward runs; save the sign with ctx.save_for_backward, "
            "one tensor per call", mistake="AbsInPlace/saves-nothing")
    bits = 8 * sum(saved.nbytes for saved in forward.saved)
    if x.numel() and bits < x.numel() * math.log2(3):
        raise GradingError(
            f"{NAME}'s gradient is right, but forward saves {bits // 8} bytes for "
            f"{x.numel()} elements, too few to tell -1, 0 and 1 apart at every element: "
            "backward reads the rest of the sign from somewhere every call shares; save all of "
            "it with ctx.save_for_backward", mistake="AbsInPlace/saves-nothing")
    for saved in forward.saved:  # reached with a right gradient only: check_abs runs first
        if saved.role == "output" or saved.role.startswith("input"):
            raise GradingError(
                f"{NAME}'s gradient is right, but it saves the tensor it returns (x, which "
                "holds |x| after the write) besides what it kept of the sign: the contract asks "
                "for the sign alone, in a tensor of its own made before the write, so that a "
                "later in-place write into the output cannot break backward",
                mistake="AbsInPlace/saves-output")
        tensor = saved.tensor
        if saved.dtype.is_floating_point and tensor.element_size() > 1:
            raise GradingError(
                f"{NAME} saves a {str(saved.dtype)[6:]} tensor of shape {saved.shape}, "
                f"{tensor.element_size()} bytes per element ({saved.nbytes} in all): the "
                "contract allows at most one byte per element; how many different values must "
                "the saved tensor hold, and which one-byte dtype holds them all?",
                mistake="AbsInPlace/saved-dtype-too-wide")
        check_not_narrow_copy(saved)
    total = sum(saved.nbytes for saved in forward.saved)
    if total > max(x.numel(), 1):
        kinds = ", ".join(f"{str(s.dtype)[6:]} ({s.tensor.element_size()} "
                          f"byte{'s' * (s.tensor.element_size() > 1)} per element)"
                          for s in forward.saved)
        if len(forward.saved) == 1:
            what, question = (f"one tensor, {kinds}", "how many values must it hold, and which "
                              "one-byte dtype holds them all?")
        else:
            what, question = (f"{len(forward.saved)} tensors, {kinds}",
                              "which one tensor holds all the gradient needs of x?")
        raise GradingError(
            f"{NAME} saves {total} bytes for {x.numel()} elements: the contract allows at most "
            f"one byte per element, and it saves {what}; {question}")


def _lost_sign(forward, before: torch.Tensor) -> str:
    """The hint for a gradient of +grad_output where x was negative, by what forward saved."""
    if any(saved.role == "output" or saved.role.startswith("input") for saved in forward.saved):
        return (f"{NAME}'s gradient is +grad_output where x was negative: it read the sign "
                "after the write, when x holds |x| (save_for_backward(x) packs x when forward "
                "returns, even if called before the write): what backward needs of x must be a "
                "tensor of its own, made before the write")
    if any(saved.dtype == torch.bool and saved.tensor.shape == before.shape
           and torch.equal(saved.tensor, before != 0) for saved in forward.saved):
        return (f"{NAME}'s gradient is +grad_output where x was negative: it saves a bool that "
                "is True wherever x != 0, so -1 and +1 look the same: how many values must the "
                "saved tensor tell apart, and how many does a bool hold?")
    return (f"{NAME}'s gradient is +grad_output where x was negative: what it saved is 1 where "
            "x was negative, the sign of |x| rather than of x (taken after the write, or from "
            "something that lost the -1): which tensor did it take the sign from, and when?")


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
                # the probe's zeros are +0: signbit(x) saves the same bool as x < 0 there
                twin = {"x < 0": " (so does signbit(x): both are False at +0)",
                        "x >= 0": " (so does ~signbit(x): both are True at +0)"}.get(convention, "")
                return (f"{said}, as from the bool mask {convention} it saves: the zeros of x "
                        f"were read as {side}{twin}, but torch.abs's gradient is 0 there; how many "
                        "values must the saved tensor hold per element, and how many does a "
                        "bool hold?")
        if not tensor.dtype.is_floating_point and tensor.dtype != torch.bool and bool(
                (tensor[before == 0] == int(at_zero)).all()):
            return (f"{said}: the sign it saves is {int(at_zero):+d} where x was 0, but "
                    "torch.abs's gradient is 0 there")
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
                    f"from the bool mask {convention} it saves, multiplied in: it gives 0 "
                    "where the other sign needs -grad_output; how many values must the saved "
                    "tensor hold per element, and how many does a bool hold?")
    return None


def signs_by_seed(x: torch.Tensor, seed: int) -> torch.Tensor:
    """``both_signs(x)``, negated for an odd seed: both_signs fixes the sign of most entries of
    a small x, so two seeds in a row (the per-call check's) would share one sign pattern, and a
    sign kept outside ctx, shared by the calls, would go unseen."""
    x = both_signs(x)
    return -x if seed % 2 else x


def both_signs(x: torch.Tensor) -> torch.Tensor:
    """``with_zeros(x)`` (exact zeros, in float64 +-1e-9 and +-1e-4 beside them) with a
    positive and a negative entry too (where there is room), so that a saved tensor that keeps
    one sign alone cannot pass for the sign."""
    x = with_zeros(x)
    flat = x.view(-1)
    if flat.numel() >= 3:
        flat[1], flat[2] = flat[1].abs(), -flat[2].abs()
    return x


def check_abs(function, x: torch.Tensor, *, seed: int = 0) -> None:
    """Written in place, marked dirty, the gradient sign(x) * grad_output with 0 at 0."""
    state = class_state(function)
    forward, got, pristine, before = gradient_through(function, ABS, x, seed)
    expected = pristine * torch.sign(before)
    if isinstance(got, torch.Tensor) and got.shape == x.shape and not torch.allclose(got, expected):
        zero = before == 0
        if (before < 0).any() and torch.allclose(got, pristine * (before != 0)):
            raise GradingError(_lost_sign(forward, before), mistake={
                "packs x when forward": "AbsInPlace/sign-read-after-write",
                "True wherever x != 0": "AbsInPlace/bool-of-nonzero",
                "the sign of |x| rather than of x": "AbsInPlace/sign-of-output"})
        if (before < 0).any() and torch.allclose(got, pristine * torch.where(
                before < 0, 255.0, torch.sign(before))):
            raise GradingError(
                f"{NAME}'s gradient is 255 * grad_output where x was negative: its sign was "
                "saved as uint8, which has no -1 (torch.sign(x).to(torch.uint8) turns -1 into "
                "255); which one-byte dtype holds -1?", mistake="AbsInPlace/sign-as-uint8")
        for at_zero in (-1.0, 1.0):
            wrong = torch.where(zero, at_zero * pristine, expected)
            if zero.any() and torch.allclose(got, wrong):
                raise GradingError(_nonzero_at_zero(forward, before, at_zero), mistake={
                    "as from the bool mask": "AbsInPlace/bool-mask-takes-sides-at-zero",
                    "the sign it saves is": "AbsInPlace/sign-nonzero-at-zero"})
        inside = (before != 0) & (before.abs() < 1)
        if inside.any() and torch.allclose(got, torch.where(inside, 0, expected)):
            raise GradingError(
                f"{NAME}'s gradient is 0 where 0 < |x| < 1 and right elsewhere: what it saved "
                "is 0 there, as when x itself (or x clamped to [-1, 1]) is cast to int8, which "
                "truncates toward 0. What must the tensor you cast hold, so that the cast keeps it?",
                mistake="AbsInPlace/sign-truncated-by-cast")
        one_bool = _one_bool_multiplied(forward, got, pristine, before)
        if one_bool is not None:
            raise GradingError(one_bool, mistake="AbsInPlace/one-sign-mask")
        for saved in forward.saved:  # a float8 copy rounds 1e-4 to 0: the copy, not the sign
            check_not_narrow_copy(saved)
        check_float32_reading(function, ABS, got, pristine, before, "sign")
    diagnose_gradient("x", got, expected, inputs={"x": before})
    # the sign on the class first: it would read as nothing saved
    check_class_state(SimpleNamespace(spec=ABS), function, state, "forward")
    check_saved_sign(forward, before)


def abs_full(AbsInPlace, device) -> None:
    function = check_is_function(AbsInPlace, ABS)
    check_forward_grad_mode(function, ABS, device)
    for seed, shape in enumerate(SHAPES):
        with quoting_case(ABS, f"x of shape {shape} with some entries exactly 0"):
            check_abs(function, both_signs(sample(shape, device, seed=seed)), seed=seed)
    covers("x == 0")
    covers("0-d x")
    with quoting_case(ABS, "x of shape (0, 3)"):
        check_abs(function, sample((0, 3), device, seed=4), seed=4)
    covers("empty x")
    with quoting_case(ABS, "x transposed, some entries exactly 0"):
        check_abs(function, both_signs(sample((4, 3), device, seed=6)).mT, seed=6)
    with quoting_case(ABS, "x with +-inf entries"):
        check_abs(function, with_infinities(device), seed=7)
    covers("the sign saved in one byte per element")
    check_in_place_rules(function, ABS, device, both_signs)


EXERCISES = [
    Exercise(NAME, "07_outputs", abs_full,
             contract=("x == 0", "0-d x", "empty x", "the sign saved in one byte per element",
                       "a leaf that requires grad", "a view of a non-leaf", "version counter"),
             domain=Domain(ABS, lambda device, dtype=torch.float64, seed=0: {
                 "x": signs_by_seed(sample((3, 4), device, seed=seed, dtype=dtype), seed)},
                 prepare=lambda submission: writing_into_a_copy(
                     check_is_function(submission, ABS)),
                 layouts=IN_PLACE_LAYOUTS, layout_clause=IN_PLACE_LAYOUT_CLAUSE,
                 # what forward saves is the sign, exact in one byte (-1, 0, 1; float8 allowed:
                 # check_saved_sign): the floor on saved dtypes is one byte, not x's dtype
                 accumulates=dict.fromkeys((torch.float64, torch.float32),
                                           torch.float8_e4m3fn))),
]
