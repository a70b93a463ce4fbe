"""Lesson 06's surviving mutants that are no hole (``tools.mutants.listed``): a copy of a
tensor that is made and dropped anyway, or of one that is already contiguous."""

from .. import EquivalentMutant

S, M, FA, AB = ("ScaledDotProductAttention", "MemoryEfficientAttention", "FlashAttention",
                "AttentionWithBias")
GRADIENT_CLONE = ("a gradient backward has just computed into a new tensor, cloned on return: "
                  "the same values, the original freed as backward returns")
SAVED_CLONE = ("{} is made in forward and read by nothing else once forward returns: saving a "
               "clone keeps as many bytes as saving it (the original is freed on return)")
CONTIGUOUS = "{} is made contiguous by {}, so .contiguous() returns it unchanged"


def _returns(exercise: str, line: str, names: tuple[str, ...]) -> list[EquivalentMutant]:
    """A .clone() added to each gradient of backward's return line ``line``."""
    return [EquivalentMutant(exercise, "add_copy", line,
                             line.replace(f" {name},", f" {name}.clone(),", 1), GRADIENT_CLONE)
            for name in names]


def _saved(exercise: str, operator: str, line: str, old: str, new: str,
           reason: str) -> EquivalentMutant:
    return EquivalentMutant(exercise, operator, line, line.replace(old, new, 1), reason)


SDPA_SAVE = "ctx.save_for_backward(Q, K, V, P)"
MEMORY_SAVE = "ctx.save_for_backward(Q, K, V, output, lse.squeeze(-1), mask)"
FLASH_SAVE = "ctx.save_for_backward(Q, K, V, O, L)"

EQUIVALENTS = [
    *_returns(S, "return grad_Q, grad_K, grad_V, None, None", ("grad_Q", "grad_K", "grad_V")),
    _saved(S, "save_copy", SDPA_SAVE, "P)", "P.clone())", SAVED_CLONE.format("P")),
    _saved(AB, "save_copy", SDPA_SAVE, "P)", "P.clone())", SAVED_CLONE.format("P")),
    _saved(S, "add_copy", SDPA_SAVE, "P)", "P.contiguous())",
           CONTIGUOUS.format("P", "torch.softmax")),
    _saved(AB, "add_copy", SDPA_SAVE, "P)", "P.contiguous())",
           CONTIGUOUS.format("P", "torch.softmax")),
    _saved(M, "save_copy", MEMORY_SAVE, "lse.squeeze(-1)", "lse.squeeze(-1).clone()",
           SAVED_CLONE.format("lse")),
    _saved(M, "add_copy", MEMORY_SAVE, "output,", "output.contiguous(),",
           CONTIGUOUS.format("output", "the matmul that makes it (a new tensor)")),
    _saved(FA, "save_copy", FLASH_SAVE, "L)", "L.clone())", SAVED_CLONE.format("L")),
    _saved(FA, "add_copy", FLASH_SAVE, "L)", "L.contiguous())",
           CONTIGUOUS.format("L", "torch.empty")),
    _saved(FA, "add_copy", FLASH_SAVE, "O,", "O.contiguous(),",
           CONTIGUOUS.format("O", "Q.new_empty")),
]

# found by the uncapped mutants (session 54), past the default cap of 60 per exercise
ROW_STATS_SAVE = "ctx.save_for_backward(Q, K, V, output, m.squeeze(-1), z.squeeze(-1), mask)"
WIDER_L = ("the contract asks for L in the inputs' dtype or wider: a float64 L is one of the "
           "wider ones, a few bytes per row")
