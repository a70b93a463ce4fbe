"""Lesson 09's scans on a 0-d x (Function contract, rule 1): torch.cumsum and torch.cummax take
one along dim 0 and along dim -1, as a row of one entry: the output is x as it is and the
gradient is grad_output. A backward (or a forward) that turns dim into a position with
``dim % x.dim()``, or reads ``x.shape[dim]``, is right on every other shape and raises here."""

import torch

from ...checks import Spec, case
from ...errors import GradingError
from ...exercise import sample
from ...function_contract import rule_reference
from .pattern_cases import described, graded_case

# the dims torch's scans accept on a 0-d tensor
SCALAR_DIMS = (0, -1)


def check_scalar_x(function, spec: Spec, op: str, device, check_saved=None) -> None:
    """Values and gradients against the reference on a 0-d x along each dim torch takes there;
    where forward or backward raises, the first line says what ``op`` gives on it."""
    for dim in SCALAR_DIMS:
        values = {"x": sample((), device, seed=3), "dim": dim}
        try:
            with case(described(values, torch.float64)):
                forward, _ = graded_case(function, spec, values)
                if check_saved is not None:
                    check_saved(forward, values["x"])
        except GradingError as error:
            if not error.hint.startswith((f"{spec.name}.forward raised",
                                          f"{spec.name}.backward raised")):
                raise
            raised = error.hint.split(" with ")[0]  # "Cumsum.backward raised IndexError"
            raise scalar_error(spec, op, dim, raised, str(error)) from error
        except NotImplementedError:
            raise
        except Exception as error:  # noqa: BLE001 - the learner's code may raise anything
            message = (str(error).splitlines() or [""])[0]
            raise scalar_error(spec, op, dim, f"{spec.name} raised {type(error).__name__}",
                               f"{type(error).__name__}: {message}") from error


def scalar_error(spec: Spec, op: str, dim: int, raised: str, details: str) -> GradingError:
    """``raised`` (who raised what) on a 0-d x along ``dim``, with what ``op`` gives there."""
    why = (": x.dim() is 0 there, so dim % x.dim() divides by zero; torch's own dims for a 0-d "
           "tensor are 0 and -1, and dim passed on as given keeps them"
           if "ZeroDivisionError" in raised else
           ": a 0-d x has no dim to index (x.shape[dim] and x[..., 0] do not exist there); "
           "which line of yours assumes one, and what does torch's op do with the same dim?")
    return GradingError(f"{raised} on a 0-d x (dim={dim}, float64), which {op} takes as a row "
                        f"of one entry, returning x as it is, with grad_output as its gradient"
                        f"{why} {rule_reference('values')}", details,
                        mistake=f"{spec.name}/raises-on-0-d")
