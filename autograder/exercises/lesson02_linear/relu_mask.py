"""FusedLinearReLU's ReLU: what forward keeps for it (at most one byte per output element), the
gradient where a pre-activation is exactly 0, or just above it (1e-20), a mask made from the
activation's value truncated to an integer, and a bias gradient that skips the mask."""

import math

import torch
import torch.nn.functional as F
from torch.multiprocessing.reductions import StorageWeakRef
from torch.utils._python_dispatch import TorchDispatchMode

from ...checks import (Spec, case, check_values_and_gradients, make_inputs,
                      run_backward, run_forward)
from ...contract import covers
from ...errors import GradingError
from ...memory import survivors


def check_saves_bool_mask(spec: Spec, forward) -> None:
    """The contract's bound: for the ReLU, at most one byte per output element, counted by the
    storage behind what forward saved besides its inputs (a bool or a 1-byte mask, or one packed
    into bits, fits; a float pre-activation, a wider integer or two masks do not). Saving nothing
    besides the inputs leaves backward to recompute the pre-activation, a product no gradient
    asks for."""
    numel = forward.output.numel()
    # the float pre-activation or output, in any shape; a float copy of something else (a
    # contiguous weight.T) is not what the ReLU part of backward keeps
    floats = [s for s in forward.saved if s.role in ("intermediate", "output")
              and s.dtype.itemsize > 1 and s.dtype.is_floating_point
              and math.prod(s.shape) == numel]
    if floats:
        what = floats[0]
        raise GradingError(
            f"{spec.name} saved {_a(what.dtype)} {what.role} of shape "
            f"{what.shape} ({what.nbytes} bytes) for backward: {what.dtype.itemsize} bytes per "
            "output element where the contract allows the ReLU part one. What does the ReLU "
            "part of backward need to know about the pre-activation at each element, and how "
            "few bytes hold that (question 1 before the exercise)?",
            mistake=f"{spec.name}/{_float_kind(what)}")
    # what the ReLU part keeps: what forward made, but a float copy of something else
    made = [s for s in forward.saved if s.role == "intermediate"
            and not (s.dtype.is_floating_point and s.dtype.itemsize > 1)]
    if not numel:
        return
    if not made:
        raise GradingError(
            f"{spec.name} saved nothing for the ReLU part of backward besides its inputs: "
            "backward needs to know something of the pre-activation at each output element "
            "(question 1 before the exercise), and recomputing it there is a matrix product no "
            "gradient asks for: forward, where the pre-activation is at hand, is where to keep "
            "it", mistake=f"{spec.name}/saves-no-mask")
    storages = {s.tensor.untyped_storage().data_ptr(): s.tensor.untyped_storage().nbytes()
                for s in made}
    kept = sum(storages.values())
    if kept <= numel:
        return
    masks = [s for s in made if math.prod(s.shape) == numel]
    if len(masks) > 1 and len(storages) > 1:
        raise GradingError(
            f"{spec.name} saved {len(storages)} masks of the output's size ({kept} bytes), "
            f"{kept // numel} bytes per output element where the contract allows one: what "
            "does backward learn from the second that the first does not tell it?",
            mistake=f"{spec.name}/saves-more-than-one-mask")
    what = (masks or made)[0]
    if what.dtype.itemsize > 1:
        raise GradingError(
            f"{spec.name} saved {_a(what.dtype)} tensor of shape {what.shape}, "
            f"{_bytes(what.dtype)} per element ({kept} bytes for {numel} output elements), "
            "where the contract allows the ReLU part one byte per output element. Which dtype "
            "does the comparison that made it give, and how many bytes per element does that "
            "one take?", mistake=f"{spec.name}/saves-integer-mask")
    raise GradingError(
        f"{spec.name}'s saved mask is a view of a {kept}-byte storage for {numel} output "
        "elements: saving it keeps the whole storage alive, more than the one byte per output "
        "element the contract allows. Save a tensor of its own (.clone() it, or build it "
        "directly)", mistake=f"{spec.name}/mask-views-wider-storage")


def _float_kind(saved) -> str:
    """The id of a saved float tensor of the output's size: a mask of 0s and 1s, the output,
    or (anything else) the pre-activation."""
    values = saved.tensor.detach()
    if bool(((values == 0) | (values == 1)).all()) and bool((values == 1).any()):
        return "saves-float-mask"
    return "saves-float-output" if saved.role == "output" else "saves-float-pre-activation"


