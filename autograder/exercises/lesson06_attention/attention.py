"""Lesson 06: ScaledDotProductAttention, and the attention checks MemoryEfficientAttention
(``attention_memory_efficient``) shares (FlashAttention is in ``flash_attention``)."""

import torch
import torch.nn.functional as F

from ...checks import (Spec, case, check_backward_by_hand, check_gradcheck, check_is_function,
                      check_no_ctx_tensors, check_values_and_gradients, make_inputs,
                      run_backward, run_forward)
from ...contract import check_each_input_alone, covers
from ...diagnose import diagnose_gradient, diagnose_values
from ...domain import Domain
from ...errors import GradingError
from ...exercise import sample
from .attention_inputs import (DIAGONAL_ONLY, ELEMENTWISE, MULTIHEAD, SCALE,  # noqa: F401
                               attention_domain_values, attention_reference, attention_values,
                               describe, make_mask, one_thread, OneThreadExercise,
                               same as _same)
from ...twice import check_backward_twice
from .attention_double import check_second_derivative
from .attention_layout import check_grad_output_layout, check_multihead_layout
from .attention_mask import (FILL_CASE, POLARITY, check_mask_polarity, finite_fill,
                             masked_above_values, reversed_at_moderate_scores,
                             reversed_mask as _reversed)
from .attention_mask_gradient import check_mask_gradient
from .attention_precision import narrow_saves
from .attention_saves import check_saves_no_copy
from .contracts import SCALED_DOT_PRODUCT_CLAUSES

INPUT_NAMES = ("Q", "K", "V", "scale", "mask")


SDPA = Spec("ScaledDotProductAttention", INPUT_NAMES, attention_reference)
MEMORY_EFFICIENT = Spec("MemoryEfficientAttention", INPUT_NAMES, attention_reference)


# ------------------------------------------------------------------------- known mistakes
def _grad_output_like(output: torch.Tensor, seed: int = 0) -> torch.Tensor:
    """The grad_output check_values_and_gradients uses, rebuilt."""
    generator = torch.Generator().manual_seed(seed)
    return torch.randn(output.shape, generator=generator, dtype=output.dtype).to(output.device)


def _wrong_gradients(values: dict, grad_output: torch.Tensor) -> dict:
    """dQ and dK from the backwards people get wrong, by mistake name."""
    Q, K, V, scale = (values[n] for n in ("Q", "K", "V", "scale"))
    mask = values.get("mask")
    scores = (Q @ K.transpose(-2, -1)) * scale
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    P = torch.softmax(scores, dim=-1)
    dP = grad_output @ V.transpose(-2, -1)
    variants = {
        "no row sum": P * dP,
        "diagonal only": P * (1 - P) * dP,
        "row sum over queries": P * (dP - (dP * P).sum(-2, keepdim=True)),
    }
    if P.shape[-1] == P.shape[-2]:  # (..., Lq) sums broadcast across the keys only if square
        variants["row sum as a row"] = P * (dP - (dP * P).sum(-1).unsqueeze(-2))
    return {mistake: (scale * dS @ K, scale * dS.transpose(-2, -1) @ Q)
            for mistake, dS in variants.items()}


def _global_max(values: dict, *, mask_first: bool) -> torch.Tensor:
    """The forward of a learner who subtracts one global maximum, the whole tensor's, and
    masks after exp (the maximum then counts the masked scores) or fills -inf first."""
    scores = (values["Q"] @ values["K"].transpose(-2, -1)) * values["scale"]
    mask = values.get("mask")
    if mask is not None and mask_first:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = (scores - scores.max()).exp()
    if mask is not None and not mask_first:
        weights = weights * mask
    return (weights / weights.sum(-1, keepdim=True)) @ values["V"]


MASKED_TAKE_PART = ("the row maximum (or the softmax's normaliser) must be taken after the "
                    "masked scores are filled with -inf, not before, and not renormalised "
                    "afterwards")

