"""Lesson 13: rms_norm_rows's reference, its sample values, and one call checked against it
(shared by the battery in rms_norm_rows and the layout checks in rms_norm_layouts)."""

import torch
import torch.nn.functional as F

from ...checks import Spec, check_values_and_gradients
from ...errors import GradingError
from ...exercise import sample
from .kernel_checks import Calls, explain

RMS_NORM_ROWS = Spec("rms_norm_rows", ("x", "weight", "eps"),
                     lambda x, weight, eps: F.rms_norm(x, x.shape[-1:], weight, eps))
EPS = 1e-5


def values(shape, device, seed=0, dtype=torch.float64, eps=EPS) -> dict:
    return {"x": sample(shape, device, seed=seed, dtype=dtype),
            "weight": 1 + 0.5 * sample(shape[-1:], device, seed=seed + 50, dtype=dtype),
            "eps": eps}


def checked(function, values: dict, **tolerances) -> None:
    try:
        check_values_and_gradients(Calls(function), RMS_NORM_ROWS, values, **tolerances)
    except (GradingError, NotImplementedError):
        raise
    except Exception as error:
        raise explain("rms_norm_rows", "call", error) from error


def gradients(function, values: dict, grad_output=None):
    x, weight = (values[n].detach().clone().requires_grad_() for n in ("x", "weight"))
    out = function(x, weight, values["eps"])
    grad_output = torch.ones_like(out) if grad_output is None else grad_output
    return torch.autograd.grad(out, (x, weight), grad_output)


def right(function, values: dict) -> bool:
    try:
        return checked(function, values) is None
    except GradingError:
        return False
