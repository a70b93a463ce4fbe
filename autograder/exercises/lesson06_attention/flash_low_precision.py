"""Lesson 06: FlashAttention with float16 / bfloat16 inputs: float32 accumulation, L saved in
float32, no gradient buffer in the default dtype, and scores large enough (max |S| about 85)
that a tile of scores rounded to the input dtype shows: bfloat16 numbers near 85 are 0.5
apart, so rounding a score moves its probability by up to e^0.25, about 28%. Measured against
float64 on ``low_precision_values``: the lesson's solution is off by 0.0072 (bfloat16) and
0.00094 (float16); with S computed in the input dtype, by 0.079 and 0.0082."""

import math

import torch

from ...checks import case, make_inputs, run_forward
from ...diagnose import diagnose_gradient, diagnose_values
from ...errors import GradingError
from .flash_probes import NAME, block_size, flash_values
from .flash_saves import check_flash_saves
from .flash_spec import FLASH, describe, flash_backward as _backward, flash_reference


def low_precision_values(device, dtype) -> dict:
    """Causal, Lq 40, Lk 56, d 8: Q and K four times a standard normal sample, so that the
    scores reach about 85 (rounded to ``dtype`` once made)."""
    made = flash_values((2,), 40, 56, 8, 8, device, causal=True, seed=80)
    return {n: ((4 * v if n in "QK" else v).to(dtype) if isinstance(v, torch.Tensor) else v)
            for n, v in made.items()}


def _rounded_scores_reference(values: dict) -> list[torch.Tensor]:
    """The float64 output when the tile of scores is rounded to the inputs' dtype: the product
    Q K^T rounded (as a half-precision matmul returns it), scaled after or before rounding."""
    dtype = values["Q"].dtype
    Q, K, V = (values[n].double() for n in "QKV")
    Lq, Lk = Q.shape[-2], K.shape[-2]
    product = (Q @ K.transpose(-2, -1)).to(dtype)
    outputs = []
    for scores in (product.double() * values["scale"],
                   (product * values["scale"]).to(dtype).double()):
        if values["causal"]:
            mask = torch.ones(Lq, Lk, dtype=torch.bool, device=Q.device).tril(Lk - Lq)
            scores = scores.masked_fill(~mask, float("-inf"))
        outputs.append(torch.softmax(scores, dim=-1) @ V)
    return outputs


def rounded_scores(output, values: dict, expected: torch.Tensor,
                   tolerance: float) -> tuple[str, str] | None:
    """(The hint, its mistake id) when the output is off by more than ``tolerance`` and within a quarter of its
    error of attention whose scores were rounded to the inputs' dtype."""
    if not isinstance(output, torch.Tensor) or output.shape != expected.shape:
        return None
    got = output.detach().double()
    error = (got - expected).abs().max().item()
    near = min((got - r).abs().max().item() for r in _rounded_scores_reference(values))
    if not (error > tolerance and near < error / 4):
        return _scaled_query_rounded(got, values, error)
    dtype = str(values["Q"].dtype).removeprefix("torch.")
    top = (values["Q"].double() @ values["K"].double().transpose(-2, -1)).abs().max().item()
    top *= values["scale"]
    gap = torch.finfo(values["Q"].dtype).eps * 2.0 ** math.floor(math.log2(top))
    return (f"{NAME}'s output in {dtype} is off by {error:.3g}, and within {near:.2g} of "
            f"attention whose scores were rounded to {dtype}: the tile of scores is kept in the "
            f"input dtype; near |S| = {top:.0f}, {dtype} numbers are {gap:g} apart, so a "
            f"rounded score moves its probability by up to e^{gap / 2:g} = "
            f"{math.exp(gap / 2):.3g} times; cast the q and k "
            "tiles to float32 before their product, and keep the scores and their exponentials "
            "in float32", "FlashAttention/scores-in-half")


