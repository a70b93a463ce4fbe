"""Grade under a known torch state, whatever the learner's notebook left switched on.

A correct answer followed by ``torch.set_grad_enabled(False)`` or
``torch.set_default_dtype(torch.float64)`` in the same cell must keep its marks. ``known_state``
puts grad mode, inference mode, the default dtype and device, anomaly detection and the
deterministic-algorithms flags to PyTorch's defaults for the checks, and gives the learner's
settings back afterwards.
"""

from contextlib import contextmanager

import torch


def _settings() -> tuple:
    return (torch.get_default_dtype(), torch.get_default_device(), torch.is_anomaly_enabled(),
            torch.is_anomaly_check_nan_enabled(), torch.are_deterministic_algorithms_enabled(),
            torch.is_deterministic_algorithms_warn_only_enabled())


def _apply(dtype, device, anomaly, check_nan, deterministic, warn_only) -> None:
    torch.set_default_dtype(dtype)
    torch.set_default_device(None if device == torch.device("cpu") else device)
    torch.set_anomaly_enabled(anomaly, check_nan)
    torch.use_deterministic_algorithms(deterministic, warn_only=warn_only)


DEFAULTS = (torch.float32, torch.device("cpu"), False, True, False, False)


@contextmanager
def known_state():
    """Run the block with torch's global settings at their defaults; restore the caller's."""
    learners = _settings()
    try:
        _apply(*DEFAULTS)
        with torch.inference_mode(False), torch.enable_grad():
            yield
    finally:
        _apply(*learners)
