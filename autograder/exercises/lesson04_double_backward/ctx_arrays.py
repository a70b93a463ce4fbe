"""Lesson 04: what a NumPy answer keeps besides save_for_backward. A NumPy array on ctx is a
tensor autograd cannot see: saved-tensor hooks never reach it, and a view of x (``.numpy()``)
follows an in-place change of x that the version counter would have refused."""

import numpy as np
import torch

from ...checks import Spec
from ...errors import GradingError
from ...probes import ForwardTrace


def check_no_ctx_arrays(spec: Spec, forward: ForwardTrace) -> None:
    """No NumPy array kept as a ctx attribute, of x or computed from it: the contract keeps what
    backward needs only with save_for_backward."""
    for name, value in forward.ctx_attributes.items():
        if isinstance(value, np.ndarray):
            raise GradingError(
                f"{spec.name} keeps a NumPy array as ctx.{name}: the contract keeps what "
                "backward needs only with ctx.save_for_backward, and an array on ctx is outside "
                "autograd's view: saved-tensor hooks (lesson 05) never see it, and one that "
                "shares x's memory (.numpy()) follows an in-place write into x that the version "
                "counter would have refused; which tensor that forward already has could "
                "it save in the array's place?",
                mistake=f"{spec.name}/array-on-ctx")


def check_saves_output_itself(spec: Spec, forward: ForwardTrace, x: torch.Tensor) -> None:
    """In float32, nothing saved wider than x whose values, rounded to x's dtype, are the
    output's: that is the output before its cast, which the graph does not link to x."""
    output = forward.output
    for saved in forward.saved:
        if (saved.role == "intermediate" and saved.dtype.is_floating_point
                and torch.finfo(saved.dtype).bits > torch.finfo(x.dtype).bits
                and saved.shape == tuple(output.shape)
                and torch.equal(saved.tensor.detach().to(x.dtype), output.detach())):
            raise GradingError(
                f"{spec.name}'s forward saved the output as {str(saved.dtype)[6:]} before its "
                f"cast to x's {str(x.dtype)[6:]}: that tensor is not the output autograd links "
                "to x, so the second derivative through it is wrong in float32; compute in the "
                "wider dtype if you like, but save the tensor you return",
                mistake=f"{spec.name}/saves-wider-output")


def named_empty_pop(spec: Spec, checks) -> None:
    """Run ``checks``; a list popped empty (a stack forward fills and backward empties, in a
    global or on the class) is named as the state shared between calls it is."""
    try:
        checks()
    except IndexError as error:
        if "pop from empty list" not in str(error):
            raise
        raise GradingError(
            f"{spec.name}'s backward popped from an empty list (\"{error}\"): a list that forward "
            "fills and backward empties, in a global or on the class, is state shared between "
            "calls, and it runs dry when backward runs more often than forward, as a second "
            f"derivative runs {spec.name}'s backward again for the path through y; take what "
            "backward needs from ctx.saved_tensors, one set per call", str(error),
            mistake=f"{spec.name}/stack-popped-empty") from error
