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