def _scaled_query_rounded(got: torch.Tensor, values: dict, error: float) -> tuple[str, str] | None:
    """(The hint, its mistake id) when the output is within a quarter of its error of
    attention whose query was multiplied by the scale in the inputs' dtype, then rounded."""
    dtype = values["Q"].dtype
    scaled = (values["Q"] * values["scale"]).double()  # the product rounded to dtype
    K, V = values["K"].double(), values["V"].double()
    scores = scaled @ K.transpose(-2, -1)
    if values["causal"]:
        Lq, Lk = scores.shape[-2:]
        visible = torch.ones(Lq, Lk, dtype=torch.bool, device=scores.device).tril(Lk - Lq)
        scores = scores.masked_fill(~visible, float("-inf"))
    near = (got - torch.softmax(scores, dim=-1) @ V).abs().max().item()
    if not near < error / 4:
        return None
    name = str(dtype).removeprefix("torch.")
    return (f"{NAME}'s output in {name} is off by {error:.3g}, and within {near:.2g} of "
            f"attention whose query was multiplied by the scale in {name}: Q * scale rounds "
            f"every entry of Q to {name} once more before the product; where is your scale "
            "applied, and in which dtype?", "FlashAttention/scale-in-half")


def check_low_precision(function, values: dict, block: int, tolerance: float) -> None:
    """float16 / bfloat16 in and out, float32 accumulation, log-sum-exp saved in float32, and
    Q, K, V and O saved as themselves (no float32 copy of them)."""
    dtype = values["Q"].dtype
    wide = {n: (v.double() if isinstance(v, torch.Tensor) else v) for n, v in values.items()}
    with block_size(function, block), case(describe(values, block)):
        inputs = make_inputs(values)
        forward = run_forward(function, FLASH, inputs)
        # where .to(float32) copies: Q, K, V, O themselves, and L in float32 at least
        check_flash_saves(forward, values)
        output = forward.output
        if not isinstance(output, torch.Tensor) or output.dtype != dtype:
            got = getattr(output, "dtype", type(output).__name__)
            raise GradingError(f"{NAME} returned {got} for {str(dtype)[6:]} inputs: accumulate "
                               "in float32 and return the input's dtype")
        fresh = make_inputs(wide)
        expected = flash_reference(**fresh)
        try:
            diagnose_values(f"{NAME}'s output in {str(dtype)[6:]}", output.double(),
                            expected.detach(), rtol=tolerance, atol=tolerance)
        except GradingError as error:
            named = rounded_scores(output, values, expected.detach(), tolerance)
            if named is None:
                raise
            raise GradingError(named[0], str(error), mistake=named[1]) from error
        grad_output = torch.randn(output.shape, generator=torch.Generator().manual_seed(2),
                                  dtype=torch.float64).to(output.device)
        grads = _backward(output, inputs, grad_output.to(dtype))
        truth = torch.autograd.grad(expected, [fresh[n] for n in ("Q", "K", "V")], grad_output)
        # a gradient returned in another dtype is the Function contract's: a float32 buffer
        # made without dtype= is named by the float64 precision finding, float32 step
        for name, grad, true in zip("QKV", grads, truth):
            try:
                diagnose_gradient(name, grad if grad is None else grad.double(), true,
                                  rtol=4 * tolerance, atol=4 * tolerance)
            except GradingError as error:
                hint = rounded_backward_scores(name, grad, true, values, output,
                                               grad_output.to(dtype), 4 * tolerance)
                if hint is None:
                    raise
                raise GradingError(hint, str(error),
                                   mistake="FlashAttention/backward-scores-in-half") from error


def rounded_backward_scores(name: str, grad, true, values: dict, output, grad_output,
                            tolerance: float) -> str | None:
    """The hint when the output is right and grad_``name`` is off by more than ``tolerance``,
    within a quarter of its error of the gradient whose recomputed P = exp(S - L) took the
    scores rounded to the inputs' dtype (L exact, as forward saved it)."""
    if not isinstance(grad, torch.Tensor) or grad.shape != true.shape:
        return None
    dtype = values["Q"].dtype
    Q, K, V = (values[n].double() for n in "QKV")
    Lq, Lk, scale = Q.shape[-2], K.shape[-2], values["scale"]
    exact = (Q @ K.transpose(-2, -1)) * scale
    rounded = (Q @ K.transpose(-2, -1)).to(dtype).double() * scale
    if values["causal"]:
        hidden = ~torch.ones(Lq, Lk, dtype=torch.bool, device=Q.device).tril(Lk - Lq)
        exact, rounded = (s.masked_fill(hidden, float("-inf")) for s in (exact, rounded))
    P = torch.exp(rounded - torch.logsumexp(exact, dim=-1, keepdim=True))
    dO = grad_output.double()
    dS = P * (dO @ V.transpose(-2, -1) - (dO * output.detach().double()).sum(-1, keepdim=True))
    wrong = {"Q": scale * dS @ K, "K": scale * dS.transpose(-2, -1) @ Q,
             "V": P.transpose(-2, -1) @ dO}[name]
    got = grad.detach().double()
    error, near = (got - true).abs().max().item(), (got - wrong).abs().max().item()
    if not (error > tolerance and near < error / 4):
        return None
    kind = str(dtype).removeprefix("torch.")
    return (f"{NAME}'s grad_{name} in {kind} is off by {error:.3g}, though its output is right, "
            f"and within {near:.2g} of the gradient whose recomputed P = exp(S - L) took scores "
            f"rounded to {kind}: backward's tile of scores is kept in the input dtype; cast the "
            "q and k tiles to float32 before their product, as forward does")


