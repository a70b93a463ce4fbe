"""Lesson 11, linear_cross_entropy: a slip of the chunk loop that only the gradients show,
recognised after a gradient check failed (``fused_loss_work.naming_chunk_means`` asks)."""

import torch
import torch.nn.functional as F

from ...checks import make_inputs

NAME = "linear_cross_entropy"


def recognise_chunk_rows(function, values: dict) -> str | None:
    """Each chunk's G = (P - Y) divided by the chunk's own row count instead of N: the loss
    right, each chunk's gradient N / rows times too large (the short last chunk's most)."""
    x, weight, target, chunk = (values[n] for n in ("x", "weight", "target", "chunk_size"))
    N = len(target)
    if chunk >= N:  # one chunk: its rows are N
        return None
    inputs = make_inputs(values)
    try:
        loss = function.apply(*inputs.values())
        got = torch.autograd.grad(loss, (inputs["x"], inputs["weight"]))
    except Exception:  # the learner's code may raise anything: the first hint stands
        return None
    wide = [t.detach().double().requires_grad_() for t in (x, weight)]
    slip = sum(F.cross_entropy(wide[0][s:s + chunk] @ wide[1].T, target[s:s + chunk])
               for s in range(0, N, chunk))
    want = torch.autograd.grad(slip, wide)
    rtol = 1e-2 if x.dtype.itemsize < 4 else 1e-5
    if not all(torch.allclose(g.double(), w, rtol=rtol, atol=rtol * w.abs().max().item())
               for g, w in zip(got, want)):
        return None
    last = N % chunk or chunk
    factors = (f"{N / chunk:.4g} for a chunk of {chunk} rows, {N / last:.4g} for the last one "
               f"of {last}" if last != chunk else f"{N / chunk:.4g} for every chunk")
    return (f"{NAME} divides each chunk's G = P - Y by that chunk's own rows instead of by "
            f"N={N}: the loss is right, but each chunk's gradient is N / rows times too large "
            f"({factors}, chunk_size={chunk}); which count does the loss divide by, and so "
            "each row's share of its gradient?")
