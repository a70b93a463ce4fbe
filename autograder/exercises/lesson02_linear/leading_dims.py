"""Lesson 02's layers over x of any number of leading dimensions (none included): the
inputs, and the probes that name a backward written for 2-D x alone."""

import torch

from ...checks import Spec, check_values_and_gradients, make_inputs, reference_gradients
from ...errors import GradingError
from ...exercise import sample

IN_FEATURES, OUT_FEATURES = 3, 4
# a first leading dimension of size 1 last: a batch of one, (1, in), and (1, 5, in), where a
# forward that squeezes dim 0 (to undo atleast_2d for 1-D x) drops a dimension F.linear keeps
LEADING_SHAPES = [(), (5,), (2, 5), (2, 1, 3), (1,), (1, 5)]


def linear_values(leading, device, *, bias=True, seed=0, dtype=torch.float64,
                  features=(IN_FEATURES, OUT_FEATURES)) -> dict:
    """x (*leading, in), weight (out, in) and bias (out,), (in, out) = features."""
    in_features, out_features = features
    values = {
        "x": sample((*leading, in_features), device, seed=seed, dtype=dtype),
        "weight": sample((out_features, in_features), device, seed=seed + 1, dtype=dtype),
    }
    if bias:
        values["bias"] = sample((out_features,), device, seed=seed + 2, dtype=dtype)
    return values


def values_and_gradients(function, spec: Spec, values: dict, device):
    """check_values_and_gradients, naming unflattened leading dimensions: a backward that
    raises for 1-D or 3-D x but works for 2-D x wrote the 2-D formulas (``grad_output.T @ x``);
    one that raises for 1-D x alone is told what its error proves (``_raise_without_leading_dims``).
    "Works" is probed, each returned gradient's shape included."""
    try:
        return check_values_and_gradients(function, spec, values)
    except GradingError as error:
        if values["x"].dim() == 1 and _sums_the_features(function, spec, values, device):
            right = ("2-D and 3-D x" if works_for_rows(function, spec, device, (2, 5))
                     else "2-D x")  # each gradient's shape too: a sum(0) leaves (5, out)
            raise GradingError(
                f"grad_bias has shape () but bias has shape ({OUT_FEATURES},) for x of shape "
                f"{tuple(values['x'].shape)}, while your backward is right for {right}: "
                "with no leading dimension, your sum over the leading dimensions summed the "
                "output features (sum(0) of a 1-D tensor does, and so does sum(dim=()), which "
                "sums every dimension, not none): what shape do the leading dimensions of x "
                "take when there are none, and which sum is the same for every number of them?",
                error.details or error.hint, mistake=f"{spec.name}/bias-sums-features") from error
        if values["x"].dim() != 2 and error.hint.startswith(f"{spec.name}.backward raised"):
            _raise_transposed_for_rows(function, spec, values, device, error)
        if (values["x"].dim() == 2 or not error.hint.startswith(f"{spec.name}.backward raised")
                or not works_for_rows(function, spec, device)):
            raise
        if values["x"].dim() == 1:
            _raise_without_leading_dims(function, spec, values, device, error)
        hint = _two_d_only_hint(spec, values, _failing_gradients(function, values))
        raise GradingError(hint, error.details or error.hint,
                           mistake=f"{spec.name}/two-d-only") from error


def _raise_transposed_for_rows(function, spec: Spec, values: dict, device,
                               error: GradingError) -> None:
    """Backward raised for 1-D or 3-D x and, for 2-D x, returns a gradient of the transposed
    shape (``x.T @ grad_output``): the transpose is named first, not torch's shape error."""
    rows = linear_values((5,), device)
    try:
        check_values_and_gradients(function, spec, rows)
        return
    except GradingError as probe:
        first, named = (probe.hint.splitlines() or [""])[0], probe.mistake
    if "a transpose?" not in first:
        return
    raise GradingError(
        f"{first.removesuffix('?')} (for x of shape {tuple(rows['x'].shape)}), and for x of "
        f"shape {tuple(values['x'].shape)} your backward raised instead, where the transposed "
        "shapes no longer fit (below): which of its products has its factors the wrong way "
        "round?", error.details or error.hint, mistake=named
    ) from error


def _raise_without_leading_dims(function, spec: Spec, values: dict, device,
                                error: GradingError) -> None:
    """Backward raised for 1-D x and is right for 2-D x (shapes returned included): the cause
    named only where the error proves it. ``.mT`` (or ``.mH``) of a 1-D tensor raises whatever
    else the backward does; a dimension out of range is a flattening or index that needs a
    leading dimension; any other error is only said to come with no leading dimension. Where
    3-D x fails too (returns nothing here), the 2-D-only hint follows."""
    detail = error.details or error.hint
    three_d = works_for_rows(function, spec, device, (2, 5))
    shape, right = tuple(values["x"].shape), "2-D and 3-D x" if three_d else "2-D x"
    vectors = (f"with no leading dimension grad_output has shape ({OUT_FEATURES},) and x "
               f"{shape}, vectors, not matrices")
    question = ("Which 2-D matrices, one row per position, can you make from grad_output and "
                "x for any number of leading dimensions, none included?")
    transposed = next((t for t in (".mT", ".mH") if f"tensor{t} is only supported" in detail),
                      None)
    if transposed:
        raise GradingError(
            f"{spec.name}.backward takes {transposed} of a 1-D tensor for x of shape {shape}: "
            f"{vectors}, and {transposed} needs at least two dimensions. Your backward is right "
            f"for {right}{'' if three_d else ', not for 3-D x'}. " + question, detail,
            mistake=f"{spec.name}/transposes-a-vector") from error
    if not three_d:
        return
    if "out of range" in detail:  # flatten(0, -2), x.shape[-2], sum(dim=-2): no such dim
        cause = ("it asks for a dimension a 1-D x lacks (x.flatten(0, -2), x.shape[-2] and "
                 "sum(dim=-2) each need a leading dimension)")
    else:
        cause = f"{vectors}. Which line of your backward needs a leading dimension?"
    raise GradingError(
        f"{spec.name}.backward fails only with no leading dimension, for x of shape {shape}, "
        f"and is right for {right}: {cause} {question}", detail,
        mistake=f"{spec.name}/fails-without-leading-dims") from error


