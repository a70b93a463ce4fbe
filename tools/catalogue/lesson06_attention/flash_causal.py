"""Lesson 06: FlashAttention answers with known verdicts under causal=True: the bottom-right
causal mask applied per tile, the tiles entirely above it skipped, and the skip bounds off by
one (the last visible key used as the exclusive end of the key loop, or one query too many
before the first query block in backward), which only Lk - Lq = 1 (mod BLOCK) with full query
blocks shows."""

from .. import Mistake, Unusual, edit
from .answers import FA, FLASH
from .flash_attention import _TWO_PASS_BACKWARD, LUCIDRAINS

END = "end = min(Lk, i + q.shape[-2] + Lk - Lq) if causal else Lk"
FIRST = "first = max(0, j - (Lk - Lq)) // block * block if ctx.causal else 0"
# the last visible key of a full query block, used as range's exclusive end
INCLUSIVE_END = (END, "end = min(Lk, i + block - 1 + Lk - Lq) if causal else Lk")
FIRST_PLUS_ONE = (FIRST, "first = max(0, j - (Lk - Lq) + 1) // block * block if ctx.causal "
                         "else 0")
FORWARD_SKIPS = "forward skips a key tile whose first key the query block's last query"

CONTINUE = edit(
    FLASH, ("for j in range(0, end, block):\n",
            "for j in range(0, Lk, block):\n                if j >= end:\n"
            "                    continue\n"),
    ('return s.masked_fill(key > query[:, None] + (Lk - Lq), float("-inf"))',
     'return torch.where(key <= query[:, None] + (Lk - Lq), s, float("-inf"))'))
ABOVE = "computes score tiles entirely above"
TWO_PASS = FLASH[:FLASH.index("    @staticmethod\n    @once_differentiable")] + _TWO_PASS_BACKWARD

UNUSUAL = [
    Unusual(FA, "causal tiles skipped with continue, every tile masked by torch.where",
            CONTINUE),
]