def _row_sum_values(device) -> dict:
    """float16, one batch of 4 identical queries against 256 keys: key 0 scores 0, the 255
    others -c, for the float16 c in [2.5, 4) whose e^-c (computed in float32) rounds to float16
    with the largest relative error, so that a row sum of probabilities rounded to float16 is
    off by that error (about 4e-4) in every row, where float32 arithmetic is off by 1e-7."""
    candidates = torch.arange(2.5, 4.0, 1 / 256, dtype=torch.float64).half().float().unique()
    exact = torch.exp(-candidates)
    errors = ((exact.half().float() - exact) / exact).abs()
    c = candidates[int(errors.argmax())].item()
    K = torch.zeros(1, 256, 2, dtype=torch.float64)
    K[0, 1:, 0] = -c
    Q = torch.zeros(1, 4, 2, dtype=torch.float64)
    Q[0, :, 0] = 1.0
    V = torch.randn((1, 256, 2), generator=torch.Generator().manual_seed(7), dtype=torch.float64)
    return {"Q": Q.half().to(device), "K": K.half().to(device), "V": V.half().to(device),
            "scale": 1.0, "causal": False}


# the error of a float32 log-sum-exp on _row_sum_values is about 1e-7; one summed from
# probabilities rounded to float16 is off by about 4e-4
ROW_SUM_TOLERANCE = 2e-5


def check_row_sum_in_float32(function, device) -> None:
    """The running row sum is accumulated from float32 probabilities: the saved L (one number
    per query row, natural or base-2 logarithm) matches the float64 log-sum-exp to float32's
    precision on a row whose probabilities all round one way in float16."""
    values = _row_sum_values(device)
    with block_size(function, 16), case(describe(values, 16)):
        forward = run_forward(function, FLASH, make_inputs(values))
        rows = math.prod(values["Q"].shape[:-1])
        kept = [s.tensor for s in forward.saved if s.role == "intermediate"
                and s.dtype.is_floating_point and s.dtype.itemsize >= 4
                and math.prod(s.shape) == rows]
        if len(kept) != 1:
            return  # no single L: the saving checks name that
        saved = kept[0].detach().double().flatten().cpu()
        scores = (values["Q"].double() @ values["K"].double().transpose(-2, -1)).cpu()
        truth = torch.logsumexp(scores, dim=-1).flatten()
        rounded = torch.log(torch.exp(scores).half().double().sum(dim=-1)).flatten()
        error, natural = min(((saved * factor - truth).abs().max().item(), factor == 1.0)
                             for factor in (1.0, math.log(2)))
        if error <= ROW_SUM_TOLERANCE:
            return
        L = saved if natural else saved * math.log(2)
        near = (L - rounded).abs().max().item()
        if near < error / 4:
            raise GradingError(
                f"{NAME} saves an L off by {error:.2g} for float16 inputs, where float32 "
                f"arithmetic is off by about 1e-7, and within {near:.2g} of the log of the row "
                "sum of probabilities rounded to float16: the running row sum adds P rounded to "
                "the input dtype; add the float32 probabilities into it (P may be rounded only "
                "for the product P V)",
                mistake=f"{NAME}/row-sum-from-rounded-probabilities")
        raise GradingError(
            f"{NAME} saves an L off by {error:.2g} for float16 inputs, where float32 arithmetic "
            "is off by about 1e-7: compute the scores, their exponentials, the running maximum "
            "and the row sum in float32")
