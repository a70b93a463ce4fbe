"""Probes for SplitHalves's backward with one output unused: fresh memory made to hold NaN, so
that a half left unwritten fails the same way every run, and named when it does."""

import warnings
from contextlib import contextmanager

import torch

from ...errors import GradingError


def halves(x: torch.Tensor):
    h = x.shape[-1] // 2
    return x[..., :h], x[..., h:]


@contextmanager
def fresh_memory_nan():
    """Memory that torch.empty and its kin return holds NaN (torch's deterministic mode, warn
    only, its warnings silenced): a half left unwritten then fails the same way every run."""
    enabled = torch.are_deterministic_algorithms_enabled()
    warn_only = torch.is_deterministic_algorithms_warn_only_enabled()
    fill = torch.utils.deterministic.fill_uninitialized_memory
    torch.use_deterministic_algorithms(True, warn_only=True)
    torch.utils.deterministic.fill_uninitialized_memory = True
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        torch.utils.deterministic.fill_uninitialized_memory = fill
        torch.use_deterministic_algorithms(enabled, warn_only=warn_only)


def check_unused_half_zero(got, expected: torch.Tensor, used: int, which: str) -> None:
    """The used half right and the unused one not 0: named, and (NaN there) blamed on memory
    backward allocated and left unwritten."""
    if (isinstance(got, torch.Tensor) and got.shape == expected.shape
            and torch.allclose(halves(got)[used], halves(expected)[used])
            and not torch.equal(halves(got)[1 - used], halves(expected)[1 - used])):
        unwritten = bool(halves(got)[1 - used].isnan().any())  # what fresh_memory_nan left
        raise GradingError(
            f"SplitHalves's gradient is right on the half of x the used output came from, and "
            f"not 0 on the {which} half, whose output is unused (no loss depends on it)" + (
                ": there it holds NaN, which is what this check makes fresh memory hold; what "
                "does the memory your backward allocates hold before you write into it?"
                if unwritten else ": what does the gradient of an unused output contribute?"),
            mistake="SplitHalves/unused-half-not-zero")
