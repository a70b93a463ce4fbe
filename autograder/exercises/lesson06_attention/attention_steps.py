"""Lesson 06's live check of the backward by tiles, kept out of the notebook: adding each
tile's contributions into the blocks of dQ, dK and dV they belong to is question 3 of
"Derive: the backward by tiles", so the code that does it would answer it."""

import torch

SCALE, BLOCK = 0.5, 8


def _problem() -> tuple:
    """16 queries and 16 keys, d = 4, float64: Q, K, V, dO, the output O and autograd's
    dQ, dK, dV."""
    generator = torch.Generator().manual_seed(6)
    Q, K, V, dO = (torch.randn(16, 4, dtype=torch.float64, generator=generator)
                   for _ in range(4))
    leaves = [t.clone().requires_grad_() for t in (Q, K, V)]
    O = torch.softmax((leaves[0] @ leaves[1].T) * SCALE, dim=-1) @ leaves[2]
    return Q, K, V, dO, O.detach(), torch.autograd.grad(O, leaves, dO)


def row_sum_is_right(my_row_sum) -> bool:
    """Does ``my_row_sum(dO, O)`` give rowsum(dP * P) on the tiles' problem? D is built from
    it, so a wrong D is told apart from a wrong ``tile_backward``."""
    Q, K, V, dO, O, _ = _problem()
    P = torch.softmax((Q @ K.T) * SCALE, dim=-1)
    try:
        return bool(torch.allclose(my_row_sum(dO, O), ((dO @ V.T) * P).sum(-1)))
    except Exception:  # the learner's code may raise anything: its own check shows it
        return False


def tile_errors(tile_backward, my_row_sum) -> list[float]:
    """The largest errors of dQ, dK and dV against autograd when the contributions of
    ``tile_backward(q, k, v, do, L, D, scale)`` for each tile of a 2 x 2 tiling in blocks of 8
    are added into the blocks they belong to, with L = logsumexp of the scores and
    D = ``my_row_sum(dO, O)``."""
    Q, K, V, dO, O, truth = _problem()
    L, D = torch.logsumexp((Q @ K.T) * SCALE, dim=-1), my_row_sum(dO, O)
    tiled = [torch.zeros_like(t) for t in (Q, K, V)]
    for i in range(0, 16, BLOCK):
        rows = slice(i, i + BLOCK)
        for j in range(0, 16, BLOCK):
            keys = slice(j, j + BLOCK)
            dq, dk, dv = tile_backward(Q[rows], K[keys], V[keys], dO[rows], L[rows], D[rows],
                                       SCALE)
            tiled[0][rows] += dq  # query block i's rows
            tiled[1][keys] += dk  # key block j's rows
            tiled[2][keys] += dv
    return [(mine - true).abs().max().item() for mine, true in zip(tiled, truth)]
