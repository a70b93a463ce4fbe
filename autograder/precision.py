"""A float64 result that lost the digits float64 keeps beyond float32's.

Such a finding is held to the end of an exercise's battery (``precision_findings_last``), so
that a probe naming the cause more closely (which tensor was saved narrow, which constant was
rounded) runs first; the first finding held, a proven one before a suspected one, is raised at
the end of a battery that raised nothing else, and instead of a later failure that only shows
a value differs (gradcheck's, which a float32 forward's noise fails). Outside a battery it is
raised at once."""

from collections.abc import Callable
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

import torch

from .errors import GradingError
from .function_contract import rule_reference
from .mistakes import WRONG_VALUE, mistake_of
from .tolerances import Tolerance

# what a float64 result with one step in float32 still meets
FLOAT32_DIGITS = Tolerance(1e-5, 1e-7)

FLOAT32_STEP = ("a step ran in float32 (a tensor made without dtype=, a .float(), a float32 "
                "constant or buffer) and the digits it dropped do not come back: keep every "
                "step of a float64 input in float64")


# what a float32 result with one step in float16 or bfloat16 still meets
HALF_DIGITS = Tolerance(1e-2, 1e-5)


@dataclass(frozen=True)
class _Finding:
    hint: str
    proven: bool  # every value a float32 number: a float32 step, not a guess
    kind: str = ""  # the mistake's kind where it is not float32-step or lost-float64-digits


# (the exercise graded, the findings held back, or None to raise them at once)
_held: ContextVar[tuple[str, list | None] | None] = ContextVar("precision_held", default=None)


@contextmanager
def precision_findings_last(name: str):
    """Hold the precision findings of exercise ``name`` to the end of the block."""
    held: list[_Finding] = []
    token = _held.set((name, held))
    try:
        yield
    except GradingError as error:
        if held and mistake_of(error) == WRONG_VALUE:  # a later value differs (gradcheck's
            _raise(name, _first(held))                 # Jacobians): the earlier loss says why
        raise
    finally:
        _held.reset(token)
    if held:
        _raise(name, _first(held))


def _first(held: list[_Finding]) -> _Finding:
    """The first proven finding, else the first."""
    return min(held, key=lambda finding: not finding.proven)


def running_exercise() -> str:
    """The name of the exercise whose battery is running ("" outside one): the default owner
    of the ids a shared comparison proves (``diagnose``)."""
    return (_held.get() or ("", None))[0]


def finding_held() -> bool:
    """Has the running battery held a precision finding, raised when the battery ends?"""
    return bool((_held.get() or ("", None))[1])


@contextmanager
def precision_findings_now():
    """Raise precision findings at once inside the block: the checks after it would only name
    their consequences (the bytes of autograd's cast back)."""
    name, _ = _held.get() or ("", None)
    token = _held.set((name, None))
    try:
        yield
    finally:
        _held.reset(token)


def _raise(name: str, finding: _Finding):
    """A proven finding is a float32 step; the other still proves float64's digits were lost
    (five digits right, far outside float64's precision), which step lost them is a guess."""
    kind = finding.kind or ("float32-step" if finding.proven else "lost-float64-digits")
    raise GradingError(finding.hint, mistake=f"{name}/{kind}" if name else "")


def _note(finding: _Finding) -> None:
    name, held = _held.get() or ("", None)
    if held is None:
        _raise(name, finding)
    held.append(finding)


def rounded_to_float32(got: torch.Tensor, expected: torch.Tensor) -> bool:
    """Every value of a float64 ``got`` is a float32 number, and none of the truth's values that
    matter is: a step ran in float32 (autograd casts a float32 gradient back silently). Zeros
    where the truth is float64 rounding noise prove nothing."""
    if (got.dtype != torch.float64 or got.shape != expected.shape or expected.numel() == 0
            or not torch.equal(got, got.float().to(torch.float64))):
        return False
    scale = expected.abs().max().item()
    significant = expected.abs() > 1e-3 * scale
    has_digits = significant & (expected != expected.float().to(torch.float64))
    return (bool(has_digits.any()) and bool((got[significant] != 0).all())
            and not torch.allclose(got, expected, rtol=1e-10, atol=1e-12 * scale))


