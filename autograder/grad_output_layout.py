"""Backward handed a grad_output that is not contiguous, as autograd hands one over whenever the
graph downstream makes it so: ``(y.t() * w).sum()`` or ``.backward(g.t())`` gives a transposed
one, ``y.sum()`` an expanded one. A backward that flattens it with ``.view(-1)``, or reads its
memory as if it were laid out like the output, raises or is wrong there, and nowhere else."""

import torch

from .checks import check_untouched, run_forward
from .comparison import floating_outputs, fresh_leaves, input_gradients, reference_outputs
from .diagnose import diagnose_gradient
from .domain import TOLERANCES, Domain
from .errors import GradingError
from .precision import precision_findings_now


def strided_like(output: torch.Tensor, generator: torch.Generator):
    """(a grad_output of ``output``'s shape, dtype and device that is not contiguous, how it is
    laid out), or None for a 0-d output (one layout only): the last two dims transposed where
    ``output`` has two or more, else every other element of a tensor twice as long."""
    shape = tuple(output.shape)
    if not shape:
        return None

    def drawn(size):  # drawn in float64, then the output's dtype: the values are the same
        return torch.randn(size, generator=generator, dtype=torch.float64).to(
            dtype=output.dtype, device=output.device)

    if len(shape) >= 2:
        grad_output = drawn((*shape[:-2], shape[-1], shape[-2])).mT
        return grad_output, (f"transposed (shape {shape}, strides {grad_output.stride()}: .mT of "
                             "a contiguous tensor)")
    grad_output = drawn((2 * shape[0],))[::2]
    return grad_output, (f"a stride-2 slice (shape {shape}, strides {grad_output.stride()}: "
                         "every other element of a longer tensor)")


def check_grad_output_layout(domain: Domain, function, device) -> None:
    """One call at the domain's typical inputs, each differentiable output's grad_output not
    contiguous (``strided_like``): the gradients are the reference's for the same grad_output,
    and grad_output is left as it was. Where every output is 0-d there is nothing to lay out."""
    spec = domain.spec
    values = domain.values(device)
    inputs = fresh_leaves(values)
    dtype = next((v.dtype for v in inputs.values()
                  if isinstance(v, torch.Tensor) and v.is_floating_point()), torch.float64)
    tolerance = domain.tolerances.get(dtype) or TOLERANCES[dtype]
    forward = run_forward(function, spec, inputs)
    outputs = floating_outputs(forward.output)
    expected, fresh = reference_outputs(domain, inputs)
    if len(outputs) != len(expected):
        return  # the other checks name a wrong number of outputs
    pairs = [(o, e) for o, e in zip(outputs, expected) if o.requires_grad]
    generator = torch.Generator().manual_seed(7)
    laid_out = [strided_like(o, generator) for o, _ in pairs]
    if not pairs or all(laid is None for laid in laid_out):
        return
    given = [laid[0] if laid is not None else torch.randn(
        o.shape, generator=generator, dtype=torch.float64).to(o)
        for (o, _), laid in zip(pairs, laid_out)]
    how = next(laid[1] for laid in laid_out if laid is not None)
    short = how.split(" (")[0]
    wanted = [n for n, v in fresh.items() if isinstance(v, torch.Tensor) and v.requires_grad]
    truths = torch.autograd.grad([e for _, e in pairs], [fresh[n] for n in wanted],
                                 [g.detach().to(torch.float64).contiguous() for g in given],
                                 allow_unused=True)
    pristine = [(g.clone(), g._version) for g in given]

    def gradients(grad_outputs, leaves) -> dict:
        """The learner's gradients for ``grad_outputs`` at ``leaves``, each checked against
        the truth (the diagnosis raised as it is)."""
        forward_here = run_forward(function, spec, leaves)
        here = [o for o in floating_outputs(forward_here.output) if o.requires_grad]
        grads = input_gradients(domain, forward_here.output, here, leaves, grad_outputs)
        for name, truth in zip(wanted, truths):
            truth = truth if truth is not None else torch.zeros_like(fresh[name])
            got = grads[name]
            diagnose_gradient(name, got.to(torch.float64) if isinstance(got, torch.Tensor)
                              else got, truth, rtol=tolerance.rtol, atol=tolerance.atol,
                              inputs=leaves, computed_in=leaves[name].dtype,
                              exercise_name=spec.name)
        return grads

    def blamed(error: GradingError, what: str) -> GradingError:
        """The layout blamed only when a probe confirms it: the same call with the same values
        of grad_output, laid out contiguous, passes. Where that fails too the fault is not the
        layout (a float32 step, a wrong formula), and its own diagnosis is raised."""
        try:
            with precision_findings_now():  # a float32 step found here is no layout's fault
                gradients([g.contiguous() for g in given], fresh_leaves(values))
        except GradingError as dense_error:
            return dense_error
        return GradingError(
            f"{spec.name}.backward assumes a contiguous grad_output: it {what} when grad_output "
            f"was {short} ({error.hint.rstrip('.')}); autograd hands backward a grad_output "
            "laid out as the graph downstream leaves it (y.t() there gives a transposed one, "
            "y.sum() an expanded one): which op of your backward reads grad_output by its "
            "memory rather than its shape?",
            error.details, f"a grad_output {how}",
            mistake=f"{spec.name}/assumes-contiguous-grad-output")

    try:
        grads = input_gradients(domain, forward.output, [o for o, _ in pairs], inputs, given)
    except GradingError as error:
        raise blamed(error, "raised") from error
    for grad_output, (copy, version) in zip(given, pristine):
        check_untouched(spec, grad_output, copy, version)
    for name, truth in zip(wanted, truths):
        truth = truth if truth is not None else torch.zeros_like(fresh[name])
        got = grads[name]
        try:
            diagnose_gradient(name, got.to(torch.float64) if isinstance(got, torch.Tensor)
                              else got, truth, rtol=tolerance.rtol, atol=tolerance.atol,
                              inputs=inputs, computed_in=inputs[name].dtype,
                              exercise_name=spec.name)
        except GradingError as error:
            raise blamed(error, "was wrong") from error
