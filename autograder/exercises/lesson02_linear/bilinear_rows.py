"""Bilinear over inputs of any number of leading dimensions: a backward written for 2-D inputs
alone (einsum subscripts with a letter for the position, ``"po,oij,pj->pi"``) is named, as
MyLinearFunction's is (``leading_dims``)."""

import contextlib

from ...checks import Spec, check_values_and_gradients
from ...errors import GradingError
from .leading_dims import _failing_gradients


def _works_for_rows(function, spec: Spec, values_for) -> bool:
    """Right for x1 and x2 of one leading dimension (5 positions): values and gradients."""
    try:
        check_values_and_gradients(function, spec, values_for((5,)))
    except GradingError:
        return False
    return True


@contextlib.contextmanager
def two_d_only_named(function, spec: Spec, values: dict, values_for):
    """Backward raised for x1 and x2 of no or two leading dimensions, and is right for one
    (``values_for(leading)`` makes the inputs): its formulas are written for 2-D inputs. The
    einsum's own error (no '...' given) is named as such; any other, only as 2-D formulas."""
    try:
        yield
    except GradingError as error:
        if (values["x1"].dim() == 2 or not error.hint.startswith(f"{spec.name}.backward raised")
                or not _works_for_rows(function, spec, values_for)):
            raise
        detail = error.details or error.hint
        shapes = (f"x1 of shape {tuple(values['x1'].shape)} and x2 of shape "
                  f"{tuple(values['x2'].shape)}")
        leading = {1: "no leading dimension", 3: "two leading dimensions"}.get(
            values["x1"].dim(), f"{values['x1'].dim() - 1} leading dimensions")
        failing = _failing_gradients(function, values)
        named = [f"grad_{name}" for name in failing]
        where = ("your backward's products are" if not failing or len(failing) == len(values)
                 else f"{named[0]} is" if len(named) == 1
                 else f"{', '.join(named[:-1])} and {named[-1]} are")
        if "einsum()" in detail and "no ellipsis" in detail:
            cause = (f"{where} einsums whose subscripts name one letter per dimension of 2-D "
                     f"inputs, one row per position, and these have {leading}. How does an "
                     "einsum equation name any number of leading dimensions, none included?")
        else:
            cause = (f"{where} written for 2-D inputs, one row per position, and these have "
                     f"{leading}. Which matrices, one row per position, can you make from "
                     "grad_output, x1 and x2 for any number of leading dimensions?")
        raise GradingError(
            f"{spec.name}.backward fails for {shapes} but works for 2-D inputs: {cause}",
            detail, mistake=f"{spec.name}/two-d-only") from error