def rounded_to_half(got: torch.Tensor, expected: torch.Tensor) -> torch.dtype | None:
    """float16 or bfloat16 where every value of a float32 ``got`` is a number of that dtype and
    none of the truth's values that matter is: a step ran in that dtype."""
    if got.dtype != torch.float32 or got.shape != expected.shape or expected.numel() == 0:
        return None
    scale = expected.abs().max().item()
    significant = expected.abs() > 1e-3 * scale
    for half in (torch.bfloat16, torch.float16):  # a bfloat16 number is mostly a float16 one
        has_digits = significant & (expected != expected.to(half).float())
        if (torch.equal(got, got.to(half).float()) and bool(has_digits.any())
                and bool((got[significant] != 0).all())):
            return half
    return None


def half_step(label: str, got: torch.Tensor, half: torch.dtype) -> str:
    """The first line for ``rounded_to_half``'s finding."""
    name = str(half).removeprefix("torch.")
    return (f"every value of {label} is exactly a {name} number, where the truth has float32's "
            f"digits: a step ran in {name} (a .half(), a .to({name}), autocast, a {name} "
            "buffer) and the digits it dropped do not come back: keep every step of a float32 "
            f"input in float32 ({_of(label, got)}) {rule_reference('values')}")


def _of(label: str, got: torch.Tensor) -> str:
    """'grad_x of shape (5,), float64': what the finding was seen on."""
    return f"{label} of shape {tuple(got.shape)}, {str(got.dtype).removeprefix('torch.')}"


def note_precision(label: str, got: torch.Tensor, expected: torch.Tensor, computed_in,
                   *, within: bool, where: Callable[[], str] = str) -> bool:
    """Note what ``got`` (computed in ``computed_in``) shows about lost digits; True when the
    only fault it shows is precision (noted), so the caller's other diagnoses do not apply.
    ``within``: ``got`` met the caller's tolerance; ``where()``: the largest error's place
    (called only for the note that quotes it: finding it costs more than the comparison)."""
    if computed_in == torch.float32 and got.dtype == torch.float32:
        return _note_half(label, got, expected, within)
    if computed_in != torch.float64 or got.dtype != torch.float64:
        return within
    near = within or (got.shape == expected.shape and torch.allclose(
        got, expected, rtol=FLOAT32_DIGITS.rtol, atol=FLOAT32_DIGITS.atol))
    if not near:
        return False
    if rounded_to_float32(got, expected):
        _note(_Finding(f"every value of {label} is exactly a float32 number, where the truth "
                       f"has float64's digits: {FLOAT32_STEP} ({_of(label, got)}) "
                       f"{rule_reference('values')}", proven=True))
    elif not within:
        _note(_Finding(f"{label} agrees with the truth to five digits or more but is far "
                       f"outside float64's precision ({where()}): a step in float32 (a constant "
                       "such as torch.tensor(w) without dtype=, a tensor made without dtype=, a "
                       ".float(), a float32 accumulator) loses this much, and so do a small "
                       "constant added and a clamp or cut-off (z.clamp(-30, 30)) where the "
                       f"contract has none ({_of(label, got)}) {rule_reference('values')}",
                       proven=False))
    return True


def _note_half(label: str, got: torch.Tensor, expected: torch.Tensor, within: bool) -> bool:
    """note_precision for a float32 result: a step in float16 or bfloat16 noted."""
    near = within or (got.shape == expected.shape and torch.allclose(
        got, expected, rtol=HALF_DIGITS.rtol, atol=HALF_DIGITS.atol))
    if near and (half := rounded_to_half(got, expected)) is not None:
        _note(_Finding(half_step(label, got, half), proven=True,
                       kind=f"{str(half).removeprefix('torch.')}-step"))
        return True
    return within
