"""Probes for FlashAttention's contract that its values cannot show: which score tiles it
computes under ``causal``, and whether a wrong causal output is ``is_causal``'s top-left mask
(the magnitude probes are in ``flash_magnitude``, the accumulators' in ``flash_accumulation``).

``ScoreTiles`` watches every matrix product whose inner size is ``d``: with ``tagged_values``
each row of Q and of K carries a fingerprint (the ratio of its second entry to its first, which
scaling and casting keep), so a product's factors name the queries and keys of the tile it
computes, whatever loops, views or einsums produced it.
"""

from contextlib import contextmanager

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from ...errors import GradingError
from ...exercise import sample
from .attention import attention_reference
from .attention_inputs import attention_values

NAME = "FlashAttention"

# matrix products and where their two factors sit among the op's arguments
_MATMULS = {"mm": 0, "bmm": 0, "addmm": 1, "baddbmm": 1}
_QUERY, _KEY = (0.5, 1.5), (-1.5, -0.5)  # fingerprint ranges of Q's and K's rows


def _tags(length: int, low: float, high: float, dtype, device) -> torch.Tensor:
    return (low + (high - low) * (torch.arange(length, dtype=torch.float64) + 0.5) / length
            ).to(dtype=dtype, device=device)


def tagged_values(lead, Lq: int, Lk: int, d: int, dv: int, device, *, causal: bool,
                  seed: int = 0) -> dict:
    """Q and K whose rows carry their own index: entry 0 is 1, entry 1 is the fingerprint."""
    Q = sample((*lead, Lq, d), device, seed=seed)
    K = sample((*lead, Lk, d), device, seed=seed + 1)
    Q[..., 0], K[..., 0] = 1.0, 1.0
    Q[..., 1] = _tags(Lq, *_QUERY, Q.dtype, device)
    K[..., 1] = _tags(Lk, *_KEY, K.dtype, device)
    return {"Q": Q, "K": K, "V": sample((*lead, Lk, dv), device, seed=seed + 2),
            "scale": d ** -0.5, "causal": causal}


def _indices(vectors: torch.Tensor, length: int, low: float, high: float) -> set[int]:
    """The row indices whose fingerprints ``vectors`` (n, d) carry, from one range."""
    first, second = vectors[:, 0].double(), vectors[:, 1].double()
    ratio = second / first
    position = (ratio - low) / (high - low) * length - 0.5
    index = position.round()
    found = (first != 0) & ((position - index).abs() < 0.05) & (index >= 0) & (index < length)
    return set(index[found].long().tolist())


class ScoreTiles(TorchDispatchMode):
    """``with ScoreTiles(Lq, Lk, d) as tiles:`` then ``tiles.computed[phase]``: (queries, keys)
    of every score product. ``tiles.phase = name`` starts a phase."""

    def __init__(self, Lq: int, Lk: int, d: int):
        super().__init__()
        self.Lq, self.Lk, self.d = Lq, Lk, d
        self.phase = "forward"
        self.computed: dict[str, list[tuple[set, set]]] = {}

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        position = _MATMULS.get(func.overloadpacket.__name__)
        if position is not None:
            a, b = args[position], args[position + 1]
            if a.shape[-1] == self.d and b.shape[-2] == self.d:
                self._note(a.reshape(-1, self.d), b.transpose(-2, -1).reshape(-1, self.d))
        return func(*args, **(kwargs or {}))

    def _note(self, rows: torch.Tensor, cols: torch.Tensor) -> None:
        vectors = torch.cat([rows, cols])
        queries = _indices(vectors, self.Lq, *_QUERY)
        keys = _indices(vectors, self.Lk, *_KEY)
        if queries and keys:
            self.computed.setdefault(self.phase, []).append((queries, keys))

    def above_diagonal(self, phase: str) -> list[tuple[set, set]]:
        """The tiles computed in ``phase`` whose every key lies after every query's last
        visible key (query i sees keys j <= i + Lk - Lq)."""
        return [(q, k) for q, k in self.computed.get(phase, [])
                if min(k) > max(q) + self.Lk - self.Lq]


