"""FusedLinearReLU's ReLU: what forward saves for it (one bit per output element) and the
gradient where a pre-activation is exactly 0, or just above it."""

import math

import torch
import torch.nn.functional as F

from ...checks import Spec, case, check_values_and_gradients
from ...contract import covers
from ...errors import GradingError


def check_saves_bool_mask(spec: Spec, forward) -> None:
    """The ReLU part needs one bit per output element, not a float pre-activation."""
    output_shape = tuple(forward.output.shape)
    masks = [s for s in forward.saved  # flattened to (rows, out) is fine too
             if s.dtype == torch.bool and math.prod(s.shape) == math.prod(output_shape)]
    # the float pre-activation or output, in any shape; a float copy of something else (a
    # contiguous weight.T) is not what the contract forbids
    floats = [s for s in forward.saved if s.role in ("intermediate", "output")
              and s.dtype.is_floating_point and math.prod(s.shape) == math.prod(output_shape)]
    if floats:
        what = floats[0]
        raise GradingError(
            f"{spec.name} saved {_a(what.dtype)} {what.role} of shape "
            f"{what.shape} ({what.nbytes} bytes) for backward: a float number per output "
            "element, the memory fusing is meant to drop. What does the ReLU part of backward "
            "need to know about the pre-activation at each element, and how few bytes hold "
            "that (your relu_keeps)?", mistake=f"{spec.name}/saves-float-mask")
    integers = [s for s in forward.saved if s.role == "intermediate"
                and math.prod(s.shape) == math.prod(output_shape)]
    if not masks and integers:
        raise GradingError(
            f"{spec.name} saved {_a(integers[0].dtype)} mask: save it "
            "as a boolean tensor, pre_activation > 0, as the exercise asks (a bool is one byte too)",
            mistake=f"{spec.name}/saves-integer-mask")
    if not masks:
        raise GradingError(
            f"{spec.name} saved no boolean mask of the output's shape: the ReLU part of "
            "backward needs what your relu_keeps keeps of the pre-activation, one byte per "
            "output element, and forward, where the pre-activation is at hand, is where to "
            "save it with ctx.save_for_backward (not recomputed in backward)",
            mistake=f"{spec.name}/saves-no-mask")


def _a(dtype: torch.dtype) -> str:
    """'a float64', 'a uint8', 'an int8': the dtype's name with its article."""
    name = str(dtype).removeprefix("torch.")
    return f"{'an' if name.startswith('int') else 'a'} {name}"


# integer entries, so that several pre-activations x @ weight.T + bias are exactly 0
ZERO_X = [[1.0, -1.0, 0.0], [2.0, 1.0, -1.0], [0.0, 0.0, 0.0], [0.5, 1.5, -2.0]]
ZERO_WEIGHT = [[1.0, 1.0, 0.0], [0.0, 1.0, 1.0], [1.0, -1.0, 2.0], [-1.0, 0.0, 1.0]]
ZERO_BIAS = [0.0, 1.0, -2.0, 0.5]
# the same pre-activations 1e-9 above those: where they were 0 they are now tiny but positive,
# where torch.relu passes grad_output on (a mask z > 1e-6 would not)
TINY_BIAS = [b + 1e-9 for b in ZERO_BIAS]


def check_exact_zero_pre_activation(function, spec: Spec, device) -> None:
    """Where x @ weight.T + bias is exactly 0, torch.relu passes no gradient: a mask z >= 0
    passes grad_output there. Checked with and without a bias, and 1e-9 above 0, where a mask
    with a threshold (z > 1e-6) passes none."""
    at_zero = Spec(spec.name, spec.input_names, lambda x, weight, bias=None: torch.where(
        F.linear(x, weight, bias) >= 0, F.linear(x, weight, bias), 0.0))
    for bias in (None, ZERO_BIAS, TINY_BIAS):
        values = {"x": torch.tensor(ZERO_X, dtype=torch.float64, device=device),
                  "weight": torch.tensor(ZERO_WEIGHT, dtype=torch.float64, device=device)}
        if bias is not None:
            values["bias"] = torch.tensor(bias, dtype=torch.float64, device=device)
        what = ("1e-9 above 0" if bias is TINY_BIAS else "exactly 0")
        with case(f"pre-activations {what}, bias={'a tensor' if bias else 'None'}"):
            try:
                check_values_and_gradients(function, spec, values)
            except GradingError as error:
                if not _matches(function, at_zero, values):
                    raise
                raise GradingError(
                    "where the pre-activation x @ weight.T + bias is exactly 0, your backward "
                    "passes grad_output on, and torch.relu passes 0: which entries does your "
                    "mask keep?", error.details or error.hint,
                    mistake=f"{spec.name}/mask-includes-zero") from error
    covers("pre-activations exactly 0")


def _matches(function, spec: Spec, values: dict) -> bool:
    """Do the submission's gradients equal ``spec``'s reference gradients?"""
    try:
        check_values_and_gradients(function, spec, values)
    except GradingError:
        return False
    return True