MASK_NONE = ("{name}.forward fails when mask is None, the most common call: the missing "
             "mask=None path; give mask the default None and skip masking when it is None")


# the ids of known_mistake's hints, by a phrase of each
KNOWN_IDS = {"masks out the positions where mask is True": "mask-polarity-reversed",
             "log-sum-exp overflows": "log-sum-exp-without-maximum",
             "after subtracting one global maximum": "mask-after-global-maximum",
             "one maximum for the whole tensor": "one-global-maximum",
             "right once the same scores are made small": "no-row-maximum",
             "recomputes the probabilities without the mask": "backward-drops-mask",
             "inf times the mask's 0 is nan": "mask-multiplied-after-exp",
             "treats the softmax as element-wise": "softmax-as-element-wise",
             "only the diagonal of the softmax's Jacobian": "jacobian-diagonal-only",
             "lays its row sums out as a row": "row-sum-laid-out-as-a-row",
             "sums dP * P over the queries": "row-sum-over-the-queries"}


def known_mistake(function, spec: Spec, values: dict) -> str | None:
    """The hint for a mistake this lesson names, when the submission's numbers match it."""
    inputs = make_inputs(values)
    output = function.apply(*inputs.values())
    expected = attention_reference(**make_inputs(values, requires_grad=False))
    flipped = _reversed(values)
    if (flipped is not None and _same(output, attention_reference(**flipped))
            and reversed_at_moderate_scores(function, values["Q"].device)):
        return POLARITY.format(name=spec.name)
    scores = (values["Q"] @ values["K"].transpose(-2, -1)) * values["scale"]
    if values.get("mask") is not None:
        scores = scores.masked_fill(~values["mask"], float("-inf"))
    naive = (scores - scores.exp().sum(-1, keepdim=True).log()).exp() @ values["V"]
    if not _same(naive, expected) and _same(output, naive):  # log-sum-exp without the max
        return (f"{spec.name}'s log-sum-exp overflows for large scores: exp(S) is inf above "
                "about 88 in float32 (709 in float64), so log(sum(exp(S))) is inf and every "
                "P = exp(S - inf) is 0; what can you subtract from every score of a row "
                "without changing P? (question 2 of \"Derive: one number per query row\")")
    if (isinstance(output, torch.Tensor) and torch.isfinite(expected).all()
            and not torch.isfinite(output).all()):
        after = _same(output, _global_max(values, mask_first=False))
        first = _same(output, _global_max(values, mask_first=True))
        if after and first:  # masked scores far above the visible ones tell the two apart
            above = masked_above_values(values["Q"].device)
            with torch.no_grad():
                again = function.apply(*make_inputs(above, requires_grad=False).values())
            after = _same(again, _global_max(above, mask_first=False))
            first = _same(again, _global_max(above, mask_first=True))
        if after and not first:  # the masked scores set the maximum: the mask came after
            return (f"{spec.name} applies the mask after subtracting one global maximum: rows "
                    "far below it underflow to 0 / 0 = nan; fill masked scores with -inf first, "
                    "then subtract each row's own maximum")
        if after or first:
            return (f"{spec.name} subtracts one maximum for the whole tensor instead of each "
                    "row's own: rows whose scores all lie far below it underflow to 0 / 0 = "
                    "nan; subtract each row's own maximum (amax over the keys, keepdim=True), "
                    "taken after the masked scores are filled with -inf")
        small = dict(values, scale=values["scale"] / 1000)  # the same inputs, scores near 0
        with torch.no_grad():
            moderate = function.apply(*make_inputs(small, requires_grad=False).values())
        if not _same(moderate, attention_reference(**small)):
            return None  # wrong at small scores too: the magnitude is not what breaks it
        if values.get("mask") is not None and not values["mask"].all():
            unmasked = {n: v for n, v in values.items() if n != "mask"}
            with torch.no_grad():
                free = function.apply(*make_inputs(unmasked, requires_grad=False).values())
            if _same(free, attention_reference(**unmasked)):
                return (f"{spec.name}'s output has inf or nan for large scores with the mask, "
                        "and is right on the same Q, K, V without it: the masked scores still "
                        f"take part: {MASKED_TAKE_PART}")
        return (f"{spec.name}'s output has inf or nan for large scores, and is right once the "
                "same scores are made small: subtract each row's maximum score before exp "
                "(softmax is unchanged by it)")
    if not _same(output, expected):  # a finite fill loses to masked scores far above
        return finite_fill(function, spec.name, values)
    grad_output = _grad_output_like(expected)
    wanted = [inputs["Q"], inputs["K"], inputs["V"]]
    grad_q, grad_k, grad_v = torch.autograd.grad(output, wanted, grad_output, allow_unused=True)
    fresh = make_inputs(values)
    true_q, true_k = torch.autograd.grad(attention_reference(**fresh), [fresh["Q"], fresh["K"]],
                                         grad_output)
    if values.get("mask") is not None and not values["mask"].all():
        raw = (values["Q"] @ values["K"].transpose(-2, -1)) * values["scale"]
        unmasked = (raw - torch.logsumexp(scores, dim=-1, keepdim=True)).exp()
        if _same(grad_v, unmasked.transpose(-2, -1) @ grad_output):
            return (f"{spec.name}'s backward recomputes the probabilities without the mask: "
                    "exp(S - L) is then not 0 at the masked keys; fill them with -inf again "
                    "before exp, with the mask saved through save_for_backward")
        overflow = (raw - torch.logsumexp(scores, dim=-1, keepdim=True)).masked_fill(
            values["mask"], float("-inf")).exp().isinf().any()
        broken = any(isinstance(g, torch.Tensor) and not torch.isfinite(g).all()
                     for g in (grad_q, grad_k, grad_v))
        if overflow and broken and torch.isfinite(true_q).all() and torch.isfinite(true_k).all():
            return (f"{spec.name}'s backward gives inf or nan gradients where masked scores lie "
                    "far above the visible ones, though its output is right: exp(S - L) of an "
                    "unfilled masked score overflows to inf, and inf times the mask's 0 is nan; "
                    "fill the masked scores with -inf before exp, as forward does, rather than "
                    "multiplying by the mask after it")
    for mistake, (wrong_q, wrong_k) in _wrong_gradients(values, grad_output).items():
        # named only where these inputs tell that backward from the right one
        if ((_same(grad_q, wrong_q) and not _same(true_q, wrong_q))
                or (_same(grad_k, wrong_k) and not _same(true_k, wrong_k))):
            if mistake == "no row sum":
                return f"{spec.name}'s backward {ELEMENTWISE}"
            if mistake == "diagonal only":
                return f"{spec.name}'s backward {DIAGONAL_ONLY}"
            if mistake == "row sum as a row":
                return (f"{spec.name}'s backward lays its row sums out as a row: query i's sum "
                        "lands in column i (what .sum(-1) without keepdim does on square "
                        "scores); keep the summed dimension (keepdim=True) so that each row's "
                        "number meets its own row")
            return (f"{spec.name}'s backward sums dP * P over the queries: which dimension of "
                    "dP * P indexes the keys? Sum over that one, and keep it (keepdim=True) so "
                    "that each row's number meets its own row")
    return None