def _failing_gradients(function, values: dict) -> list[str]:
    """The gradients whose backward raises when its input alone requires grad: where a backward
    that tests ctx.needs_input_grad keeps its 2-D formulas (every one, when it tests nothing)."""
    failing = []
    for name in values:
        try:
            output = function.apply(*make_inputs(values, requires_grad={name}).values())
            output.backward(torch.ones_like(output))
        except Exception:  # noqa: BLE001 - a probe: any failure marks this gradient
            failing.append(name)
    return failing


def _two_d_only_hint(spec: Spec, values: dict, failing: list[str]) -> str:
    """What is 2-D in a backward right for 2-D x alone, and where; then a question that leads
    to the fix (the lesson's question 2 of "Leading dimensions"), not the fix."""
    shape = tuple(values["x"].shape)
    leading = {0: "no leading dimension", 1: "one leading dimension"}.get(
        len(shape) - 1, f"{len(shape) - 1} leading dimensions")
    where = ("your backward's products are" if not failing or len(failing) == len(values)
             else " and ".join(f"grad_{name}" for name in failing)
             + (" is" if len(failing) == 1 else " are"))
    gradient = ("grad_output" if spec.name == "MyLinearFunction"
                else "the gradient through the ReLU")
    if failing == ["x"]:
        question = (f"grad_x needs no sum over positions: which product of {gradient} "
                    f"(*, {OUT_FEATURES}) and weight ({OUT_FEATURES}, {IN_FEATURES}) gives "
                    f"(*, {IN_FEATURES}) for any number of leading dimensions, as forward's does?")
    elif failing == ["bias"]:
        question = (f"grad_bias sums {gradient} over every position, however many leading "
                    "dimensions hold them: which 2-D matrix, made from it, has one row per "
                    "position, so that a sum over its rows is that sum (question 3 of "
                    "'Leading dimensions')?")
    else:
        question = (f"grad_weight sums over every position, however many leading dimensions "
                    f"hold them: which two 2-D matrices, made from {gradient} and x, turn that "
                    "sum into one matrix product (question 2 of 'Leading dimensions')?")
    return (f"{spec.name}.backward fails for x of shape {shape} but works for 2-D x: {where} "
            f"written for 2-D x, one row per example, and this x has {leading}. {question}")


def works_for_rows(function, spec: Spec, device, leading=(5,)) -> bool:
    """Right for x of this leading shape: values and gradients."""
    values = linear_values(leading, device)
    try:
        check_values_and_gradients(function, spec, values)
    except GradingError:
        return False
    return True


def _sums_the_features(function, spec: Spec, values: dict, device) -> bool:
    """Probe for 1-D x: right for 2-D and 3-D x, yet backward's own grad_bias (read before the
    engine checks its shape) is the sum of every entry of the true one."""
    if "bias" not in values or not all(works_for_rows(function, spec, device, leading)
                                       for leading in ((5,), (2, 5))):
        return False
    try:
        inputs = make_inputs(values)
        output = function.apply(*inputs.values())
        grad_output = torch.ones_like(output)
        grad_bias = output.grad_fn.apply(grad_output)[2]  # the user's backward, unchecked
        truth = reference_gradients(spec, inputs, grad_output)["bias"]
    except Exception:  # noqa: BLE001 - a probe: any failure proves nothing
        return False
    return (isinstance(grad_bias, torch.Tensor) and grad_bias.dim() == 0
            and torch.allclose(grad_bias.detach(), truth.sum()))


def raise_none_for_empty(function, spec: Spec, values: dict, reference: str) -> None:
    """An empty batch where backward returned None for an input that requires grad: the
    reference's gradient is zeros of the input's shape (a sum over no rows), and a shortcut
    that skips the work for zero rows returns nothing in its place."""
    inputs = make_inputs(values)
    try:
        output = function.apply(*inputs.values())
        grads = torch.autograd.grad(output, list(inputs.values()), torch.ones_like(output),
                                    allow_unused=True)
    except Exception:  # an error is for the caller's message to name
        return
    nones = [name for name, grad in zip(inputs, grads) if grad is None]
    if nones:
        named = [f"grad_{name}" for name in nones]
        listed = " and ".join([", ".join(named[:-1]), named[-1]] if len(named) > 1 else named)
        raise GradingError(
            f"{spec.name} returned None for {listed} with an empty batch, where zeros of the "
            f"input's shape are due ({reference} gives them: a sum over no rows is 0, not "
            "nothing). What does your backward return when there are no rows?",
            mistake=f"{spec.name}/empty-batch")
