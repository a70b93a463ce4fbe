"""Lesson 06's transfer exercise: AttentionWithBias, softmax(Q K^T * scale + bias) V with a
float bias that broadcasts to the scores and may require grad (relative positions, padding
with -inf, ALiBi)."""

import math

import torch

from ...checks import (Spec, case, check_is_function, check_no_ctx_tensors,
                      check_values_and_gradients, make_inputs, run_forward)
from ...contract import check_each_input_alone, covers
from ...domain import Domain
from ...errors import GradingError
from ...exercise import sample
from ...precision import finding_held
from ...probes import record_returned_gradients
from .attention import check_against_sdpa
from .attention_double import check_second_derivative
from .attention_work import DV, D, LK, LQ
from .attention_work import check_no_gradient_unasked as check_no_work_unasked
from .attention_scale import check_any_scale, scale_ignored
from .attention_inputs import (DIAGONAL_ONLY, ELEMENTWISE, MULTIHEAD, SDPA_SCALE,
                               OneThreadExercise, same as _close)
from .attention_layout import check_grad_output_layout, check_multihead_layout
from .attention_bias_padding import check_padding_beats_large_scores
from .attention_saves import check_saves_no_copy

LATER_IN_LESSON = True
NAME = "AttentionWithBias"


def bias_reference(Q, K, V, bias, scale):
    """softmax(Q @ K^T * scale + bias) @ V by autograd's own ops."""
    return torch.softmax((Q @ K.transpose(-2, -1)) * scale + bias, dim=-1) @ V


SPEC = Spec(NAME, ("Q", "K", "V", "bias", "scale"), bias_reference)


def make_bias(kind: str, B: int, H: int, Lq: int, Lk: int, device, seed: int = 0):
    """A bias of one of the shapes people use; every row keeps at least one finite key."""
    generator = torch.Generator().manual_seed(seed)
    if kind == "alibi":  # (H, Lq, Lk): -slope * distance, a slope per head
        slopes = 2.0 ** (-8.0 * torch.arange(1, H + 1, dtype=torch.float64) / H)
        distance = (torch.arange(Lq)[:, None] - torch.arange(Lk)[None, :]).abs()
        return (-slopes[:, None, None] * distance).to(device)
    if kind == "padding":  # (B, 1, 1, Lk): 0 for real keys, -inf for padding
        lengths = torch.randint(1, Lk + 1, (B,), generator=generator)
        lengths[0] = max(1, Lk - 2)
        keep = torch.arange(Lk)[None, :] < lengths[:, None]
        bias = torch.zeros(B, 1, 1, Lk, dtype=torch.float64).masked_fill(~keep[:, None, None],
                                                                         float("-inf"))
        return bias.to(device)
    shape = {"relative": (Lq, Lk), "heads": (H, 1, Lk), "full": (B, H, Lq, Lk),
             "keys": (Lk,), "leading ones": (1, 1, Lq, Lk), "queries": (Lq, 1)}[kind]
    return torch.randn(shape, generator=generator, dtype=torch.float64).to(device)


def bias_values(kind: str, B: int, H: int, Lq: int, Lk: int, d: int, dv: int, device, *,
                seed: int = 0, dtype=torch.float64, magnitude: float = 1.0,
                scale: float | None = None) -> dict:
    lead = (B, H)
    return {"Q": magnitude * sample((*lead, Lq, d), device, seed=seed, dtype=dtype),
            "K": magnitude * sample((*lead, Lk, d), device, seed=seed + 1, dtype=dtype),
            "V": sample((*lead, Lk, dv), device, seed=seed + 2, dtype=dtype),
            "bias": make_bias(kind, B, H, Lq, Lk, device, seed + 3).to(dtype),
            "scale": 1 / math.sqrt(d) if scale is None else scale}


def describe(values: dict) -> str:
    Q, K, bias = values["Q"], values["K"], values["bias"]
    infinite = ", -inf entries" if torch.isinf(bias).any() else ""
    return (f"Q {tuple(Q.shape)}, K {tuple(K.shape)}, bias of shape {tuple(bias.shape)}"
            f"{infinite}, {str(Q.dtype).removeprefix('torch.')}")


