"""Lesson 10's probe for a saved tensor that is the output: a forward that writes the weight and
bias into the x_hat it saves (in place, to spare a tensor) hands backward weight * x_hat + bias
where backward needs x_hat. Named only where both show: a saved tensor shares the output's
memory, and the gradients are the ones the right formula gives with x_hat replaced by the
output."""

import torch

from ...checks import Spec, make_inputs
from ...errors import GradingError
from .norm_checks import row_statistics


def _storage(tensor) -> int | None:
    if not isinstance(tensor, torch.Tensor) or not tensor.numel():
        return None
    return tensor.untyped_storage().data_ptr()


def recognise_saved_output(function, spec: Spec, values: dict, *, centred: bool) -> None:
    """Name backward reading the output as x_hat, when a probe proves it (see the module)."""
    if values.get("weight") is None and values.get("bias") is None:
        return  # the output is x_hat: nothing to tell apart
    inputs = make_inputs(values)
    try:
        output = function.apply(*inputs.values())
        saved = output.grad_fn.saved_tensors
    except Exception:  # the learner's code may raise anything: the first hint stands
        return
    if not isinstance(output, torch.Tensor) or output.shape != values["x"].shape or \
            _storage(output) not in {_storage(t) for t in saved}:
        return
    generator = torch.Generator().manual_seed(7)
    x = values["x"]
    grad_output = torch.randn(x.shape, generator=generator, dtype=x.dtype).to(x.device)
    wanted = {n: v for n, v in inputs.items() if isinstance(v, torch.Tensor) and v.requires_grad}
    try:
        grads = dict(zip(wanted, torch.autograd.grad(output, list(wanted.values()), grad_output,
                                                     allow_unused=True)))
    except Exception:  # the learner's code may raise anything: the first hint stands
        return
    # the right formulas with x_hat replaced by what was saved: the output
    _, rstd, _ = row_statistics(x, values["eps"], centred)
    as_x_hat = output.detach().double()
    g_out = grad_output.double()
    weight = values["weight"]
    g = g_out * (weight.double() if weight is not None else 1)
    candidate = {"x": rstd * (g - (g.mean(-1, keepdim=True) if centred else 0)
                              - as_x_hat * (g * as_x_hat).mean(-1, keepdim=True))}
    if weight is not None:
        candidate["weight"] = (g_out * as_x_hat).reshape(-1, x.shape[-1]).sum(0)
    shown = [name for name, want in candidate.items()
             if isinstance(grads.get(name), torch.Tensor) and grads[name].shape == want.shape
             and torch.allclose(grads[name].double(), want, rtol=1e-6, atol=1e-9)]
    if shown:
        what = " and ".join(f"grad_{name}" for name in shown)
        verb = "are" if len(shown) > 1 else "is"
        affine, output_is = (("the weight and bias", "weight * x_hat + bias") if centred
                             else ("the weight", "weight * x_hat"))
        raise GradingError(
            f"{spec.name}'s backward reads the output where it needs x_hat: a tensor forward "
            f"saved shares the output's memory ({affine} written into the saved x_hat in "
            f"place), and {what} {verb} what your formula gives with x_hat replaced by "
            f"{output_is}; give the output a tensor of its own",
            mistake=f"{spec.name}/saved-x-hat-written-in-place")
