"""Lesson 06: backward run twice on one graph, as gradcheck and ``retain_graph=True`` do. A
backward that changes a tensor it saved, in place (``P.mul_(...)`` to build dS on the saved
P), passes every single backward and raises on the second: the saved tensor's version counter
has moved, and torch's message names only its shape."""

import torch

from ..checks import case, make_inputs
from ..errors import GradingError

INPLACE = "modified by an inplace operation"


def check_backward_twice(function, spec, values: dict, where: str) -> None:
    """Forward once, backward twice with ``retain_graph=True``; the first must be fine for the
    second's in-place error to be named (then only a backward wrote on what forward saved)."""
    inputs = make_inputs(values)
    with case(f"{where}, backward run twice on one graph (retain_graph=True)"):
        output = function.apply(*inputs.values())  # no probe's saved-tensor hooks: they
        # would keep copies, which no in-place change reaches
        grad_output = torch.ones_like(output)
        wanted = [v for v in inputs.values() if isinstance(v, torch.Tensor) and v.requires_grad]
        try:
            torch.autograd.grad(output, wanted, grad_output, retain_graph=True)
        except Exception:  # the learner's code may raise anything: other checks name it
            return
        try:
            torch.autograd.grad(output, wanted, grad_output, retain_graph=True)
        except RuntimeError as error:
            if INPLACE not in str(error):
                raise
            raise GradingError(
                f"{spec.name}.backward changes a tensor that forward saved, in place: the first "
                "backward ran, and a second on the same graph found the saved tensor modified "
                "(torch: 'one of the variables needed for gradient computation has been "
                "modified by an inplace operation'). gradcheck, and retain_graph=True, run "
                "backward more than once on one graph: build new tensors from the saved ones "
                "(x * y, not x.mul_(y))", str(error),
                mistake=f"{spec.name}/backward-modifies-saved-tensor") from error
