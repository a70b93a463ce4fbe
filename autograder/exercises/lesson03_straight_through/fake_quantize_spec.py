"""FakeQuantize's reference, in composed ops, in both conventions for the clip mask, and the
tolerances its checks hold it to."""

import torch

from ...checks import Spec
from ...diagnose import FLOAT32_STEP
from ...errors import GradingError


# what the clip mask is judged on, at both edges or one at each (the contract accepts either
# at each edge, one mask for both gradients): the first two first, for the hints
CONVENTIONS = ("v", "round(v)", "round(v) at qmin, v at qmax", "v at qmin, round(v) at qmax")


def judged(v, rounded, convention):
    """(what is compared with qmin, what with qmax) under ``convention``."""
    at_qmin = rounded if convention in ("round(v)", "round(v) at qmin, v at qmax") else v
    at_qmax = rounded if convention in ("round(v)", "v at qmin, round(v) at qmax") else v
    return at_qmin, at_qmax


def quantise(x, scale, qmin, qmax):
    """The forward of the contract, in composed ops."""
    return torch.clamp(torch.round(x / scale), qmin, qmax) * scale


FAKE_QUANTIZE = Spec("FakeQuantize", ("x", "scale", "qmin", "qmax"), quantise)


def quantise_straight_through(x, scale, qmin, qmax):
    """The contract's gradients in composed ops (inside judged on v): LSQ's detach trick."""
    v = torch.clamp(x / scale, qmin, qmax)
    return (v + (torch.round(v) - v).detach()) * scale


LSQ = Spec("FakeQuantize", FAKE_QUANTIZE.input_names, quantise_straight_through)


def tolerance(dtype):
    """float64's sits far below float32's rounding (6e-8 of a value): a step in float32 fails."""
    return (1e-5, 1e-6) if dtype == torch.float32 else (1e-10, 1e-11)


def float32_step(what: str, got, expected, x, where: str, mistake: str, why=FLOAT32_STEP):
    """A float64 result right to float32's precision, every value a float32 number, where the
    truth has float64's digits (autograd casts a float32 gradient back to x's dtype silently)."""
    if (x.dtype == torch.float64 and got.dtype == torch.float64
            and torch.equal(got, got.float().to(got.dtype))
            and not torch.equal(expected, expected.float().to(expected.dtype))
            and torch.allclose(got, expected, rtol=1e-5, atol=1e-6)):
        each = "its value" if got.dim() == 0 else "every value"
        raise GradingError(f"{what} is right only to float32's precision, {each} a float32 "
                           f"number ({where}): {why}", mistake=f"FakeQuantize/{mistake}")