def _bytes(dtype: torch.dtype) -> str:
    """'1 byte', '8 bytes': the dtype's size per element."""
    return f"{dtype.itemsize} byte{'s' if dtype.itemsize > 1 else ''}"


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
    # torch.relu's values, and gradient only where z > 1e-6: at these pre-activations (1e-9 or
    # at least 0.5 from 0) the gradients of any threshold from 1e-9 up to 0.5
    above_threshold = Spec(spec.name, spec.input_names, lambda x, weight, bias=None: _thresholded(
        F.linear(x, weight, bias)))
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
                if bias is TINY_BIAS and _matches(function, above_threshold, values):
                    raise GradingError(
                        "where the pre-activation x @ weight.T + bias is positive but tiny "
                        "(1e-9), your backward passes no gradient, as a mask with a threshold "
                        "above 0 does (z > 1e-6, say), and torch.relu passes grad_output on "
                        "wherever it is > 0, however small: which entries does your mask keep?",
                        error.details or error.hint,
                        mistake=f"{spec.name}/mask-drops-tiny-positive") from error
                if not _matches(function, at_zero, values):
                    raise
                raise GradingError(
                    "where the pre-activation x @ weight.T + bias is exactly 0, your backward "
                    "passes grad_output on, and torch.relu passes 0: which entries does your "
                    "mask keep?", error.details or error.hint,
                    mistake=f"{spec.name}/mask-includes-zero") from error
    check_tiny_positive_pre_activation(function, spec, device)
    covers("pre-activations exactly 0")


# x @ eye(3).T is x exactly: pre-activations of 1e-20 and 1e-30, normal numbers in float64 and
# float32 alike, beside 1 and negatives; a mask with a threshold (z > finfo.eps) drops them,
# where torch.relu passes grad_output on. Then smaller ones on the CPU (a GPU's matrix product
# may flush subnormals to 0): 1e-50 in float64, which a mask computed in float32 rounds to 0,
# and subnormals, which a threshold at finfo.tiny drops
TINY_X = [[1e-20, 1e-30, -1e-20], [1.0, 1e-20, -1.0], [1e-30, -1e-30, 0.0]]
TINIER_X = [[1e-50, 1e-310, -1e-50], [1.0, 1e-50, -1.0], [1e-310, -1e-310, 0.0]]
SUBNORMAL_X = [[1e-40, 1e-42, -1e-40], [1.0, 1e-40, -1.0], [1e-42, -1e-42, 0.0]]


def check_tiny_positive_pre_activation(function, spec: Spec, device) -> None:
    """Pre-activations that are positive but small: torch.relu passes grad_output on wherever
    z > 0, however small."""
    cases = [(TINY_X, torch.float64, "1e-20 and 1e-30"), (TINY_X, torch.float32, "1e-20 and 1e-30")]
    if torch.device(device).type == "cpu":
        cases += [(TINIER_X, torch.float64, "1e-50 and the subnormal 1e-310"),
                  (SUBNORMAL_X, torch.float32, "the subnormals 1e-40 and 1e-42")]
    for rows, dtype, smallest in cases:
        values = {"x": torch.tensor(rows, dtype=dtype, device=device),
                  "weight": torch.eye(3, dtype=dtype, device=device),
                  "bias": torch.zeros(3, dtype=dtype, device=device)}
        with case(f"{dtype} pre-activations {smallest}, bias=a tensor"):
            try:
                check_values_and_gradients(function, spec, values)
            except GradingError as error:
                raise GradingError(
                    f"where the pre-activation x @ weight.T + bias is positive but tiny "
                    f"({smallest}), your backward passes no gradient, and torch.relu passes "
                    "grad_output on wherever it is > 0, however small: which entries does your "
                    "mask keep?", error.details or error.hint,
                    mistake=f"{spec.name}/mask-drops-tiny-positive") from error