def _row_sum_without_keepdim(function, spec: Spec, device) -> str | None:
    """The hint for a backward whose row sum drops its dimension: on one square head (no
    batch) the (Lq,) sums broadcast as a row, across the keys, instead of raising."""
    values = attention_values((), 4, 4, 3, 2, device, seed=12)
    inputs = make_inputs(values)
    output = function.apply(*inputs.values())
    grad_output = _grad_output_like(output.detach())
    grad_q, = torch.autograd.grad(output, [inputs["Q"]], grad_output)
    Q, K, V, scale = (values[n] for n in ("Q", "K", "V", "scale"))
    P = torch.softmax((Q @ K.T) * scale, dim=-1)
    dP = grad_output @ V.T
    wrong = scale * (P * (dP - (dP * P).sum(-1))) @ K
    if _same(grad_q, wrong):
        return (f"{spec.name}'s backward drops the dimension of its row sum: .sum(-1) "
                "gives shape (..., Lq), which fails to broadcast against the (..., Lq, Lk) "
                "scores, or, for one square head, broadcasts along the wrong axis (query i's "
                "sum lands in column i); keep the summed dimension (keepdim=True) so that "
                "each row's number meets its own row")
    return None


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
                    hint = _row_sum_without_keepdim(function, spec, values["Q"].device)
                except Exception:  # the learner's code may raise anything; keep the first hint
                    hint = None
                if hint is not None:
                    raise GradingError(hint, str(error),
                                       mistake=f"{spec.name}/row-sum-without-keepdim") from error
            try:
                hint = known_mistake(function, spec, values)
                mistake = {phrase: f"{spec.name}/{name}" for phrase, name in KNOWN_IDS.items()}
                if hint is not None and "mask loses to large scores" in hint:
                    mistake = f"{spec.name}/finite-mask-fill"
                if hint is not None and MASKED_TAKE_PART in hint:
                    mistake = f"{spec.name}/masked-scores-take-part"
                if hint is None:
                    hint = narrow_saves(function, spec, values, attention_reference)
                    mistake = f"{spec.name}/saves-in-lower-precision"
            except Exception:  # the learner's code may raise anything; keep the first hint
                hint = None
            if hint is None:
                raise
            raise GradingError(hint, str(error), mistake=mistake) from error


