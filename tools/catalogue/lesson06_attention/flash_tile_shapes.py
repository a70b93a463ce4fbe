"""Lesson 06: FlashAttentions whose tiles hold at most BLOCK x BLOCK elements but are not
BLOCK x BLOCK (1 query x BLOCK^2 keys, BLOCK/2 x 2 BLOCK, one query row against every key), one
of them never rescaling, right only while Lk <= BLOCK^2: the contract's blocks are of at most
BLOCK rows."""

from .. import Mistake, Unusual, edit
from .answers import FA, FLASH

_ROWS = "blocks of more than BLOCK rows"


def _rectangular(query_rows: str, key_rows: str) -> str:
    """FLASH with query blocks of ``query_rows`` and key blocks of ``key_rows`` rows."""
    return edit(
        FLASH,
        ("block, Lq, Lk = FlashAttention.BLOCK, Q.shape[-2], K.shape[-2]",
         f"Lq, Lk = Q.shape[-2], K.shape[-2]\n        block, kb = {query_rows}, {key_rows}"),
        ("block, Lq, Lk, wide = FlashAttention.BLOCK, Q.shape[-2], K.shape[-2], L.dtype",
         "Lq, Lk, wide = Q.shape[-2], K.shape[-2], L.dtype\n"
         f"        block, kb = {query_rows}, {key_rows}"),
        ("for j in range(0, end, block):", "for j in range(0, end, kb):"),
        ("for j in range(0, Lk, block):", "for j in range(0, Lk, kb):"),
        ("k, v = K[..., j:j + block, :].to(wide), V[..., j:j + block, :].to(wide)",
         "k, v = K[..., j:j + kb, :].to(wide), V[..., j:j + kb, :].to(wide)"),
        ("grad_K[..., j:j + block, :] = dk", "grad_K[..., j:j + kb, :] = dk"),
        ("grad_V[..., j:j + block, :] = dv", "grad_V[..., j:j + kb, :] = dv"))


_ROW_BY_ROW = _rectangular("1", "FlashAttention.BLOCK ** 2")

UNUSUAL: list[Unusual] = []

MISTAKES = [
    # the reviewer's F15: the last query block left out where it is shorter than BLOCK
    # (review at 2d863fb7: was "output is wrong", or "inf or nan" from new_empty's garbage)
    Mistake(FA, "the last, shorter query block left out", "shorter than BLOCK", edit(
        FLASH, ("for i in range(0, Lq, block):\n            q = Q",
                "for i in range(0, Lq - Lq % block if Lq > block else Lq, block):\n"
                "            q = Q"))),
    Mistake(FA, "query blocks of 1 row, key blocks of BLOCK^2 rows", _ROWS, _ROW_BY_ROW),
    Mistake(FA, "query blocks of BLOCK // 2 rows, key blocks of 2 BLOCK", _ROWS, _rectangular(
        "max(1, FlashAttention.BLOCK // 2)", "2 * FlashAttention.BLOCK")),
    Mistake(FA, "one query row against every key at once", _ROWS, _rectangular("1", "Lk")),
    Mistake(FA, "1 x BLOCK^2 tiles, the running output never rescaled",
            "does not rescale the running output", edit(
                _ROW_BY_ROW, ("alpha = torch.exp(m - m_new)", "alpha = torch.ones_like(m)"))),
]