def check_bias_gradient_masked(function, spec: Spec, device) -> None:
    """grad_bias is the masked grad_output summed over the rows, not the raw one: name the
    bias gradient that skips the ReLU (the bias is added before it) where grad_x and
    grad_weight are right, and a mask built from grad_output's sign (torch.relu(grad_output))
    where all three are that mask's."""
    values = {"x": torch.tensor(ZERO_X, dtype=torch.float64, device=device),
              "weight": torch.tensor(ZERO_WEIGHT, dtype=torch.float64, device=device),
              "bias": torch.tensor(ZERO_BIAS, dtype=torch.float64, device=device)}
    inputs = make_inputs(values)
    try:
        forward = run_forward(function, spec, inputs)
        numel = forward.output.numel()
        # of both signs (every third negative), none 0: a mask built from grad_output's sign
        # differs from the pre-activation's
        sign = torch.where(torch.arange(numel, device=device) % 3 == 1, -1.0, 1.0)
        grad_output = (torch.linspace(0.5, 2.0, numel, dtype=torch.float64, device=device)
                       * sign).reshape(forward.output.shape)
        grads = run_backward(spec, forward.output, inputs, grad_output).grads[:3]
    except GradingError:
        return  # an error is for the checks after this one to name, with their cases
    if any(not isinstance(g, torch.Tensor) or g.shape != values[n].shape
           for g, n in zip(grads, ("x", "weight", "bias"))):
        return
    x, z = values["x"], F.linear(values["x"], values["weight"], values["bias"])

    def gradients(grad_z):  # grad_x, grad_weight and grad_bias from the gradient through the ReLU
        return grad_z @ values["weight"], grad_z.T @ x, grad_z.sum(0)

    expected = gradients(grad_output * (z > 0))
    if all(torch.allclose(g, e) for g, e in zip(grads, expected)):
        return
    if all(torch.allclose(g, m) for g, m in zip(grads, gradients(grad_output.clamp(min=0)))):
        raise GradingError(
            "your backward's gradients are those of torch.relu(grad_output) pushed through the "
            "linear layer: your mask keeps grad_output where grad_output is > 0, and torch.relu "
            "keeps it where the pre-activation x @ weight.T + bias is > 0 (a negative "
            "grad_output where the ReLU is on gets no gradient from yours). Whose sign does the "
            "ReLU part of backward read (question 1 before the exercise)?",
            mistake=f"{spec.name}/mask-from-grad-output")
    if (all(torch.allclose(g, e) for g, e in zip(grads[:2], expected[:2]))
            and torch.allclose(grads[2], grad_output.sum(0))):
        raise GradingError(
            "grad_bias sums grad_output where the pre-activation is <= 0 too, as if the bias "
            "were added after the ReLU: it is added before, so where the ReLU is off no "
            "gradient reaches the bias either. What takes grad_output's place in grad_bias, as "
            "in grad_x and grad_weight (question 3 before the exercise)?", mistake=f"{spec.name}/grad-bias-unmasked")


# x @ eye(3).T + 0 is x exactly: pre-activations between 0 and 1 (0.25, 0.5, 0.99), from 1 up
# to below 2 (1.0 exactly, 1.5) and negative. A mask made from the activation's value converted
# to an integer (relu(z).to(torch.uint8): 0.99 becomes 0, 1.5 becomes 1) passes grad_output at
# z >= 1 alone, whether backward reads it as a bool or multiplies by it; a threshold mask
# (z > t for t below 0.25, or t of 1 or more) gives other gradients here
TRUNCATED_X = [[0.25, 0.99, -0.5], [1.0, 0.5, 1.5], [-1.25, 1.75, 0.75], [0.5, -0.25, 1.25]]


