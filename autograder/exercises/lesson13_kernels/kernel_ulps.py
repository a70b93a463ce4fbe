"""Lesson 13: half precision measured in units in the last place, and bfloat16 failures the
interpreter (not the learner's arithmetic) can cause, named."""

import torch

from ...diagnose import diagnose_values
from ...errors import GradingError
from .kernel_interpreter import bfloat16_steps, float64_to_bfloat16, interpreting


def ulps(got: torch.Tensor, expected: torch.Tensor) -> torch.Tensor:
    """|got - expected| in units in the last place of ``expected``'s dtype at ``expected``;
    a result that cancels to far below the tensor's largest is measured with float32's spacing
    at that largest (float32 arithmetic, in any order, cannot resolve it better)."""
    info = torch.finfo(expected.dtype)
    exponent = torch.frexp(expected.float().abs()).exponent
    spacing = torch.ldexp(torch.ones_like(expected, dtype=torch.float32), exponent - 1)
    largest = expected.float().abs().max() if expected.numel() else torch.tensor(0.0)
    floor = max(info.smallest_normal * info.eps, 4 * torch.finfo(torch.float32).eps
                * largest.item())
    spacing = (spacing * info.eps).clamp(min=floor)
    return (got.float() - expected.float()).abs() / spacing


def check_within_ulps(name: str, what: str, got, expected: torch.Tensor, *, ulp=2.0,
                      right_from_float32=False) -> None:
    """Half precision: within ``ulp`` of the float32-computed reference cast to the dtype
    (``name``: the exercise's)."""
    diagnose_values(what, got, expected, rtol=0.0, atol=float("inf"))
    worst = ulps(got.detach(), expected)
    if worst.numel() and worst.max().item() > ulp:
        index = tuple(int(i) for i in torch.unravel_index(torch.argmax(worst), worst.shape))
        first = (f"{what} loses precision in {expected.dtype}: the same values computed from "
                 f"float32 inputs are right, so a step uses a value rounded to {expected.dtype}: "
                 "a half accumulator, or a half tensor read back (such as the saved output)"
                 if right_from_float32 else f"{what} is off by more than {ulp:g} ulp in "
                 f"{expected.dtype}")
        raise GradingError(f"{first}: {worst.max().item():.3g} ulp at index {index} (got "
                           f"{got[index].item()!r}, expected {expected[index].item()!r})",
                           mistake=f"{name}/half-rounded-step" if right_from_float32 else "")


def name_bfloat16_failure(name: str, run, error: GradingError) -> None:
    """A bfloat16 failure in the interpreter, named from what
    the interpreter did while ``run()`` repeats the bfloat16 call: arithmetic on bfloat16
    operands, or a float64 value converted to bfloat16 (both wrong in Triton 3.9's)."""
    if not interpreting():
        return
    with float64_to_bfloat16() as converted, bfloat16_steps() as steps:
        try:
            run()
        except Exception:  # noqa: BLE001 -- a probe: the battery's own message stands
            pass
    if steps:
        raise GradingError(
            f"{name} computes a step in bfloat16 inside a kernel: while the bfloat16 call ran, "
            "the interpreter was seen computing on bfloat16 operands, and Triton "
            "3.9's interpreter computes on the raw bits of bfloat16 values, not on the numbers "
            "(1.5 * 1.5 gives 2.5e-29): convert after loading (.to(tl.float32)) and cast back "
            "only when storing", error.details, case=error.case,
            mistake=f"{name}/bfloat16-step-in-interpreter") from error
    if converted:
        raise GradingError(
            f"{name} converts a float64 value to bfloat16 inside a kernel, and Triton 3.9's "
            "interpreter gets that conversion wrong (0.55 becomes 0): convert to float32 first, "
            "value.to(tl.float32).to(tl.bfloat16), or keep float64 for float64 input only",
            error.details, case=error.case,
            mistake=f"{name}/float64-to-bfloat16-in-interpreter") from error
