"""Lesson 06: FlashAttention's blocks, counted in rows: the contract's query blocks and key
blocks of at most BLOCK rows, which an element budget alone does not see (1 query x BLOCK^2
keys, or BLOCK/2 x 2 BLOCK, is a tile of BLOCK x BLOCK elements), and the online softmax where
a key length beyond BLOCK^2 holds the row's maximum in a later key block.

The rows are counted on the score products themselves, with ``ScoreTiles``'s fingerprinted
Q and K: whatever slicing, einsum or view made a product, its factors name its queries and
keys."""

import torch

from ...checks import case, make_inputs, run_forward
from ...errors import GradingError
from .flash_probes import NAME, ScoreTiles, block_size, flash_values, tagged_values
from .flash_spec import FLASH, describe, flash_backward as _backward

_LQ, _LK, _D, _BLOCK = 10, 13, 5, 4  # d = 5 is no block's size: no other product is noted


def check_block_rows(function, device, *, small_tiles_only: bool) -> None:
    """Every score tile, forward and backward, causal or not, of at most BLOCK queries and at
    most BLOCK keys. ``small_tiles_only``: report only tiles of at most BLOCK x BLOCK
    elements (the memory checks, which run later, name the bigger ones in their own words)."""
    for causal in (False, True):
        values = tagged_values((2,), _LQ, _LK, _D, 3, device, causal=causal, seed=91)
        inputs = make_inputs(values)
        with block_size(function, _BLOCK), case(describe(values, _BLOCK)):
            with ScoreTiles(_LQ, _LK, _D) as tiles:
                output = run_forward(function, FLASH, inputs).output
                tiles.phase = "backward"
                _backward(output, inputs, torch.ones_like(output))
            for phase in ("forward", "backward"):
                _report(tiles.computed.get(phase, []), phase, small_tiles_only)


def _report(computed: list, phase: str, small_tiles_only: bool) -> None:
    for queries, keys in computed:
        rows, cols = len(queries), len(keys)
        if rows <= _BLOCK and cols <= _BLOCK:
            continue
        if small_tiles_only and rows * cols > _BLOCK * _BLOCK:
            continue
        which = " and ".join(name for name, n in (("query", rows), ("key", cols))
                             if n > _BLOCK)
        raise GradingError(
            f"{NAME}'s {phase} uses {which} blocks of more than BLOCK rows: a tile of scores "
            f"for {rows} {'query' if rows == 1 else 'queries'} against {cols} keys at BLOCK={_BLOCK} (queries "
            f"{min(queries)}..{max(queries)}, keys {min(keys)}..{max(keys)}); the contract's "
            "query blocks and key blocks have at most BLOCK rows each, so that a tile is at "
            "most BLOCK x BLOCK in both directions, not only in its number of elements (1 "
            "query against BLOCK^2 keys has as many): slice Q and K by FlashAttention.BLOCK "
            "rows alike", mistake=f"{NAME}/blocks-of-more-than-block-rows")


def later_maximum_values(device) -> dict:
    """BLOCK 2, 3 queries against 12 keys (more than BLOCK^2 = 4): the keys' scores grow
    block after block, so each row's maximum lies in the last key blocks and every later
    block rescales what was summed before it."""
    values = flash_values((2,), 3, 12, 3, 2, device, seed=92)
    Q, K = values["Q"].clone(), values["K"].clone()
    Q[..., 0] = 1.0  # scores gain K[j, 0] * scale = j * scale: the last keys' are largest
    K[..., 0] = torch.arange(12, dtype=K.dtype, device=device)
    return {**values, "Q": Q, "K": K}