def check_mask_from_sign(function, spec: Spec, device) -> None:
    """The mask must say where the pre-activation is > 0: name a mask made by converting the
    activation's value to an integer, which is 0 wherever 0 < z < 1 (its gradients then equal
    grad_output * [z >= 1] on pre-activations below 2, and differ from torch.relu's)."""
    values = {"x": torch.tensor(TRUNCATED_X, dtype=torch.float64, device=device),
              "weight": torch.eye(3, dtype=torch.float64, device=device),
              "bias": torch.zeros(3, dtype=torch.float64, device=device)}
    inputs = make_inputs(values)
    try:
        forward = run_forward(function, spec, inputs)
        grad_output = torch.linspace(0.5, 2.0, forward.output.numel(), dtype=torch.float64,
                                     device=device).reshape(forward.output.shape)
        grads = run_backward(spec, forward.output, inputs, grad_output).grads
    except GradingError:
        return  # an error is for the checks after this one to name, with their cases
    x = z = values["x"]  # the pre-activation, exactly: weight is the identity

    def gradients(grad_z):  # grad_x, grad_weight and grad_bias from the gradient through the ReLU
        return grad_z, grad_z.T @ x, grad_z.sum(0)

    expected, truncated = gradients(grad_output * (z > 0)), gradients(grad_output * (z >= 1))
    mine = [g for g in grads[:3] if isinstance(g, torch.Tensor)]
    if len(mine) != 3 or any(g.shape != e.shape for g, e in zip(mine, expected)):
        return
    if (not all(torch.allclose(g, e) for g, e in zip(mine, expected))
            and all(torch.allclose(g, t) for g, t in zip(mine, truncated))):
        raise GradingError(
            "where the pre-activation x @ weight.T + bias is between 0 and 1 (0.25, 0.5, 0.99) "
            "your backward passes no gradient, and from 1 up it passes grad_output: your mask "
            "is the activation's value converted to an integer (relu(z).to(torch.uint8) makes "
            "0.99 a 0), where torch.relu passes grad_output wherever the pre-activation is > 0. "
            "What does the ReLU part of backward need to know: the activation's value, or its "
            "sign (question 1 before the exercise)?",
            mistake=f"{spec.name}/mask-from-truncated-activation")


def _thresholded(z):
    """torch.relu(z) as a value, with a gradient only where z > 1e-6."""
    return torch.where(z > 1e-6, z, z.detach().clamp(min=0))


def _matches(function, spec: Spec, values: dict) -> bool:
    """Do the submission's gradients equal ``spec``'s reference gradients?"""
    try:
        check_values_and_gradients(function, spec, values)
    except GradingError:
        return False
    return True


class _FloatsMade(TorchDispatchMode):
    """Weak references to the new float tensors of ``numel`` elements made inside the block."""

    def __init__(self, numel: int):
        super().__init__()
        self.numel, self.made = numel, []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        result = func(*args, **(kwargs or {}))
        if not any(r.alias_info is not None for r in func._schema.returns):
            for out in result if isinstance(result, (list, tuple)) else (result,):
                if (isinstance(out, torch.Tensor) and out.dtype.is_floating_point
                        and out.numel() == self.numel):
                    self.made.append((StorageWeakRef(out.untyped_storage()), tuple(out.shape),
                                      out.dtype))
        return result


def check_no_float_kept(function, spec: Spec, values: dict, requires_grad=True) -> None:
    """After forward returns, no float tensor of the output's size that forward made may be
    alive but the output itself: a pre-activation kept in a global, on the class or in a
    closure holds the memory fusing is meant to drop, out of save_for_backward's sight. The
    sizes of x, weight and the output differ, so only an output-sized tensor is counted."""
    inputs = make_inputs(values, requires_grad=requires_grad)
    numel = math.prod((*values["x"].shape[:-1], values["weight"].shape[0]))
    with _FloatsMade(numel) as mode:
        output = function.apply(*inputs.values())
    held, size = output.untyped_storage().nbytes(), output.numel() * output.element_size()
    if held > size:
        raise GradingError(
            f"{spec.name}'s output is a view of a {held}-byte storage for {size} bytes of "
            "output: the returned tensor keeps the rest of that storage alive (a float number "
            "per output element beyond the output itself, the memory fusing is meant to drop). "
            "Return a tensor of its own", mistake=f"{spec.name}/output-views-wider-storage")
    mine = StorageWeakRef(output.untyped_storage())
    kept = survivors(lambda: [(shape, dtype) for ref, shape, dtype in mode.made
                              if not ref.expired() and ref != mine])
    if kept:
        shape, dtype = kept[0]
        raise GradingError(
            f"{spec.name} keeps {_a(dtype)} tensor of the output's size, shape {shape}, alive "
            "after forward returned, outside ctx.save_for_backward (in a global, on the class "
            "or in a closure): a float number per output element, the memory fusing is meant "
            "to drop, and out of sight of autograd's checks: the contract allows the ReLU "
            "part of backward one byte per output element. What does yours keep it for?",
            mistake=f"{spec.name}/keeps-float-pre-activation")