def check_against_sdpa(function, spec: Spec, values: dict, device) -> None:
    """float32 output and all three gradients against F.scaled_dot_product_attention."""
    with case(describe(values)):
        _against_sdpa(function, spec, values, device)


def _against_sdpa(function, spec: Spec, values: dict, device) -> None:
    on_cuda = torch.device(device).type == "cuda"
    rtol, atol = (1e-3, 1e-4) if on_cuda else (1e-4, 1e-5)
    inputs = make_inputs(values)
    forward = run_forward(function, spec, inputs)
    check_saves_no_copy(spec.name, forward, values)
    fresh = make_inputs(values)
    expected = F.scaled_dot_product_attention(fresh["Q"], fresh["K"], fresh["V"],
                                              attn_mask=fresh.get("mask"), scale=fresh["scale"])
    where = "against F.scaled_dot_product_attention in float32"
    diagnose_values(f"{spec.name}'s output {where}", forward.output, expected.detach(),
                    rtol=rtol, atol=atol)
    grad_output = _grad_output_like(expected, seed=5)
    backward = run_backward(spec, forward.output, inputs, grad_output)
    truth = torch.autograd.grad(expected, [fresh[n] for n in ("Q", "K", "V")], grad_output)
    for name, grad, true in zip(("Q", "K", "V"), backward.grads, truth):
        try:
            diagnose_gradient(name, grad, true, rtol=rtol, atol=atol)
        except GradingError as error:
            raise GradingError(f"{error.hint} ({where})", error.details) from error