EQUIVALENTS += [
    _saved(M, "save_copy", ROW_STATS_SAVE, "z.squeeze(-1),", "z.squeeze(-1).clone(),",
           SAVED_CLONE.format("the row sum z")),
    _saved(M, "add_copy", ROW_STATS_SAVE, "output,", "output.contiguous(),",
           CONTIGUOUS.format("output", "the matmul P @ V")),
    _saved(M, "save_input_not_output", MEMORY_SAVE, "output,", "Q,",
           "this answer's backward takes D from dP * P on the recomputed P and never reads the "
           "saved output: Q saved a second time costs no bytes"),
    _saved(M, "save_widened", MEMORY_SAVE, "lse.squeeze(-1),", "lse.squeeze(-1).double(),",
           WIDER_L),
    _saved(FA, "save_widened", FLASH_SAVE, "L)", "L.double())", WIDER_L),
    EquivalentMutant(FA, "nudge_constant",
                     'm = torch.full(q.shape[:-1], float("-inf"), dtype=wide, device=Q.device)',
                     'm = torch.full(q.shape[:0], float("-inf"), dtype=wide, device=Q.device)',
                     "a 0-dim running max of -inf broadcasts against the first key tile's row "
                     "maxima, and from then on has the rows' shape"),
    EquivalentMutant(FA, "nudge_constant",
                     "o = torch.zeros(*q.shape[:-1], V.shape[-1], dtype=wide, device=Q.device)",
                     "o = torch.zeros(*q.shape[:0], V.shape[-1], dtype=wide, device=Q.device)",
                     "a running output of zeros of shape (dv,) broadcasts against the first "
                     "tile's P @ V, and from then on has the rows' shape (every query row sees "
                     "at least one key tile)"),
    *[EquivalentMutant(FA, "nudge_constant",
                       "first = max(0, j - (Lk - Lq)) // block * block if ctx.causal else 0",
                       f"first = max({bound}, j - (Lk - Lq)) // block * block if ctx.causal "
                       "else 0", reason)
      for bound, reason in (
          ("-1", "-1 // block * block is -block: the query slice [-block:0] it starts at is "
                 "empty, and the next starts at 0"),
          ("1", "1 // block * block is 0 for every block larger than 1, as 0 // block * block "
                "is"))],
    EquivalentMutant(AB, "nudge_constant",
                     "if any(ctx.needs_input_grad[:2]) or ctx.needs_input_grad[3]:",
                     "if any(ctx.needs_input_grad[:3]) or ctx.needs_input_grad[3]:",
                     "dP and dS built when V alone needs a gradient: the work the contract "
                     "accepts and names as built for nothing"),
    EquivalentMutant(AB, "add_copy", "return None, None, dV, None, None",
                     "return None, None, dV.clone(), None, None", GRADIENT_CLONE),
]

# found by the uncapped mutants of review 56, in answers catalogued since session 54
KEEPDIM_SAVE = "ctx.save_for_backward(Q, K, V, output, lse, mask)"
EXPANDED_SAVE = ("ctx.save_for_backward(Q, K, V, output, lse.squeeze(-1), None if mask is None "
                 "else mask.expand(scores.shape))")
OPTIONAL_SAVE = ("ctx.save_for_backward(Q, K, V, output, lse.squeeze(-1), *([] if mask is None "
                 "else [mask]))")
EQUIVALENTS += [
    _saved(M, "add_copy", KEEPDIM_SAVE, "lse,", "lse.contiguous(),",
           CONTIGUOUS.format("lse", "the addition that makes it (a new tensor)")),
    _saved(M, "save_copy", KEEPDIM_SAVE, "lse,", "lse.clone(),", SAVED_CLONE.format("lse")),
    _saved(M, "save_copy", ROW_STATS_SAVE, "m.squeeze(-1),", "m.squeeze(-1).clone(),",
           SAVED_CLONE.format("the row maximum m")),
    *[_saved(M, "add_copy", line, "output,", "output.contiguous(),",
             CONTIGUOUS.format("output", "the matmul P @ V"))
      for line in (KEEPDIM_SAVE, EXPANDED_SAVE, OPTIONAL_SAVE)],
    *[_saved(M, "save_copy", line, "lse.squeeze(-1),", "lse.squeeze(-1).clone(),",
             SAVED_CLONE.format("lse")) for line in (EXPANDED_SAVE, OPTIONAL_SAVE)],
    EquivalentMutant(M, "nudge_constant", "mask = rest[0] if rest else None",
                     "mask = rest[-1] if rest else None",
                     "rest holds the mask alone when there is one: its first item is its last"),
]

# found by the uncapped mutants of review 57 (session 57's catalogue answers)
TILE_COPY = ("a copy of one tile (at most BLOCK rows), no bigger than the tiles the answer "
             "makes anyway, dropped once the tile is used")
MASK_MORE = ("the causal mask applied on more tiles: on a tile every query of which sees every "
             "key, triu(q_start - k_start + 1) masks nothing")
