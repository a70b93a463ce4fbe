"""Lesson 06: ScaledDotProductAttention, and the attention checks MemoryEfficientAttention
(``attention_memory_efficient``) shares (FlashAttention is in ``flash_attention``)."""

import torch
import torch.nn.functional as F

from ...checks import (Spec, case, check_is_function, check_no_ctx_tensors,
                      check_values_and_gradients, make_inputs, run_backward, run_forward)
from ...contract import check_each_input_alone, covers
from ...diagnose import diagnose_gradient, diagnose_values
from ...domain import Domain
from ...errors import GradingError
from ...outside_ctx import check_no_state_outside_ctx
from ...exercise import sample
from .attention_inputs import (DIAGONAL_ONLY, ELEMENTWISE, MULTIHEAD, SCALE,  # noqa: F401
                               attention_domain_values, attention_reference, attention_values,
                               describe, make_mask, OneThreadExercise)
from .attention_double import check_second_derivative
from .attention_layout import check_grad_output_layout, check_multihead_layout
from .attention_mask import FILL_CASE, check_mask_polarity, masked_above_values
from .attention_known import (KNOWN_IDS, MASK_NONE, grad_output_like,
                              known_mistake, row_sum_without_keepdim)
from .attention_precision import float32_precision, narrow_saves
from .attention_saves import (check_not_a_new_mask, check_saves_no_copy,
                             check_saves_one_score_tensor)
from .attention_scale import causal_or_given_mask, check_any_scale, scale_ignored
from .attention_work import DV, D, LK, LQ, check_no_gradient_unasked

INPUT_NAMES = ("Q", "K", "V", "scale", "mask")


SDPA = Spec("ScaledDotProductAttention", INPUT_NAMES, attention_reference)
MEMORY_EFFICIENT = Spec("MemoryEfficientAttention", INPUT_NAMES, attention_reference)


def check_attention(function, spec: Spec, values: dict, *, rtol=1e-5, atol=1e-7):
    """check_values_and_gradients, with the lesson's named mistakes recognised on failure."""
    with case(describe(values)):
        try:
            return check_values_and_gradients(function, spec, values, rtol=rtol, atol=atol)
        except GradingError as error:
            if values.get("mask") is None and "TypeError" in error.hint:
                raise GradingError(MASK_NONE.format(name=spec.name), str(error)) from error
            if "must match the size of tensor" in error.hint:
                try:
                    hint = row_sum_without_keepdim(function, spec, values["Q"].device)
                except Exception:  # the learner's code may raise anything; keep the first hint
                    hint = None
                if hint is not None:
                    raise GradingError(hint, str(error),
                                       mistake=f"{spec.name}/row-sum-without-keepdim") from error
            try:
                hint = scale_ignored(function, spec.name, values, attention_reference)
                if hint is not None:
                    raise GradingError(hint, str(error),
                                       mistake=f"{spec.name}/scale-ignored") from error
            except GradingError:
                raise
            except Exception:  # the learner's code may raise anything; keep the first hint
                pass
            try:
                hint = known_mistake(function, spec, values)
                mistake = {phrase: f"{spec.name}/{name}" for phrase, name in KNOWN_IDS.items()}
                if hint is None:
                    hint = narrow_saves(function, spec, values, attention_reference)
                    mistake = f"{spec.name}/saves-in-lower-precision"
                if hint is None:
                    hint = float32_precision(function, spec, values, attention_reference)
                    mistake = f"{spec.name}/computes-in-float32"
            except Exception:  # the learner's code may raise anything; keep the first hint
                hint = None
            if hint is None:
                raise
            raise GradingError(hint, str(error), mistake=mistake) from error


def check_against_sdpa(function, spec: Spec, values: dict, check_saves) -> None:
    """float32 output and the gradient of every input requiring grad against
    F.scaled_dot_product_attention, whose attn_mask is the values' mask, their float bias or
    FlashAttention's causal mask; ``check_saves(forward)`` first. Shared by the four exercises."""
    on_cuda = values["Q"].device.type == "cuda"
    rtol, atol = (1e-3, 1e-4) if on_cuda else (1e-4, 1e-5)
    inputs = make_inputs(values)
    forward = run_forward(function, spec, inputs)
    check_saves(forward)
    fresh = make_inputs(values)
    attn_mask = fresh["bias"] if "bias" in fresh else causal_or_given_mask(fresh)
    expected = F.scaled_dot_product_attention(fresh["Q"], fresh["K"], fresh["V"],
                                              attn_mask=attn_mask, scale=values["scale"])
    where = "against F.scaled_dot_product_attention in float32"
    diagnose_values(f"{spec.name}'s output {where}", forward.output, expected.detach(),
                    rtol=rtol, atol=atol)
    grad_output = grad_output_like(expected, seed=5)
    names = [n for n, v in inputs.items() if isinstance(v, torch.Tensor) and v.requires_grad]
    try:  # plain autograd: the probes' run (it logs every op) only to explain an error
        grads = torch.autograd.grad(forward.output, [inputs[n] for n in names], grad_output,
                                    allow_unused=True, retain_graph=True)
    except Exception:  # noqa: BLE001 - explained by run_backward, or re-raised as it is
        grads = run_backward(spec, forward.output, inputs, grad_output).grads
    truth = torch.autograd.grad(expected, [fresh[n] for n in names], grad_output)
    for name, grad, true in zip(names, grads, truth):
        try:
            diagnose_gradient(name, grad, true, rtol=rtol, atol=atol)
        except GradingError as error:
            raise GradingError(f"{error.hint} ({where})", error.details) from error