def recognise_masked_first_tile(function, values: dict) -> str | None:
    """The hint when an output is nan under causal and finite without it: some row met a
    tile in which it sees no key before any tile in which it does."""
    if not values["causal"]:
        return None
    with torch.no_grad():
        masked = function.apply(*values.values())
        free = function.apply(*dict(values, causal=False).values())
    if not (isinstance(masked, torch.Tensor) and isinstance(free, torch.Tensor)):
        return None
    Q, K = values["Q"], values["K"]
    Lq, Lk = Q.shape[-2], K.shape[-2]
    mask = torch.ones(Lq, Lk, dtype=torch.bool, device=Q.device).tril(Lk - Lq)
    expected = attention_reference(Q, K, values["V"], values["scale"], mask)
    finite = torch.isfinite(masked)
    rows_right = masked.shape == expected.shape and torch.allclose(
        masked[finite], expected[finite], rtol=1e-5, atol=1e-7)  # only the nan rows are wrong
    if torch.isnan(masked).any() and torch.isfinite(free).all() and rows_right:
        return ("FlashAttention's output is nan under causal only: when the first tile a row "
                "meets hides all of its keys, its scores there are all -inf, m_new = -inf and "
                "exp(m - m_new) = exp(-inf + inf) = nan; visit key blocks from key 0 (which every "
                "query sees), or treat m_new = -inf as 0 in the exponent")
    return None


@contextmanager
def block_size(function, block: int):
    """Run with ``function.BLOCK = block``, restored afterwards."""
    if not isinstance(getattr(function, "BLOCK", None), int):
        raise GradingError(f"{NAME} needs a class attribute BLOCK = 64 (an int): the grader "
                           "sets it to smaller sizes to test tiling, so read the block size "
                           f"as {NAME}.BLOCK")
    own, old = "BLOCK" in vars(function), function.BLOCK
    function.BLOCK = block
    try:
        yield
    finally:
        if own:
            function.BLOCK = old
        else:
            del function.BLOCK


def _output_and_positions(function, values: dict):
    """(The output under no_grad, query indices as a column, key indices as a row, Lq, Lk)."""
    Q, K = values["Q"], values["K"]
    Lq, Lk = Q.shape[-2], K.shape[-2]
    with torch.no_grad():
        output = function.apply(*values.values())
    query = torch.arange(Lq, device=Q.device)[:, None]
    key = torch.arange(Lk, device=Q.device)[None, :]
    return output, query, key, Lq, Lk


def _attends_as(output, values: dict, mask, *, equal_nan: bool = True) -> bool:
    """Is ``output`` the reference's attention under ``mask`` (True = attend)?"""
    expected = attention_reference(values["Q"], values["K"], values["V"], values["scale"], mask)
    return (isinstance(output, torch.Tensor) and output.shape == expected.shape
            and torch.allclose(output, expected, rtol=1e-5, atol=1e-7, equal_nan=equal_nan))


def recognise_hidden_diagonal(function, values: dict) -> str | None:
    """The hint when causal=True hides the last key each query may see (a mask key >= i + Lk -
    Lq instead of key > i + Lk - Lq): the output is the reference under that narrower mask,
    nan where a query is left with no key at all."""
    if not values["causal"]:
        return None
    output, query, key, Lq, Lk = _output_and_positions(function, values)
    if _attends_as(output, values, key <= query + (Lk - Lq - 1)):
        return (f"{NAME}'s causal mask hides the diagonal: query i must also see key "
                f"j = i + (Lk - Lq) (here Lk - Lq = {Lk - Lq}), so mask keys j > i + (Lk - Lq), "
                "not j >= (a query left with no key at all comes out nan)")
    return None


def recognise_top_left(function, values: dict) -> str | None:
    """The hint when causal=True gives is_causal's top-left alignment: with Lq < Lk, query i
    then sees keys j <= i instead of j <= i + (Lk - Lq)."""
    if not values["causal"] or values["Q"].shape[-2] == values["K"].shape[-2]:
        return None
    output, query, key, Lq, Lk = _output_and_positions(function, values)
    if _attends_as(output, values, key <= query, equal_nan=False):
        return (f"{NAME}'s causal mask is top-left, as is_causal=True: query i sees keys "
                f"j <= i, but the contract is bottom-right, j <= i + (Lk - Lq) (here Lk - Lq = "
                f"{Lk - Lq}), as causal_lower_right: shift the mask and the last key block "
                "each query block visits by Lk - Lq")
    return None