RAGGED_END = ("min(block, Lq - i) differs only at a ragged last query block, where "
              "i + BLOCK + Lk - Lq >= Lk: min(Lk, ...) is Lk either way")
LUCID_SAVE = "ctx.save_for_backward(q, k, v, out, lse)"
LUCID_MASK = "if causal and q_start_index < k_start_index + kc.shape[-2] - 1:"
TWO_PASS_TILE = "return q, k, p, do, ds"
TWO_PASS_SEES = "return not ctx.causal or j < min(Lk, i + min(block, Lq - i) + Lk - Lq)"
FA1_END = "end = min(Lk, i + min(block, Lq - i) + Lk - Lq) if ctx.causal else Lk"
WIDE_L_SAVE = "ctx.save_for_backward(Q, K, V, O, L.double())"
EQUIVALENTS += [
    _saved(S, "save_copy", "ctx.save_for_backward(Q, K, V, scores)", "scores)", "scores.clone())",
           SAVED_CLONE.format("the scores")),
    _saved(S, "add_copy", "ctx.save_for_backward(Q, K, V, scores)", "scores)",
           "scores.contiguous())", CONTIGUOUS.format("the scores", "the multiply (or "
                                                    "masked_fill) that makes them")),
    _saved(S, "save_copy", "ctx.save_for_backward(Q, K, V, P, O)", "P,", "P.clone(),",
           SAVED_CLONE.format("P")),
    _saved(S, "add_copy", "ctx.save_for_backward(Q, K, V, P, O)", "P,", "P.contiguous(),",
           CONTIGUOUS.format("P", "torch.softmax")),
    _saved(S, "add_copy", "ctx.save_for_backward(Q, K, V, P, O)", "O)", "O.contiguous())",
           CONTIGUOUS.format("O", "the matmul P @ V")),
    *[EquivalentMutant(FA, "add_copy", TWO_PASS_TILE,
                       TWO_PASS_TILE.replace(f" {name}", f" {name}.clone()", 1), TILE_COPY)
      for name in ("q", "k", "p", "do", "ds")],
    *[EquivalentMutant(FA, operator, line, line.replace("min(block, Lq - i)", bound), RAGGED_END)
      for line in (TWO_PASS_SEES, FA1_END)
      for operator, bound in (("drop_term", "min(block, Lq)"),
                              ("swap_arithmetic", "min(block, Lq + i)"))],
    *[EquivalentMutant(FA, operator, LUCID_MASK, LUCID_MASK.replace(old, new), MASK_MORE)
      for operator, old, new in (("swap_comparison", " < ", " <= "),
                                 ("nudge_constant", "- 1:", "- 0:"), ("drop_term", " - 1:", ":"),
                                 ("swap_arithmetic", "- 1:", "+ 1:"))],
    _saved(FA, "add_copy", LUCID_SAVE, "lse)", "lse.contiguous())",
           CONTIGUOUS.format("lse", "the addition that makes it (a new tensor)")),
    _saved(FA, "save_copy", LUCID_SAVE, "lse)", "lse.clone())", SAVED_CLONE.format("lse")),
    _saved(FA, "save_widened", LUCID_SAVE, "lse)", "lse.double())", WIDER_L),
    _saved(FA, "add_copy", LUCID_SAVE, "out,", "out.contiguous(),",
           CONTIGUOUS.format("out", "torch.zeros (o) and .to (a new tensor if the dtype "
                                    "changes)")),
    EquivalentMutant(FA, "nudge_constant",
                     "m = torch.full(q.shape[:-1], torch.finfo(wide).min, dtype=wide, "
                     "device=Q.device)",
                     "m = torch.full(q.shape[:0], torch.finfo(wide).min, dtype=wide, "
                     "device=Q.device)",
                     "a 0-dim running max of finfo.min broadcasts against the first key tile's "
                     "row maxima, and from then on has the rows' shape"),
    _saved(FA, "save_copy", WIDE_L_SAVE, "L.double())", "L.double().clone())",
           SAVED_CLONE.format("L.double()")),
    _saved(FA, "save_widened", WIDE_L_SAVE, "L.double())", "L.double().double())",
           "L.double() is float64 already: a second .double() returns it unchanged"),
    _saved(FA, "add_copy", WIDE_L_SAVE, "O,", "O.contiguous(),",
           CONTIGUOUS.format("O", "Q.new_empty")),
]