def _broadcast_hint(got, dS, shape) -> str | None:
    """A grad_bias of bias.shape that averages dS over the broadcast dimensions, or takes one
    entry along a dimension of size 1 instead of summing along it."""
    copies = dS.numel() // max(1, torch.Size(shape).numel())
    if copies > 1 and _close(got, dS.sum_to_size(shape) / copies):
        return (f"is the mean of dS over the dimensions the bias was broadcast along ({copies} "
                "scores share each bias entry), not their sum: each score the entry feeds adds "
                "its whole dS")
    one = dS.sum(dim=tuple(range(dS.dim() - len(shape)))) if dS.dim() > len(shape) else dS
    kept = [i for i, n in enumerate(shape) if n == 1 and one.shape[i] > 1]
    for i in kept:
        one = one.narrow(i, 0, 1)
    if kept and _close(got, one):
        return (f"takes the first entry along dimension {kept[0] - len(shape)} of dS, where the "
                "bias has size 1, instead of adding up every score that entry feeds")
    ones = [i - len(shape) for i, n in enumerate(shape)
            if n == 1 and dS.shape[i - len(shape)] > 1]
    if ones and _close(got, dS.reshape(-1, *shape).sum(0)):
        return (f"is dS.reshape(-1, *bias.shape).sum(0): that adds dS up in consecutive chunks "
                f"of the bias's size, which follows the broadcast only over the leading "
                f"dimensions the bias lacks; along dimension {ones[0]}, where the bias of shape "
                f"{tuple(shape)} has size 1, it mixes scores that other bias entries fed: sum "
                "over every dimension the bias was broadcast along, keeping the size-1 ones "
                "(Hint 2)")
    return None


def _bias_gradient_right(function, values: dict) -> bool:
    """Is the gradient the learner returns for the bias right on ``values``?"""
    inputs, fresh = make_inputs(values), make_inputs(values)
    output = function.apply(*inputs.values())
    got, = torch.autograd.grad(output, [inputs["bias"]], torch.ones_like(output))
    true, = torch.autograd.grad(bias_reference(**fresh), [fresh["bias"]], torch.ones_like(output))
    return _close(got, true)


def recognise(function, values: dict) -> str | None:
    """The hint for a backward whose numbers match a mistake this exercise is prone to."""
    inputs = make_inputs(values)
    output = function.apply(*inputs.values())
    grad_output = torch.randn(output.shape, generator=torch.Generator().manual_seed(9),
                              dtype=output.dtype).to(output.device)
    names = ("Q", "K", "V", "bias")
    got = torch.autograd.grad(output, [inputs[n] for n in names], grad_output, allow_unused=True)
    Q, K, V, bias, scale = (values[n] for n in ("Q", "K", "V", "bias", "scale"))
    P = torch.softmax((Q @ K.transpose(-2, -1)) * scale + bias, dim=-1)
    dP = grad_output @ V.transpose(-2, -1)
    right = P * (dP - (dP * P).sum(-1, keepdim=True))
    true_bias = right.sum_to_size(bias.shape)
    # only where the true bias gradient is clearly non-zero (a (Lq, 1) bias's is 0: any tiny
    # error there is "scale times" it too)
    if (scale != 1 and true_bias.abs().max() > 1e-3 * right.abs().max()
            and _close(got[3], scale * true_bias)):
        if bias.dim() > 1 and bias.shape[-2] > 1 and _bias_gradient_right(
                function, dict(values, bias=bias[..., :1, :].clone())):
            return (f"{NAME}'s grad_bias is scale times the right one for a bias of shape "
                    f"{tuple(bias.shape)}, and right for one of shape "
                    f"{tuple(bias[..., :1, :].shape)}, broadcast over the queries: with nothing "
                    "to sum, sum_to_size returns dS itself, so the grad_bias you return is dS, "
                    "and a later in-place write into dS (grad_S.mul_(scale), *=) changes it "
                    "too; return a tensor no later line writes into (scale out of place)")
        return (f"{NAME}'s grad_bias is scale times the right one: the bias is added after the "
                "scores are scaled; nudge one bias entry by eps: by how much does each score it "
                "feeds move? (Hint 1)")
    broadcast = _broadcast_hint(got[3], right, bias.shape)
    if broadcast is not None:
        return f"{NAME}'s grad_bias {broadcast}"
    for wrong, hint in ((P * dP, ELEMENTWISE), (P * (1 - P) * dP, DIAGONAL_ONLY)):
        if _close(got[3], wrong.sum_to_size(bias.shape)) or _close(got[0], scale * wrong @ K):
            return f"{NAME}'s backward {hint}"
    return None


