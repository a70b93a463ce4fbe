"""Lesson 06: MemoryEfficientAttention, attention that saves one log-sum-exp per query row
instead of the Lq x Lk probabilities, and recomputes P = exp(S - lse) in backward."""

import math

import torch

from ...checks import (Spec, case, check_is_function, check_no_ctx_tensors, make_inputs,
                      run_forward)
from ...contract import covers
from ...domain import Domain
from ...errors import GradingError
from ...outside_ctx import check_no_state_outside_ctx
from .attention import (CONTRACT, MEMORY_EFFICIENT, _attention_example, attention_full,
                        check_attention)
from .attention_inputs import (SCALE, OneThreadExercise, attention_domain_values,
                               attention_values, describe)
from .attention_saves import check_not_a_new_mask, check_saves_no_copy
from .attention_recompute import check_backward_reads_lse, check_no_second_row_maximum


def held_bytes(tensor: torch.Tensor) -> int:
    """The bytes of the storage a tensor keeps alive (an expanded view holds only its source)."""
    try:
        return tensor.untyped_storage().nbytes()
    except (RuntimeError, NotImplementedError):  # a tensor without storage
        return tensor.numel() * tensor.element_size()


def check_saves_row_statistics(spec: Spec, forward, values: dict) -> None:
    """Besides Q, K, V, the mask and the output, only O(Lq) numbers per head may be saved."""
    Q, K = values["Q"], values["K"]
    rows, Lk = math.prod(Q.shape[:-1]), K.shape[-2]
    extra = [s for s in forward.saved if not s.role.startswith("input") and s.role != "output"]
    mask = values.get("mask")
    for saved in extra:  # the mask given, as numbers: the same entries, wider
        if (mask is not None and saved.dtype != torch.bool and saved.shape == tuple(mask.shape)
                and torch.equal(saved.tensor.detach(),
                                mask.to(saved.tensor.device, saved.dtype))):
            raise GradingError(
                f"{spec.name} saved a {str(saved.dtype)[6:]} copy of the mask, shape "
                f"{saved.shape} ({saved.nbytes} bytes, {saved.tensor.element_size()} per "
                f"entry where the bool mask given is 1 and costs nothing more: it is already "
                "kept for the caller); save the mask as given and fill with -inf where ~mask "
                "in backward", mistake=f"{spec.name}/saves-mask-as-float")
    for saved in extra:
        if mask is None:
            check_not_a_new_mask(spec.name, saved, mask)
        if math.prod(saved.shape) >= rows * Lk and saved.dtype == torch.bool:
            raise GradingError(
                f"{spec.name} saved a bool tensor of shape {saved.shape} ({saved.nbytes} bytes), "
                "the mask expanded to the scores' shape: save the mask as given (it broadcasts "
                "against the scores in backward as in forward), not an expanded copy",
                mistake=f"{spec.name}/saves-expanded-mask")
        held = held_bytes(saved.tensor)
        if (math.prod(saved.shape) >= rows * Lk and saved.dtype.is_floating_point
                and held <= rows * saved.tensor.element_size()):
            raise GradingError(
                f"{spec.name} saved a tensor of shape {saved.shape} that holds {held} bytes: one "
                "number per query row expanded to the scores' shape (a stride-0 view, which "
                "keeps no Lq x Lk memory); L is one number per query row, shape (..., Lq) or "
                "(..., Lq, 1): save it unexpanded, and let broadcasting meet the scores in "
                "backward", mistake=f"{spec.name}/saves-expanded-row-statistic")
        if math.prod(saved.shape) >= rows * Lk:
            raise GradingError(
                f"{spec.name} saved an {saved.role} tensor of shape {saved.shape} ({held} "
                "bytes), "
                "as big as the Lq x Lk probabilities: save one log-sum-exp per query row, "
                "shape (..., Lq), and recompute P = exp(S - lse) in backward",
                mistake=f"{spec.name}/saves-full-size-tensor")
    for saved in extra:  # a mask made in forward (~mask, say): the one given costs nothing
        check_not_a_new_mask(spec.name, saved, mask)
    output = forward.output
    for saved in extra:  # O.clone(), O.detach().clone(): the output, kept twice
        if (isinstance(output, torch.Tensor) and saved.shape == tuple(output.shape)
                and saved.dtype == output.dtype
                and torch.equal(saved.tensor.detach(), output.detach())):
            raise GradingError(
                f"{spec.name} saved a copy of its output O ({saved.nbytes} bytes, shape "
                f"{saved.shape}): save the output itself, ctx.save_for_backward(..., output, ...), "
                "which the caller keeps anyway and costs nothing more",
                mistake=f"{spec.name}/saves-copy-of-output")
    for saved in extra:  # "in the inputs' dtype or wider", float32 inputs too
        if (math.prod(saved.shape) == rows and saved.dtype.is_floating_point
                and saved.dtype.itemsize < Q.element_size()):
            raise GradingError(
                f"{spec.name} keeps its log-sum-exp in {str(saved.dtype)[6:]} for "
                f"{str(Q.dtype)[6:]} inputs: every recomputed probability of a row carries its "
                "rounding; keep L in the inputs' dtype or wider",
                mistake=f"{spec.name}/saves-in-lower-precision")
    # a row maximum and a row sum, in float64 at most (wider than float32 inputs is allowed)
    budget = 2 * rows * max(Q.element_size(), 8)
    total = sum(s.nbytes for s in extra)
    if total > budget:
        shapes = ", ".join(f"{tuple(s.shape)} {str(s.dtype)[6:]}" for s in extra)
        raise GradingError(
            f"{spec.name} saved {total} bytes besides Q, K, V, the mask and the output "
            f"({shapes}), where the contract allows at most two numbers per query row, "
            f"{budget} bytes here even in float64: keep L alone, or a row maximum and a row "
            "sum", mistake=f"{spec.name}/saves-more-than-row-statistics")
    per_row = (tuple(Q.shape[:-1]), (*Q.shape[:-1], 1))
    for saved in extra:  # one number per row, laid out as something else: squeeze() on 1s
        if (math.prod(saved.shape) == rows and saved.dtype.is_floating_point
                and saved.shape not in per_row):
            if tuple(saved.shape) == (*Q.shape[:-2], 1, Q.shape[-2]):  # transposed keepdim
                raise GradingError(
                    f"{spec.name} saves its per-row statistic as a row (..., 1, Lq), shape "
                    f"{saved.shape}, where Q {tuple(Q.shape)} has rows {per_row[0]}: L is one "
                    "number per query row, shape (..., Lq) or keepdim's column (..., Lq, 1); "
                    "laid out as a row, it lines up with the scores' keys, not their queries",
                    mistake=f"{spec.name}/row-statistic-misshapen")
            raise GradingError(
                f"{spec.name} saves its per-row statistic with shape {saved.shape} where Q "
                f"{tuple(Q.shape)} has rows {per_row[0]}: L is one number per query row, shape "
                "(..., Lq) or keepdim's (..., Lq, 1); squeeze() drops every dimension of size 1 "
                "(a batch of one, a single query), so its rows no longer line up with the "
                "scores': squeeze(-1) drops only the keepdim one",
                mistake=f"{spec.name}/row-statistic-misshapen")
    others = [s for s in extra if math.prod(s.shape) != rows or not s.dtype.is_floating_point]
    if others or len(extra) > 2:
        shape = others[0].shape if others else extra[2].shape
        raise GradingError(
            f"{spec.name} saves a tensor of shape {shape} besides Q, K, V, the mask, O and "
            f"{'its per-row statistics' if not others else 'one number per query row'}: "
            "forward keeps only those, L (or a row maximum and a row sum) being the one "
            "number (or two) per query row; a Python number such as scale stays a ctx "
            "attribute, not a tensor", mistake=f"{spec.name}/saves-something-else")