def check_stable(function, spec: Spec, device) -> None:
    """Scores in the thousands: exp overflows unless the row maximum is subtracted first; and
    masked scores far above the visible ones, which only a fill far below every score (-inf,
    torch.finfo(dtype).min) masks."""
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
    for seed, (lead, Lq, Lk, d, dv, mask) in enumerate(SHAPES):
        values = attention_values(lead, Lq, Lk, d, dv, device, mask=mask, seed=seed)
        forward, backward = check_attention(function, spec, values)
        check_no_ctx_tensors(spec, forward)
        check_backward_by_hand(spec, backward)
    covers("mask None, causal, padding, broadcast 2-d")
    covers("Lq != Lk, one query, one key")
    values = attention_values((2, 3), 4, 5, 3, 2, device, mask="causal", seed=9)
    check_multihead_layout(lambda f, v: check_saves_no_copy(
        spec.name, check_attention(f, spec, v)[0], v), function, spec.name, values,
        describe(values))
    check_grad_output_layout(function, spec.name, values, attention_reference, describe(values))
    covers(MULTIHEAD)
    check_mask_gradient(function, spec, attention_values((2,), 4, 5, 3, 2, device, mask="causal"))
    with case("causal mask, each of Q, K, V alone requiring grad"):
        check_each_input_alone(function, spec, attention_values((2,), 4, 5, 3, 2, device,
                                                                mask="causal", seed=30))
    check_noncontiguous_grad_output(function, spec, attention_values(
        (2,), 4, 5, 3, 2, device, mask="padding", seed=31))
    covers("non-contiguous grad_output")
    check_stable(function, spec, device)
    # float32 against SDPA itself; the domain runs float32 (and float64) on its own inputs
    for seed, (lead, Lq, Lk, d, dv, mask) in enumerate(
            [((2, 3), 5, 7, 4, 3, "causal"), ((2, 2), 7, 5, 4, 4, "random")]):
        check_against_sdpa(function, spec, attention_values(
            lead, Lq, Lk, d, dv, device, mask=mask, seed=seed + 40, dtype=torch.float32), device)
    covers("float32 against F.scaled_dot_product_attention")
    values = attention_values((2,), 3, 4, 2, 3, device, mask="random")
    check_backward_twice(function, spec, values, describe(values))
    check_second_derivative(function, spec.name, values, attention_reference, describe(values))
    check_gradcheck(function, spec, values)
    check_gradcheck(function, spec, attention_values((), 2, 3, 2, 2, device))


def check_noncontiguous_grad_output(function, spec: Spec, values: dict) -> None:
    """grad_output a transposed view, as after a later op's permute: backward must not assume
    a contiguous layout (``.view`` raises on it)."""
    inputs = make_inputs(values)
    with case(describe(values) + ", grad_output not contiguous"):
        output = run_forward(function, spec, inputs).output
        grad_output = _grad_output_like(output, seed=6).transpose(-2, -1).contiguous()
        grad_output = grad_output.transpose(-2, -1)
        grads = run_backward(spec, output, inputs, grad_output).grads
        fresh = make_inputs(values)
        truth = torch.autograd.grad(attention_reference(**fresh),
                                    [fresh[n] for n in ("Q", "K", "V")], grad_output)
        for name, grad, true in zip(("Q", "K", "V"), grads, truth):
            diagnose_gradient(name, grad, true)


CONTRACT = ("mask None, causal, padding, broadcast 2-d", "Lq != Lk, one query, one key",
            "non-contiguous grad_output", "scores in the thousands", FILL_CASE, MULTIHEAD,
            "float32 against F.scaled_dot_product_attention")


def sdpa_full(ScaledDotProductAttention, device) -> None:
    with one_thread():
        attention_full(check_is_function(ScaledDotProductAttention, SDPA), SDPA, device)


def _attention_example() -> tuple:
    """Q, K, V of one short sequence and its scale: small enough for whole Jacobians."""
    Q, K, V = (sample((3, 4), "cpu", seed=seed) for seed in (0, 1, 2))
    return Q, K, V, 0.5


EXERCISES = [
    OneThreadExercise("ScaledDotProductAttention", "06_attention", sdpa_full,
             example=lambda: _attention_example(), contract=CONTRACT,
             clauses=SCALED_DOT_PRODUCT_CLAUSES,
             domain=Domain(SDPA, attention_domain_values, constants={"scale": SCALE})),
]