def recognise_top_left_skip(function, values: dict, block: int) -> str | None:
    """The hint when the mask is bottom-right but the skip top-left: each query block visits
    key blocks up to its own last query's position, not past it by Lk - Lq."""
    if not values["causal"] or values["Q"].shape[-2] == values["K"].shape[-2]:
        return None
    output, query, key, Lq, Lk = _output_and_positions(function, values)
    last_query = torch.clamp(query // block * block + block, max=Lq) - 1  # of its block
    if _attends_as(output, values,
                   (key <= query + (Lk - Lq)) & (key // block * block <= last_query)):
        return (f"{NAME}'s causal mask is right, but the key blocks each query block visits "
                "end at its last query's own position, a top-left bound: query i sees keys "
                f"j <= i + (Lk - Lq) (here Lk - Lq = {Lk - Lq}, BLOCK={block}), so the last key "
                "block a query block needs lies Lk - Lq further on")
    return None


def recognise_tail_dropped(function, values: dict, block: int) -> str | None:
    """The hint when the last, shorter block is left out: of the queries (its output rows
    wrong, every other row right) or of the keys (attention over the full blocks alone)."""
    Q, K = values["Q"], values["K"]
    output, query, key, Lq, Lk = _output_and_positions(function, values)
    if not isinstance(output, torch.Tensor) or output.shape[:-1] != Q.shape[:-1]:
        return None
    visible = key <= query + (Lk - Lq) if values["causal"] else torch.ones_like(key == query)
    expected = attention_reference(Q, K, values["V"], values["scale"], visible)
    full = Lq - Lq % block
    if 0 < full < Lq:
        head = torch.allclose(output[..., :full, :], expected[..., :full, :], rtol=1e-5,
                              atol=1e-7)
        tail = torch.allclose(output[..., full:, :], expected[..., full:, :], rtol=1e-5,
                              atol=1e-7, equal_nan=True)
        if head and not tail:
            return (f"{NAME}'s output rows {full} to {Lq - 1} are wrong and every row before "
                    f"them right: with Lq = {Lq} and BLOCK = {block}, those rows are the last "
                    "query block, shorter than BLOCK: does your loop over query blocks reach "
                    "it?")
    full = Lk - Lk % block
    if 0 < full < Lk:
        without = attention_reference(Q, K, values["V"], values["scale"], visible & (key < full))
        if torch.allclose(output, without, rtol=1e-5, atol=1e-7, equal_nan=True):
            return (f"{NAME}'s output is attention over keys 0 to {full - 1} alone: with "
                    f"Lk = {Lk} and BLOCK = {block}, keys {full} to {Lk - 1} are the last key "
                    "block, shorter than BLOCK: does your loop over key blocks reach it?")
    return None


def recognise_tile_mask_without_offset(function, values: dict, block: int) -> str | None:
    """The hint when each tile is masked as if its first query and first key sat at position 0
    (tril(Lk - Lq) of the tile, the tile's offset i0 - j0 left out): the output is the
    reference under that mask, on the tiles the contract's skip visits or on every tile; or,
    where the output is the skip's alone, each tile visited left unmasked (a mask applied only
    on the diagonal tiles, key block == query block, is that where Lk - Lq >= BLOCK - 1)."""
    if not values["causal"]:
        return None
    output, query, key, Lq, Lk = _output_and_positions(function, values)
    local = key % block <= query % block + (Lk - Lq)  # each tile's own tril(Lk - Lq)
    last = torch.clamp(query // block * block + block, max=Lq) - 1 + (Lk - Lq)
    visited = key // block * block <= last  # key blocks the skip visits
    for mask in (visited, local & visited, local):
        if not _attends_as(output, values, mask):
            continue
        if mask is visited:  # the skip alone: no key masked inside a tile it visits
            return (f"{NAME}'s causal mask leaves tiles it visits unmasked: its output is "
                    "attention over every key of each key block a query block visits (here "
                    f"Lk - Lq = {Lk - Lq}, BLOCK={block}), as if the skip of later blocks were "
                    "the only mask; with Lk != Lq or ragged blocks the boundary j = i + "
                    "(Lk - Lq) also crosses tiles off the diagonal (key block != query block): "
                    "mask every tile the boundary crosses")
        return (f"{NAME}'s causal mask leaves out each tile's offset: it masks every tile "
                f"as tril(Lk - Lq) of the tile (here Lk - Lq = {Lk - Lq}, BLOCK={block}), "
                "as if the tile's first query and first key were both at position 0, right "
                "only on tiles where they are equal; query i sees key j when j <= i + (Lk - Lq) "
                "in positions of the whole matrix, so in the tile of query block i0 and key "
                "block j0 keep local (a, b) when b <= a + (i0 - j0) + (Lk - Lq)")
    return None


def flash_values(lead, Lq, Lk, d, dv, device, *, causal=False, seed=0, dtype=torch.float64):
    """Exercise 1's unmasked inputs (``attention_values``), with ``causal`` in the mask's place."""
    return {**attention_values(lead, Lq, Lk, d, dv, device, seed=seed, dtype=dtype),
            "causal": causal}


def flash_domain_values(device, dtype=torch.float64, seed=0, scale=0.5) -> dict:
    """Causal attention with Lq 5 != Lk 7 at the class's own BLOCK; at odd seeds Lq 6 and not
    causal, so that two calls in one graph differ in shape and in ``causal``."""
    odd = seed % 2 == 1
    made = flash_values((2,), 6 if odd else 5, 7, 4, 3, device, causal=not odd, seed=seed,
                        dtype=dtype)
    return {**made, "scale": scale}