def check_no_gradient_unasked(function, device) -> None:
    """Each of Q, K, V and bias alone requiring grad (``attention_work``), and the bias's own
    part: the bias (H, 1, Lk) has 8 entries, and no other sum in backward leaves 8 (a row sum
    leaves B * H * Lq = 12): a sum down to 8 entries is the bias's gradient."""
    values = bias_values("heads", 2, 2, LQ, LK, D, DV, device, seed=25)

    def bias_sum(alone, products):
        if alone != "bias" and values["bias"].numel() in products.reduced:
            raise GradingError(
                f"{NAME}.backward sums dS down to the bias's shape when only {alone} "
                "requires grad: that is grad_bias, computed for nobody; compute each "
                "gradient only when its entry of ctx.needs_input_grad is True")

    check_no_work_unasked(function, SPEC, values, describe(values), others=("bias",), dp=True,
                          serves="dQ, dK and the bias's gradient", gate="Q, K or bias",
                          extra=bias_sum)


def _returned_bias_gradient(function, values: dict, needing: set):
    """What backward itself returns for the bias (before the engine sums it to the bias's
    shape) when the inputs ``needing`` require grad."""
    probe, returned = record_returned_gradients(function)
    inputs = make_inputs(values, requires_grad=needing)
    output = run_forward(probe, SPEC, inputs).output
    torch.autograd.grad(output, [inputs[n] for n in sorted(needing)], torch.ones_like(output),
                        allow_unused=True)
    raw = returned[-1] if returned else ()
    return raw[3] if len(raw) > 3 else None


def bias_gated_on_q_or_k(function, values: dict, error: GradingError) -> str | None:
    """The hint for a backward that computes grad_bias only inside the branch that Q's or K's
    need opens: None for the bias alone and beside V, a gradient beside Q and beside K."""
    if error.mistake != f"{NAME}/gate-on-wrong-entry" or "for bias" not in str(error):
        return None
    try:
        beside = {other: _returned_bias_gradient(function, values, {"bias", other} - {None})
                  for other in (None, "V", "Q", "K")}
    except Exception:  # noqa: BLE001 - the learner's code may raise anything: keep the first
        return None
    if not (beside[None] is None and beside["V"] is None
            and isinstance(beside["Q"], torch.Tensor) and isinstance(beside["K"], torch.Tensor)):
        return None
    return (f"{NAME}.backward computes grad_bias only inside the branch that Q's and K's "
            "gradients open: None for bias when it requires grad alone or beside V, a gradient "
            "when Q or K requires grad too; grad_bias needs dS as dQ and dK do: compute dS when "
            "Q, K or bias needs a gradient, and grad_bias when bias's entry of "
            "ctx.needs_input_grad is True")


def check_bias_gradient_shape(function, values: dict) -> None:
    """What backward itself returns for the bias has exactly ``bias.shape``: the engine would
    sum a gradient of a shape the bias broadcasts to down to it (Function contract, rule 2),
    but this exercise's contract asks backward for the reduction."""
    got = _returned_bias_gradient(function, values, {"Q", "K", "V", "bias"})
    shape = tuple(values["bias"].shape)
    if isinstance(got, torch.Tensor) and tuple(got.shape) != shape:
        raise GradingError(
            f"{NAME}.backward returns the bias's gradient with shape {tuple(got.shape)} for a "
            f"bias of shape {shape}: autograd's engine sums it down to the bias for you, but "
            "the contract asks backward for exactly bias.shape: which scores does one entry of "
            "the bias feed, and what does each of them add to its gradient? (Hint 2)",
            mistake=f"{NAME}/bias-gradient-not-bias-shape")


def check_case(function, values: dict):
    """Values and gradients against the reference, with the mistakes above named."""
    try:
        return check_values_and_gradients(function, SPEC, values)
    except GradingError as error:
        mistake = None
        try:
            hint = scale_ignored(function, NAME, values, bias_reference)
            if hint is not None:
                mistake = f"{NAME}/scale-ignored"
            elif not finding_held():  # a float32 step's rounding can look like any other
                hint = recognise(function, values)  # mistake's: the finding held names it
        except Exception:  # the learner's code may raise anything: keep the first hint
            hint = None
        if hint is None:
            raise
        raise GradingError(hint, str(error), mistake=mistake) from error


