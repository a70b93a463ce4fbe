"""Lesson 06's surviving mutants that are no hole (``autograder.equivalents``): a copy of a
tensor that is made and dropped anyway, or of one that is already contiguous."""

from ...equivalents import EquivalentMutant

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
    *_returns(M, "return grad_Q, grad_K, grad_V, None, None", ("grad_Q", "grad_K", "grad_V")),
    *_returns(FA, "return grad_Q.to(Q.dtype), grad_K, grad_V, None, None", ("grad_K", "grad_V")),
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
    _saved(S, "add_copy", "ctx.save_for_backward(Qs, K, V, P)", "Qs,", "Qs.contiguous(),",
           SAVED_CLONE.format("Q * scale")),
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
