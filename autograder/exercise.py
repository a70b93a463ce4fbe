"""An exercise: a quick visible self-check and the full hidden battery."""

from collections.abc import Callable
from dataclasses import dataclass

import torch

from .devices import grading_devices


@dataclass(frozen=True)
class Exercise:
    name: str
    lesson: str
    quick: Callable[[object], None]
    full: Callable[[object, torch.device], None]
    hidden_checks: str  # what the hidden tests add, in one line, shown after a passing self-check
    example: Callable[[], tuple] | None = None  # small inputs for views of the learner's Function

    def grade(self, submission) -> None:
        """The full battery on every grading device."""
        for device in grading_devices():
            self.full(submission, device)


def sample(shape, device, *, seed=0, dtype=torch.float64, away_from_zero=0.0) -> torch.Tensor:
    """Seeded standard-normal values, optionally pushed at least ``away_from_zero`` off 0."""
    values = torch.randn(shape, generator=torch.Generator().manual_seed(seed), dtype=dtype)
    if away_from_zero:
        values = values + away_from_zero * torch.where(values >= 0, 1.0, -1.0).to(dtype)
    return values.to(device)
