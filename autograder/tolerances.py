"""How close to the float64 reference each dtype's results must be.

float64's bound sits far below float32's rounding (about 6e-8 of a value), so a step that ran
in float32, a float32 constant or a narrower accumulator fails, and far above float64's own
rounding, so a correct formula written another way passes."""

from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class Tolerance:
    """How close to the float64 reference a dtype's results must be."""

    rtol: float
    atol: float


TOLERANCES = {
    torch.float64: Tolerance(1e-9, 1e-10),
    torch.float32: Tolerance(1e-4, 1e-5),
    torch.float16: Tolerance(1e-2, 1e-3),
    torch.bfloat16: Tolerance(4e-2, 1e-2),
}


def tolerance_of(values: dict) -> Tolerance:
    """The tolerance of the widest floating tensor among ``values`` (float64's when none)."""
    dtypes = [v.dtype for v in values.values()
              if isinstance(v, torch.Tensor) and v.is_floating_point()]
    widest = max(dtypes, key=lambda d: torch.finfo(d).bits, default=torch.float64)
    return TOLERANCES.get(widest, TOLERANCES[torch.float64])