MISTAKES = [
    # the reviewer's E3c: backward's first query block not clamped at 0: with Lk - Lq many
    # BLOCKs it is negative, and its slices wrap round to the last rows (review at 1f1b73d7)
    Mistake(FA, "backward's first query block left unclamped (no max(0, ...))",
            "your gradient for Q is wrong",
            edit(FLASH, (FIRST, "first = (j - (Lk - Lq)) // block * block if ctx.causal else 0"))),
    # the reviewer's F7b and F7: the mask bottom-right, the key loop's end (and backward's
    # first query block) top-left (review at 2d863fb7: was "output is wrong")
    Mistake(FA, "key loop ended at the query block's own last position (top-left skip)",
            "visits end at its last query's own position",
            edit(FLASH, (END, "end = min(Lk, i + q.shape[-2]) if causal else Lk"))),
    Mistake(FA, "both skip bounds top-left, the mask bottom-right",
            "visits end at its last query's own position",
            edit(FLASH, (END, "end = min(Lk, i + q.shape[-2]) if causal else Lk"),
                 (FIRST, "first = j // block * block if ctx.causal else 0"))),
    Mistake(FA, "full causal mask, sliced per tile", "builds a full Lq x Lk mask", edit(
        FLASH, ('return s.masked_fill(key > query[:, None] + (Lk - Lq), float("-inf"))',
                'full = torch.ones(Lq, Lk, dtype=torch.bool, device=s.device).tril(Lk - Lq)\n'
                '    return s.masked_fill(~full[i:i + s.shape[-2], j:j + s.shape[-1]], -math.inf)'
                ))),
    # one query block's mask against every key, BLOCK x Lk, sliced per tile: no bigger than
    # one input per batch-head, so the largest-tensor budget let it through (review)
    Mistake(FA, "a query block's causal mask against every key, sliced per tile",
            "a block of query rows against every key", edit(
        FLASH, ("            for j in range(0, end, block):\n",
                "            if causal:\n"
                "                rows = torch.arange(i, i + q.shape[-2], device=Q.device)\n"
                "                visible = torch.arange(Lk, device=Q.device) <= rows[:, None] "
                "+ (Lk - Lq)\n"
                "            for j in range(0, end, block):\n"),
        ("                if causal:\n                    s = _tile_mask(s, i, j, Lq, Lk)",
         "                if causal:\n                    s = s.masked_fill(~visible[:, j:j + "
         "block], float(\"-inf\"))")), named=True),
    # the same in backward: one key block's mask against every query, Lq x BLOCK
    Mistake(FA, "a key block's causal mask against every query, sliced per tile in backward",
            "a block of keys against every query", edit(
        FLASH, ("            dk, dv = torch.zeros_like(k), torch.zeros_like(v)\n",
                "            dk, dv = torch.zeros_like(k), torch.zeros_like(v)\n"
                "            if ctx.causal:\n"
                "                cols = torch.arange(j, j + k.shape[-2], device=Q.device)\n"
                "                visible = cols <= torch.arange(Lq, device=Q.device)[:, None] "
                "+ (Lk - Lq)\n"),
        ("                if ctx.causal:\n                    s = _tile_mask(s, i, j, Lq, Lk)",
         "                if ctx.causal:\n                    s = s.masked_fill(~visible[i:i + "
         "block], float(\"-inf\"))"))),
    Mistake(FA, "every tile computed under causal", "computes score tiles entirely above",
            edit(FLASH, ("end = min(Lk, i + q.shape[-2] + Lk - Lq) if causal else Lk",
                          "end = Lk")), named=True),
    # is_causal=True's alignment: query i sees keys j <= i (the tiles still skip bottom-right)
    Mistake(FA, "top-left causal mask", "causal mask is top-left",
            edit(FLASH, ('return s.masked_fill(key > query[:, None] + (Lk - Lq), float("-inf"))',
                          'return s.masked_fill(key > query[:, None], float("-inf"))'))),
    # the diagonal key masked too: the first query of a square problem sees nothing, nan
    Mistake(FA, "causal mask with >=", "causal mask hides the diagonal", edit(
        FLASH, ("key > query[:, None] + (Lk - Lq)", "key >= query[:, None] + (Lk - Lq)")),
        named=True),
    # each tile's own tril(Lk - Lq), its offset i - j left out: right on the diagonal tiles
    # alone (review: failed only as "output is wrong")
    Mistake(FA, "each tile masked as tril(Lk - Lq), without the tile's offset",
            "causal mask leaves out each tile's offset", edit(
        FLASH, ('    query = torch.arange(i, i + s.shape[-2], device=s.device)\n'
                '    key = torch.arange(j, j + s.shape[-1], device=s.device)\n'
                '    return s.masked_fill(key > query[:, None] + (Lk - Lq), float("-inf"))',
                '    keep = torch.ones(s.shape[-2], s.shape[-1], dtype=torch.bool,\n'
                '                      device=s.device).tril(diagonal=Lk - Lq)\n'
                '    return s.masked_fill(~keep, float("-inf"))'))),
    # the mask on the tile whose query and key blocks start together alone: right when
    # Lk == Lq, where no other tile crosses the boundary (review at 32340a34: was named as the
    # tile's offset left out)
    Mistake(FA, "causal mask on the diagonal tiles only", "leaves tiles it visits unmasked", edit(
        FLASH, ("                if causal:\n                    s = _tile_mask(s, i, j, Lq, Lk)",
                "                if causal and j == i:\n"
                "                    s = _tile_mask(s, i, j, Lq, Lk)"),
        ("                if ctx.causal:\n                    s = _tile_mask(s, i, j, Lq, Lk)",
         "                if ctx.causal and j == i:\n"
         "                    s = _tile_mask(s, i, j, Lq, Lk)"))),
    # -inf filled before the scale multiplies it: 0 * -inf = nan at scale 0 (review at
    # 32340a34: the domain's failure cited a clause Exercise 3's contract does not state)
    Mistake(FA, "causal mask filled before scaling", "fills the masked scores with -inf before "
            "multiplying them by scale", edit(
        FLASH, ("""                s = (q @ k.transpose(-2, -1)) * scale
                if causal:
                    s = _tile_mask(s, i, j, Lq, Lk)""", """                s = q @ k.transpose(-2, -1)
                if causal:
                    s = _tile_mask(s, i, j, Lq, Lk)
                s = s * scale"""),
        ("""                s = (q @ k.transpose(-2, -1)) * ctx.scale
                if ctx.causal:
                    s = _tile_mask(s, i, j, Lq, Lk)""", """                s = q @ k.transpose(-2, -1)
                if ctx.causal:
                    s = _tile_mask(s, i, j, Lq, Lk)
                s = s * ctx.scale"""))),
    Mistake(FA, "forward key loop ends at the last visible key (BLOCK rows)", FORWARD_SKIPS,
            edit(FLASH, INCLUSIVE_END)),
    # the same slip with the block's own rows: also wrong at a ragged last query block
    Mistake(FA, "forward key loop ends at the last visible key (the block's rows)",
            FORWARD_SKIPS, edit(FLASH, (END, "end = min(Lk, i + q.shape[-2] - 1 + Lk - Lq) "
                                             "if causal else Lk"))),
    Mistake(FA, "backward's first query block one query late",
            "backward leaves out a tile that causal attention needs", edit(FLASH, FIRST_PLUS_ONE)),
    Mistake(FA, "both skip bounds off by one", FORWARD_SKIPS,
            edit(FLASH, INCLUSIVE_END, FIRST_PLUS_ONE)),
    # one tile too many, the key block that starts right after a query block's last visible
    # key, only where Lk - Lq = 0 (mod BLOCK): masked to nothing, every value right (mutants
    # of the catalogue's answers; the tile count once ran at Lk - Lq = 3 (mod 4) alone)
    Mistake(FA, "continue only past end (j > end)", ABOVE,
            edit(CONTINUE, ("if j >= end:", "if j > end:"))),
    Mistake(FA, "two-pass backward: a tile visible when j <= end", ABOVE, edit(
        TWO_PASS, ("j < min(Lk, i + min(block, Lq - i) + Lk - Lq)",
                   "j <= min(Lk, i + min(block, Lq - i) + Lk - Lq)"))),
    Mistake(FA, "lucidrains-style: break only past the block's rows", ABOVE, edit(
        LUCIDRAINS, ("k_start_index > q_start_index + qc.shape[-2] - 1:",
                     "k_start_index > q_start_index + qc.shape[-2]:"))),
]
