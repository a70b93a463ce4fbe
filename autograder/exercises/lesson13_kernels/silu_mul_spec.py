"""Lesson 13: silu_mul's reference, its inputs, and the call every check of it makes."""

import torch
import torch.nn.functional as F

from ...checks import Spec, check_values_and_gradients
from ...errors import GradingError
from ...exercise import sample
from .kernel_checks import Calls, explain

SILU_MUL = Spec("silu_mul", ("a", "b"), lambda a, b: F.silu(a) * b)
HALF = (torch.float16, torch.bfloat16)


def silu_mul_values(shape, device, seed=0, dtype=torch.float64) -> dict:
    return {"a": 2 * sample(shape, device, seed=seed, dtype=dtype),
            "b": sample(shape, device, seed=seed + 50, dtype=dtype)}


def checked_call(silu_mul, values: dict, **tolerances) -> None:
    try:
        check_values_and_gradients(Calls(silu_mul), SILU_MUL, values, **tolerances)
    except GradingError as error:
        if "may not alias any inputs" not in str(error):  # custom_op's check of each call
            raise
        raise GradingError(
            "an operator of silu_mul returns one of its own inputs (or a view of one): a "
            "custom operator's outputs must be new tensors, so allocate each gradient "
            "(Liger-Kernel writes its gradients into a and b instead, which a custom operator "
            "may not do)", error.details, case=error.case,
            mistake="silu_mul/returns-input") from error
    except NotImplementedError:
        raise
    except Exception as error:
        raise explain("silu_mul", "call", error) from error
