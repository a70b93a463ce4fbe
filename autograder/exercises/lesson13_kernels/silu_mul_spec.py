"""Lesson 13: silu_mul's reference, its inputs, and the call every check of it makes."""

from contextlib import contextmanager

import torch
import torch.nn.functional as F
from torch._library import utils as library_utils

from ...checks import Spec, check_values_and_gradients
from ...errors import GradingError
from ...exercise import sample
from .kernel_checks import Calls, explain

SILU_MUL = Spec("silu_mul", ("a", "b"), lambda a, b: F.silu(a) * b)
HALF = (torch.float16, torch.bfloat16)


def silu_mul_values(shape, device, seed=0, dtype=torch.float64) -> dict:
    return {"a": 2 * sample(shape, device, seed=seed, dtype=dtype),
            "b": sample(shape, device, seed=seed + 50, dtype=dtype)}


@contextmanager
def aliasing_seen():
    """What custom_op's check of each call refused: "input" (an output shares an input's
    memory) or "output" (two outputs share memory), then the operator's name and whether it
    returned several tensors, the first refusal only."""
    original, seen = library_utils._c_check_aliasing_constraint, []

    def check(name, args, kwargs, result, *rest):
        try:
            return original(name, args, kwargs, result, *rest)
        except RuntimeError:
            inputs = {t.untyped_storage()._cdata
                      for t in library_utils.iter_tensors(args, kwargs)}
            outputs = [t.untyped_storage()._cdata for t in library_utils.iter_tensors(
                result if isinstance(result, tuple) else (result,), {})]
            seen.extend(("input" if inputs & set(outputs) else "output", str(name),
                         isinstance(result, tuple)))
            raise

    library_utils._c_check_aliasing_constraint = check
    try:
        yield seen
    finally:
        library_utils._c_check_aliasing_constraint = original


def checked_call(silu_mul, values: dict, **tolerances) -> None:
    try:
        with aliasing_seen() as seen:
            check_values_and_gradients(Calls(silu_mul), SILU_MUL, values, **tolerances)
    except GradingError as error:
        if "may not alias any inputs" not in str(error):  # custom_op's check of each call
            raise
        if seen[:1] == ["output"]:
            raise GradingError(
                "an operator of silu_mul returns outputs that alias each other (views of one "
                "buffer, such as both[0] and both[1] of one allocation): a custom operator's "
                "outputs must each own their memory, so allocate each gradient with its own "
                "torch.empty_like", error.details, case=error.case,
                mistake="silu_mul/outputs-alias-each-other") from error
        operator, several = (seen[1], seen[2]) if len(seen) > 2 else ("an operator", True)
        raise GradingError(
            (f"silu_mul's operator {operator} returns one of its own inputs (or a view of one) "
             "as its output y: a custom operator's outputs must be new tensors, so allocate y "
             "in every call, whatever its size (an empty one too)" if not several else
             f"silu_mul's operator {operator} returns one of its own inputs (or a view of one): "
             "a custom operator's outputs must be new tensors, so allocate each gradient "
             "(Liger-Kernel writes its gradients into a and b instead, which a custom operator "
             "may not do)"), error.details, case=error.case,
            mistake="silu_mul/returns-input") from error
    except NotImplementedError:
        raise
    except Exception as error:
        raise explain("silu_mul", "call", error) from error
