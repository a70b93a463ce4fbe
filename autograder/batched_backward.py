"""A probe run before gradcheck's ``check_batched_grad=True``: that check runs backward under
torch's legacy vmap (``torch._vmap_internals``), where a ``.data`` read of a batched tensor
kills the process (a segfault on torch 2.13, the learner's kernel with it) instead of raising.
``torch.func.vmap`` runs the same backward over the same batch of grad_outputs and raises a
RuntimeError instead, which the probe turns into a message."""

import torch

from .errors import GradingError


def check_backward_batches(name: str, apply, inputs: tuple) -> None:
    """Run backward of ``apply(*inputs)`` under torch.func.vmap over two grad_outputs; raise
    a GradingError where it reads ``.data`` of a batched tensor (grad_output or one computed
    from it). Any other error is left to gradcheck, which reports it itself."""
    inputs = tuple(t.detach().clone().requires_grad_() if isinstance(t, torch.Tensor)
                   and t.is_floating_point() else t for t in inputs)
    wanted = [t for t in inputs if isinstance(t, torch.Tensor) and t.requires_grad]
    try:
        out = apply(*inputs)
        vectors = torch.stack([torch.ones_like(out), -torch.ones_like(out)])
        torch.func.vmap(lambda v: torch.autograd.grad(out, wanted, v, retain_graph=True,
                                                      allow_unused=True))(vectors)
    except RuntimeError as error:
        if "`data` under vmap" in str(error):
            raise GradingError(
                f"{name}'s backward reads .data of grad_output, or of a tensor computed from "
                "it: under torch.vmap over backward (gradcheck's check_batched_grad=True, "
                "per-sample gradients) such a tensor holds a whole batch, and torch.func.vmap "
                "refuses .data on it; .data also cuts grad_output from the graph, as "
                ".detach() does", str(error)) from error
    except Exception:  # noqa: BLE001 - gradcheck runs the same backward and reports it
        return
