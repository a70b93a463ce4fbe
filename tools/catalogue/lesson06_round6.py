"""Lesson 06: answers from the sixth fresh review, each the plain answer with one change: a
causal skip bound off by one (the last visible key used as the exclusive end of the key loop,
or one query too many before the first query block in backward), which only Lk - Lq = 1 (mod
BLOCK) with full query blocks shows; and a mask saved as a float copy."""

from tools.catalogue import Mistake, edit
from tools.catalogue.lesson06 import MEMORY
from tools.catalogue.lesson06_flash import FLASH

M, FA = "MemoryEfficientAttention", "FlashAttention"
END = "end = min(Lk, i + q.shape[-2] + Lk - Lq) if causal else Lk"
FIRST = "first = max(0, j - (Lk - Lq)) // block * block if ctx.causal else 0"
# the last visible key of a full query block, used as range's exclusive end
INCLUSIVE_END = (END, "end = min(Lk, i + block - 1 + Lk - Lq) if causal else Lk")
FIRST_PLUS_ONE = (FIRST, "first = max(0, j - (Lk - Lq) + 1) // block * block if ctx.causal "
                         "else 0")
FORWARD_SKIPS = "forward skips a key tile whose first key the query block's last query"

UNUSUAL = []

MISTAKES = [
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
    # 8 bytes an entry for float64 where the bool mask given is already kept for the caller
    Mistake(M, "mask saved as a float copy", "saved a float64 copy of the mask", edit(
        MEMORY, ("ctx.save_for_backward(Q, K, V, output, lse.squeeze(-1), mask)",
                 "ctx.save_for_backward(Q, K, V, output, lse.squeeze(-1),\n"
                 "                              None if mask is None else mask.to(Q.dtype))"),
        ("scores = scores.masked_fill(~mask, float(\"-inf\"))\n        P = (scores",
         "scores = scores.masked_fill(mask == 0, float(\"-inf\"))\n        P = (scores"))),
]
