"""A saved output must be the output itself: autograd links a saved output back to the node
that made it, so a second derivative goes through it; an alias (y.detach(), a view of y) is a
tensor of its own, cut from the graph, though it costs no memory."""

import torch

from .errors import GradingError


def check_output_itself(name: str, forward) -> None:
    """A saved tensor in the output's memory must be the output y itself, the tensor forward
    returns: y.detach(), a view or reshape of y, or y where forward returns a view of it, costs
    no memory but is saved as a tensor of its own, cut from the graph (autograd links a saved
    output back to its node: a second derivative goes through it). ``forward``: its ``saved``
    and its ``output``. Judged where the saved tensors are read as saved: not under another
    saved-tensor hook (the battery's trace reads them through its own), which unpacks them
    detached."""
    node = getattr(getattr(forward, "output", None), "grad_fn", None)
    if node is None or torch._C._autograd._top_saved_tensors_default_hooks(False) is not None:
        return
    for saved in forward.saved:
        if saved.role == "output" and saved.tensor.grad_fn is not node:
            raise GradingError(
                f"{name} saved an alias of its output y, not y itself (y.detach(), a view or "
                "reshape of y, or y where forward returns a view of it): save_for_backward the "
                "very tensor forward returns; an alias is saved as a tensor of its own, cut "
                "from the graph, so a second derivative (lesson 04) cannot go through it",
                mistake=f"{name}/saves-output-alias")
