"""Lesson 06: the attention mistakes a probe names when ScaledDotProductAttention's or
MemoryEfficientAttention's values or gradients are wrong (``attention.check_attention``)."""

import torch

from ...checks import Spec, make_inputs
from .attention_inputs import (DIAGONAL_ONLY, ELEMENTWISE, attention_reference, attention_values,
                               same as _same)
from .attention_mask import (POLARITY, finite_fill, masked_above_values,
                             reversed_at_moderate_scores, reversed_mask as _reversed)


def grad_output_like(output: torch.Tensor, seed: int = 0) -> torch.Tensor:
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


# the ids of known_mistake's hints, by a phrase of each (the first that a hint holds names it)
KNOWN_IDS = {"mask loses to large scores": "finite-mask-fill",
             MASKED_TAKE_PART: "masked-scores-take-part",
             "masks out the positions where mask is True": "mask-polarity-reversed",
             "log-sum-exp overflows": "log-sum-exp-without-maximum",
             "after subtracting one global maximum": "mask-after-global-maximum",
             "one maximum for the whole tensor": "one-global-maximum",
             "right once the same scores are made small": "no-row-maximum",
             "recomputes the probabilities without the mask": "backward-drops-mask",
             "inf times the mask's 0 is nan": "mask-multiplied-after-exp",
             "exp(S) and exp(L) apart": "probabilities-as-exp-over-exp",
             "treats the softmax as element-wise": "softmax-as-element-wise",
             "only the diagonal of the softmax's Jacobian": "jacobian-diagonal-only",
             "lays its row sums out as a row": "row-sum-laid-out-as-a-row",
             "log-sum-exp of the unscaled scores": "log-sum-exp-scaled-afterwards",
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
                "without changing P? (question 2 of \"Derive: what must forward keep?\")")
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
    scale = values["scale"]
    if not _same(output, expected) and scale not in (0, 1):  # L = scale * LSE(Q K^T)
        unscaled = scale * torch.logsumexp(scores / scale, dim=-1, keepdim=True)
        late = (scores - unscaled).exp() @ values["V"]
        if not _same(late, expected) and _same(output, late):
            return (f"{spec.name} takes the log-sum-exp of the unscaled scores and multiplies "
                    "it by scale afterwards: scale * log(sum(exp(Q K^T))) is not "
                    "log(sum(exp(scale * Q K^T))), so the rows of exp(S - L) do not sum to 1; "
                    "take the log-sum-exp of the scores as they enter the softmax")
    if not _same(output, expected):  # a finite fill loses to masked scores far above
        return finite_fill(function, spec.name, values)
    grad_output = grad_output_like(expected)
    wanted = [inputs["Q"], inputs["K"], inputs["V"]]
    grad_q, grad_k, grad_v = torch.autograd.grad(output, wanted, grad_output, allow_unused=True)
    fresh = make_inputs(values)
    true_q, true_k, true_v = torch.autograd.grad(attention_reference(**fresh),
                                                 [fresh["Q"], fresh["K"], fresh["V"]],
                                                 grad_output)
    if values.get("mask") is not None and not values["mask"].all():
        raw = (values["Q"] @ values["K"].transpose(-2, -1)) * values["scale"]
        unmasked = (raw - torch.logsumexp(scores, dim=-1, keepdim=True)).exp()
        dropped = unmasked.transpose(-2, -1) @ grad_output
        # named only where that prediction is finite and not the right gradient: where masked
        # scores lie far above, it is inf, as a backward's finite fill (-1e4) also gives
        if (torch.isfinite(dropped).all() and not _same(dropped, true_v)
                and _same(grad_v, dropped)):
            return (f"{spec.name}'s backward recomputes the probabilities without the mask: "
                    "exp(S - L) is then not 0 at the masked keys; fill them with -inf again "
                    "before exp, with the mask saved through save_for_backward")
        overflow = (raw - torch.logsumexp(scores, dim=-1, keepdim=True)).masked_fill(
            values["mask"], float("-inf")).exp().isinf().any()
        broken = any(isinstance(g, torch.Tensor) and not torch.isfinite(g).all()
                     for g in (grad_q, grad_k, grad_v))
        lse = torch.logsumexp(scores, dim=-1, keepdim=True)
        multiplied = ((raw - lse).exp() * values["mask"]).transpose(-2, -1) @ grad_output
        right_small = overflow and broken and _right_on(function, dict(
            values, scale=values["scale"] / 1000))
        unmasked = {n: v for n, v in values.items() if n != "mask"}
        truth_finite = bool(torch.isfinite(true_q).all() and torch.isfinite(true_k).all())
        if right_small and truth_finite and not _right_on(function, unmasked):
            return (f"{spec.name}'s backward gives inf or nan gradients for large scores even "
                    "without the mask, though its output is right, and right with the scores "
                    "1000 times smaller: the recomputed P overflows or underflows; exp(S) and "
                    "exp(L) apart reach inf (or 0), and their ratio is nan; take one exponent, "
                    "exp(S - L), every one of which is <= 0")
        if right_small and truth_finite and not _same(grad_v, multiplied):
            return (f"{spec.name}'s backward mask loses to large scores: its gradients are inf "
                    "or nan where masked scores lie far above the visible ones, though its "
                    "output is right, and right with the scores 1000 times smaller: backward's "
                    "exp(S - L) is not 0 at the masked keys (a finite fill such as -1e4 lies far "
                    "above the visible scores' L); fill them with -inf before exp, as forward "
                    "does")
        if overflow and broken and truth_finite:
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


def _right_on(function, values: dict) -> bool:
    """Are the gradients right on ``values`` (the scores made smaller, the mask left out)?"""
    inputs = make_inputs(values)
    output = function.apply(*inputs.values())
    grad_output = grad_output_like(output)
    wanted = [inputs[n] for n in ("Q", "K", "V")]
    got = torch.autograd.grad(output, wanted, grad_output, allow_unused=True)
    fresh = make_inputs(values)
    true = torch.autograd.grad(attention_reference(**fresh), [fresh[n] for n in ("Q", "K", "V")],
                               grad_output)
    return all(_same(g, t) for g, t in zip(got, true))


def row_sum_without_keepdim(function, spec: Spec, device) -> str | None:
    """The hint for a backward whose row sum drops its dimension: on one square head (no
    batch) the (Lq,) sums broadcast as a row, across the keys, instead of raising."""
    values = attention_values((), 4, 4, 3, 2, device, seed=12)
    inputs = make_inputs(values)
    output = function.apply(*inputs.values())
    grad_output = grad_output_like(output.detach())
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
