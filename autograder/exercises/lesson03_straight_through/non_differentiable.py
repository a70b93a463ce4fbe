"""Lesson 03: an output marked non-differentiable. A straight-through estimator's output is
the quantiser's, whose true derivative is zero or undefined, so ``ctx.mark_non_differentiable``
can look right; but then autograd records no graph through the output, backward never runs, and
the grader's own request for a gradient fails as if backward had asked autograd for one. The
probe records the call, so the first line names it."""

import torch

from ...checks import make_inputs
from ...errors import GradingError
from ...probes import record_ctx_calls


def check_output_differentiable(function, spec, values: dict) -> None:
    """Call ``function`` once on ``values`` (every tensor input requiring grad) and name an
    output that forward passed to ``ctx.mark_non_differentiable``; return quietly otherwise,
    or when the call raises (the battery names that error, with its inputs)."""
    inputs = make_inputs(values)
    try:
        with record_ctx_calls() as calls:
            output = function.apply(*inputs.values())
    except Exception:  # noqa: BLE001 - the battery's own call names it
        return
    marked = [t for method, args in calls if method == "mark_non_differentiable" for t in args]
    outputs = output if isinstance(output, tuple) else (output,)
    if not any(isinstance(o, torch.Tensor) and not o.requires_grad
               and any(o is t for t in marked) for o in outputs):
        return
    wanted = [n for n, v in inputs.items() if isinstance(v, torch.Tensor) and v.requires_grad]
    raise GradingError(
        f"{spec.name}.forward passes its output to ctx.mark_non_differentiable, so autograd "
        f"records no graph through it: backward is never called and "
        f"{' and '.join(wanted)} get{'s' if len(wanted) == 1 else ''} no gradient; the "
        "surrogate gradient flows through that output, so leave it differentiable (drop the "
        "call)", mistake=f"{spec.name}/output-marked-non-differentiable")
