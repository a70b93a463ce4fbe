"""Probes for SortWithIndices's backward that its values alone cannot name: a gradient right on
the same shape without ties (so a wrong one is about ties), and a gradient whose rows all received
every row's gradients (the last dimension indexed with the whole tensor of indices at once)."""

import torch

from .in_place import noise


def right_without_ties(function, x: torch.Tensor) -> bool:
    """The probe behind the ties hint: the same Function is right on x's shape without ties."""
    plain = torch.randperm(x.numel(), generator=torch.Generator().manual_seed(5))
    leaf = plain.reshape(x.shape).to(dtype=x.dtype, device=x.device).requires_grad_()
    try:
        values, indices = function.apply(leaf)
        g = noise(values, 11)
        grad, = torch.autograd.grad(values, leaf, g)
    except Exception:  # the learner's code may raise anything: then it is not only ties
        return False
    expected = torch.zeros_like(g).scatter(-1, torch.sort(leaf.detach(), -1).indices, g)
    return grad.shape == expected.shape and bool(torch.allclose(grad, expected))


def every_row_indexed(grad: torch.Tensor, indices: torch.Tensor, g: torch.Tensor) -> bool:
    """The probe behind the whole-index hint: two rows or more, all of grad's rows the same, and
    each entry one of the gradients that some row's indices send to its position, which is what
    ``grad_x[..., indices] = grad_values`` (or a loop of such writes over j) leaves."""
    if grad.dim() < 2 or grad.shape != indices.shape or grad.shape[:-1].numel() < 2:
        return False
    n = grad.shape[-1]
    rows = grad.detach().reshape(-1, n)
    if not torch.equal(rows, rows[:1].expand_as(rows)):
        return False
    # sent[a, p]: the gradient row a's indices send to position p
    sent = g.reshape(-1, n).gather(-1, torch.argsort(indices.reshape(-1, n), dim=-1))
    return bool((rows[0] == sent).any(0).all())