# (bias kind, B, H, Lq, Lk, d, dv): the shapes people use, a 1-D and a (Lq, 1) bias
CASES = [("relative", 2, 3, 4, 5, 3, 2), ("heads", 2, 3, 5, 4, 2, 3), ("full", 2, 2, 3, 4, 3, 3),
         ("alibi", 1, 4, 5, 5, 2, 2), ("padding", 3, 2, 4, 6, 3, 2), ("keys", 2, 2, 4, 3, 2, 2),
         ("leading ones", 1, 2, 3, 4, 2, 3), ("queries", 2, 1, 4, 5, 3, 2)]


def attention_bias_full(AttentionWithBias, device) -> None:
    function = check_is_function(AttentionWithBias, SPEC)
    for seed, (kind, B, H, Lq, Lk, d, dv) in enumerate(CASES):
        values = bias_values(kind, B, H, Lq, Lk, d, dv, device, seed=seed)
        with case(describe(values)):
            forward, _ = check_case(function, values)
            check_no_ctx_tensors(SPEC, forward)
            check_bias_gradient_shape(function, values)
    covers("bias (Lq, Lk), (H, 1, Lk), (B, H, Lq, Lk), ALiBi, (Lk,), (Lq, 1)")
    covers("the bias's gradient of exactly bias.shape")
    covers("-inf padding in the bias")
    check_any_scale(function, NAME, bias_values("relative", 2, 2, 3, 4, 2, 2, device, seed=14),
                    bias_reference)
    for kind in ("heads", "padding"):
        values = bias_values(kind, 2, 2, 3, 4, 2, 2, device, seed=20)
        with case(describe(values) + ", each input alone requiring grad"):
            try:
                check_each_input_alone(function, SPEC, values, frozen_get_none=True)
            except GradingError as error:
                hint = bias_gated_on_q_or_k(function, values, error)
                if hint is None:
                    raise
                raise GradingError(hint, str(error),
                                   mistake=f"{NAME}/bias-gradient-gated-on-q-or-k") from error
    check_no_gradient_unasked(function, device)
    covers("each gradient only when needed")
    values = bias_values("alibi", 1, 2, 4, 6, 4, 3, device, seed=22, magnitude=6.0, scale=60.0)
    with case(describe(values) + ", scores in the thousands"):
        check_values_and_gradients(function, SPEC, values)
    covers("scores in the thousands")
    check_padding_beats_large_scores(function, SPEC, bias_reference, describe, device)
    values = bias_values("full", 2, 2, 6, 7, 8, 4, device, seed=23, dtype=torch.float32)
    with case(describe(values)):
        check_against_sdpa(function, SPEC, values,
                           lambda forward: check_saves_no_copy(NAME, forward, values))
    covers("float32 against F.scaled_dot_product_attention")
    values = bias_values("relative", 2, 3, 4, 5, 3, 2, device, seed=25)
    check_multihead_layout(lambda f, v: check_saves_no_copy(NAME, check_case(f, v)[0], v),
                           function, NAME, values, describe(values))
    check_grad_output_layout(function, NAME, values, bias_reference, describe(values))
    covers(MULTIHEAD)
    values = bias_values("heads", 1, 2, 2, 3, 2, 2, device, seed=24)
    check_second_derivative(function, NAME, values, bias_reference, describe(values))


def bias_domain_values(device, dtype=torch.float64, seed=0, scale=0.5) -> dict:
    """B 2, H 2, Lk 4: at seed 0 a (3, 4) bias (Lq 3); at other seeds (Lq 3 or 4 by parity)
    a full bias or one of shape (H, 1, Lk), so that two calls in one graph differ in every
    shape, the bias's included: the first full, so that its backward run with the second's
    bias shape (kept in a global) returns a gradient the engine cannot sum back to it."""
    kind = "relative" if seed == 0 else ("full" if seed % 2 else "heads")
    return bias_values(kind, 2, 2, 3 + seed % 2, 4, 2, 3, device, seed=seed, dtype=dtype,
                       scale=scale)


EXERCISES = [
    OneThreadExercise(NAME, "06_attention", attention_bias_full,
             contract=("bias (Lq, Lk), (H, 1, Lk), (B, H, Lq, Lk), ALiBi, (Lk,), (Lq, 1)",
                       "the bias's gradient of exactly bias.shape",
                       "-inf padding in the bias",
                       "each gradient only when needed",
                       "scores in the thousands",
                       "float32 against F.scaled_dot_product_attention", MULTIHEAD),
             example=lambda: tuple(bias_values("relative", 1, 1, 3, 4, 2, 2, "cpu").values()),
             domain=Domain(SPEC, bias_domain_values, constants={"scale": SDPA_SCALE})),
]