def memory_efficient_full(MemoryEfficientAttention, device) -> None:
    function = check_is_function(MemoryEfficientAttention, MEMORY_EFFICIENT)
    # attention_full's first check, before the saves: P or L kept in a global would be named
    # a second normalisation by check_backward_reads_lse
    with case("one call, forward then backward"):
        check_no_state_outside_ctx(function, MEMORY_EFFICIENT.name, attention_values(
            (2,), 4, 5, 3, 2, device, mask="causal", seed=12))
    for seed, (lead, L, mask) in enumerate([((2,), 16, "causal"), ((2, 2), 12, "padding"),
                                            ((1,), 20, None), ((2,), 10, "random")]):
        values = attention_values(lead, L, L + 3, 4, 3, device, mask=mask, seed=seed + 50)
        # a log-sum-exp kept narrower than the inputs is named by check_attention's probe
        forward, _ = check_attention(function, MEMORY_EFFICIENT, values)
        check_saves_row_statistics(MEMORY_EFFICIENT, forward, values)
        # a tensor kept as a ctx attribute (ctx.lse = lse) is named before backward's probes,
        # which would see no saved per-row number and call it a second normalisation (one in
        # a container on ctx is check_backward_reads_lse's to name)
        if any(isinstance(value, torch.Tensor) for value in forward.ctx_attributes.values()):
            with case(describe(values)):
                check_no_ctx_tensors(MEMORY_EFFICIENT, forward)
    # the same clause in float32, the contract's other dtype (no values compared here:
    # attention_full compares float32 against F.scaled_dot_product_attention)
    values = attention_values((2,), 6, 9, 4, 3, device, mask="padding", seed=56,
                              dtype=torch.float32)
    with case(describe(values)):
        forward = run_forward(function, MEMORY_EFFICIENT, make_inputs(values))
        check_saves_no_copy(MEMORY_EFFICIENT.name, forward, values)  # named as copies first
        check_saves_row_statistics(MEMORY_EFFICIENT, forward, values)
    covers("only O(Lq) numbers saved besides Q, K, V, mask, output")
    values = attention_values((2,), 5, 7, 3, 2, device, mask="padding", seed=55)
    with case(describe(values)):
        check_backward_reads_lse(function, MEMORY_EFFICIENT, values)
        check_no_second_row_maximum(function, MEMORY_EFFICIENT, values)
    covers("backward recomputes P from L")
    attention_full(function, MEMORY_EFFICIENT, device)


EXERCISES = [
    OneThreadExercise("MemoryEfficientAttention", "06_attention", memory_efficient_full,
             example=lambda: _attention_example(),
             contract=CONTRACT + ("only O(Lq) numbers saved besides Q, K, V, mask, output",
                                  "backward recomputes P from L"),
             domain=Domain(MEMORY_EFFICIENT, attention_domain_values,
                           constants={"scale": SCALE})),
]
