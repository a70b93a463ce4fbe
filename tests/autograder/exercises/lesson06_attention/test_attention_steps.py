"""lesson06_attention.attention_steps: the backward-by-tiles check lesson 06 runs out of the
learner's sight."""

import pytest
import torch

from autograder.exercises.lesson06_attention.attention_steps import row_sum_is_right, tile_errors

pytestmark = pytest.mark.lesson06


def _row_sum(dO, O):
    return (dO * O).sum(-1)


def _tile(q, k, v, do, L, D, scale):
    p = torch.exp((q @ k.T) * scale - L.unsqueeze(-1))
    ds = p * (do @ v.T - D.unsqueeze(-1))
    return scale * ds @ k, scale * ds.T @ q, p.T @ do


def test_row_sum_check_accepts_rowsum_of_dO_times_O_only():
    """Is rowsum(dO * O) right, and are zeros, a sum over the wrong dimension and an error
    not?"""
    assert row_sum_is_right(_row_sum)
    assert not row_sum_is_right(lambda dO, O: torch.zeros(dO.shape[:-1], dtype=dO.dtype))
    assert not row_sum_is_right(lambda dO, O: (dO * O).sum(0))

    def raises(dO, O):
        raise NotImplementedError

    assert not row_sum_is_right(raises)


def test_tiles_add_up_to_autograd_and_a_tile_local_row_sum_does_not():
    """Do a right tile's contributions, added block by block, give autograd's dQ, dK, dV, and
    does a row sum taken over the tile's own keys give wrong dQ and dK (dV still right)?"""
    assert max(tile_errors(_tile, _row_sum)) < 1e-12

    def tile_row_sum(q, k, v, do, L, D, scale):
        p = torch.exp((q @ k.T) * scale - L.unsqueeze(-1))
        dp = do @ v.T
        ds = p * (dp - (dp * p).sum(-1, keepdim=True))
        return scale * ds @ k, scale * ds.T @ q, p.T @ do

    errors = tile_errors(tile_row_sum, _row_sum)
    assert errors[0] > 1e-3 and errors[1] > 1e-3 and errors[2] < 1e-12