def check_saves(name: str, forward, values: dict) -> None:
    """No copy of an input or of the output, nothing of an input's size besides P, and no
    mask but the one given."""
    check_saves_no_copy(name, forward, values)
    check_saves_one_score_tensor(name, forward, values)
    for saved in forward.saved:
        check_not_a_new_mask(name, saved, values.get("mask"))


def check_stable(function, spec: Spec, device) -> None:
    """Scores in the thousands: exp overflows unless the row maximum is subtracted first; and
    masked scores far above the visible ones, which a finite fill such as -1e4 does not mask.
    (Rows near -finfo(dtype).max / 2 or at finfo(dtype).min, which no model meets, are not
    tried: a fill of finfo(dtype).min is correct over the scores models meet.)"""
    values = attention_values((2,), 4, 6, 4, 3, device, mask="causal", seed=21,
                              magnitude=6.0, scale=60.0)
    check_attention(function, spec, values)
    covers("scores in the thousands")
    check_attention(function, spec, masked_above_values(device))
    covers(FILL_CASE)


# (lead, Lq, Lk, d, dv, mask): no mask, causal, padding, full random, broadcast 2-d, Lq != Lk
# both ways, a single query, a single key; edge shapes last so earlier hints can be specific.
SHAPES = [
    ((2,), 5, 5, 4, 4, None),
    ((3,), 4, 7, 5, 3, "causal"),
    ((2, 3), 6, 6, 4, 5, "padding"),
    ((2, 2), 5, 3, 3, 2, "random"),
    ((), 6, 4, 3, 3, "random2d"),
    ((2, 1, 3), 3, 5, 2, 4, "causal"),
    ((2,), 1, 4, 3, 2, "random"),
    ((2,), 3, 1, 2, 2, None),
]


def attention_full(function, spec: Spec, device) -> None:
    check_mask_polarity(function, spec, device)
    # rule 4's generic check first: P kept in a dict keyed by id(ctx) and popped in backward
    # fails a second backward, or looks like a second normalisation, before the domain runs it
    with case("one call, forward then backward"):
        check_no_state_outside_ctx(function, spec.name, attention_values(
            (2,), 4, 5, 3, 2, device, mask="causal", seed=12))
    for seed, (lead, Lq, Lk, d, dv, mask) in enumerate(SHAPES):
        values = attention_values(lead, Lq, Lk, d, dv, device, mask=mask, seed=seed)
        forward, _ = check_attention(function, spec, values)
        check_no_ctx_tensors(spec, forward)
    covers("mask None, causal, padding, broadcast 2-d")
    covers("Lq != Lk, one query, one key")
    check_any_scale(function, spec.name, attention_values((2,), 3, 4, 2, 2, device,
                                                          mask="causal", seed=13),
                    attention_reference)
    values = attention_values((2, 3), 4, 5, 3, 2, device, mask="causal", seed=9)
    check_multihead_layout(lambda f, v: check_saves(
        spec.name, check_attention(f, spec, v)[0], v), function, spec.name, values,
        describe(values))
    check_grad_output_layout(function, spec.name, values, attention_reference, describe(values))
    covers(MULTIHEAD)
    with case("causal mask, each of Q, K, V alone requiring grad"):
        check_each_input_alone(function, spec, attention_values((2,), 4, 5, 3, 2, device,
                                                                mask="causal", seed=30))
    values = attention_values((2, 2), LQ, LK, D, DV, device, mask="causal", seed=32)
    check_no_gradient_unasked(function, spec, values, describe(values), dp=True,
                              dp_returned_named=True)
    covers("each gradient only when needed")
    check_stable(function, spec, device)
    # float32 against SDPA itself; the domain runs float32 (and float64) on its own inputs
    for seed, (lead, Lq, Lk, d, dv, mask) in enumerate(
            [((2, 3), 5, 7, 4, 3, "causal"), ((2, 2), 7, 5, 4, 4, "random")]):
        values = attention_values(lead, Lq, Lk, d, dv, device, mask=mask, seed=seed + 40,
                                  dtype=torch.float32)
        with case(describe(values)):
            check_against_sdpa(function, spec, values,
                               lambda forward: check_saves(spec.name, forward, values))
    covers("float32 against F.scaled_dot_product_attention")
    values = attention_values((2,), 3, 4, 2, 3, device, mask="random")
    check_second_derivative(function, spec.name, values, attention_reference, describe(values))


CONTRACT = ("mask None, causal, padding, broadcast 2-d", "Lq != Lk, one query, one key",
            "each gradient only when needed", "scores in the thousands", FILL_CASE, MULTIHEAD,
            "float32 against F.scaled_dot_product_attention")


def sdpa_full(ScaledDotProductAttention, device) -> None:
    attention_full(check_is_function(ScaledDotProductAttention, SDPA), SDPA, device)


def _attention_example() -> tuple:
    """Q, K, V of one short sequence and its scale: small enough for whole Jacobians."""
    Q, K, V = (sample((3, 4), "cpu", seed=seed) for seed in (0, 1, 2))
    return Q, K, V, 0.5


EXERCISES = [
    OneThreadExercise("ScaledDotProductAttention", "06_attention", sdpa_full,
             example=lambda: _attention_example(), contract=CONTRACT,
             domain=Domain(SDPA, attention_domain_values, constants={"scale": SCALE})),
]
