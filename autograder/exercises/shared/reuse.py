"""A second call on the same input tensors after they were changed in place under no_grad: what
an optimizer step does between two training steps (w.sub_(lr * w.grad) on the same Parameter).
Anything kept between calls under a key the tensor gives (x.data_ptr(), id(x)) survives the
step and is stale; every other check draws fresh tensors, where such a key never repeats.
Cheap: two tiny calls, any lesson can call it once an exercise passes its own checks."""

import torch

from ...checks import Spec, make_inputs, reference_gradients, run_backward, run_forward
from ...errors import GradingError
from ...function_contract import rule_reference


def _step(tensor: torch.Tensor) -> None:
    """An in-place update of a leaf that requires grad, as an optimizer makes it: every entry
    moves (x -> -1.5 x + 0.25 changes 0 and every other value)."""
    with torch.no_grad():
        tensor.mul_(-1.5).add_(0.25)


def _grad_output(output: torch.Tensor, seed: int) -> torch.Tensor:
    generator = torch.Generator().manual_seed(seed)
    return (0.5 + torch.rand(output.shape, dtype=torch.float64, generator=generator)
            ).to(output)


def _close(got, want: torch.Tensor) -> bool:
    return (isinstance(got, torch.Tensor) and got.shape == want.shape
            and torch.allclose(got.detach().to(torch.float64), want.to(torch.float64)))


def check_second_call_after_step(function, spec: Spec, values: dict, later: dict | None = None
                                 ) -> None:
    """Forward and backward on ``values``; then each input that requires grad changed in place
    under torch.no_grad() (an optimizer step), ``later`` replacing the non-tensor inputs (other
    weights), and forward and backward again on the same tensor objects. The second call's
    output and gradients must be those of the new values: one equal to the old values' (or to
    old tensors with new constants, or new tensors with old constants) came from a cache keyed
    by the tensor, named so; any other wrong one is named as right once, wrong after a step."""
    inputs = make_inputs(values)
    first = run_forward(function, spec, inputs)
    run_backward(spec, first.output, inputs, _grad_output(first.output, 21))
    old = {n: v.detach().clone() if isinstance(v, torch.Tensor) else v for n, v in inputs.items()}
    stepped = [n for n, v in inputs.items() if isinstance(v, torch.Tensor) and v.requires_grad]
    for name in stepped:
        _step(inputs[name])
    now = {**inputs, **(later or {})}
    second = run_forward(function, spec, now)
    grad_output = _grad_output(second.output, 22)
    grads = dict(zip(now, run_backward(spec, second.output, now, grad_output).grads))
    stale = [{**old, **(later or {})}, {**now, **{n: old[n] for n in (later or {})}}, old]
    stale = [make_inputs(s, requires_grad=set(stepped)) for s in stale]
    names = " and ".join(stepped)
    what = (f"{spec.name}'s second call on the same tensor{'s' if len(stepped) > 1 else ''} "
            f"{names}, after {names} changed in place under torch.no_grad() (as an optimizer "
            "step changes a weight)" + (", with other " + " and ".join(later) if later else ""))
    remedy = ("something kept between calls under a key the tensor gives (x.data_ptr(), id(x)) "
              "survives an in-place change; compute from this call's inputs, and keep what "
              "backward needs on ctx, one per call, never in a cache shared by calls")
    with torch.no_grad():
        expected = spec.reference(**now)
    wrong = None  # (what is wrong, whether it is what the old values give)
    if not _close(second.output, expected):
        wrong = ("the output", any(_close(second.output, spec.reference(**s)) for s in stale))
    else:
        truth = reference_gradients(spec, make_inputs(now, requires_grad=set(stepped)),
                                    grad_output)
        for name in stepped:
            if not _close(grads[name], truth[name]):
                wrong = (f"grad_{name}", any(
                    _close(grads[name], reference_gradients(spec, s, grad_output)[name])
                    for s in stale))
                break
    if wrong is None:
        return
    if wrong[1]:
        raise GradingError(f"{what}, returned {wrong[0]} of the old values: {remedy} "
                           f"{rule_reference('ctx')}",
                           mistake=f"{spec.name}/cache-keyed-by-input")
    raise GradingError(f"{what}, returned a wrong {wrong[0]}, right on the first call: {remedy} "
                       f"{rule_reference('ctx')}",
                       mistake=f"{spec.name}/wrong-after-in-place-step")
