"""The grader's own tiled attention, right and with the mistakes lesson 06 names, so that a
wrong FlashAttention can be told which mistake its numbers match.

Plain loops over query and key blocks (FlashAttention-2's order in backward: key blocks
outside, query blocks inside). Small inputs only: this is for recognising mistakes, not speed.
"""

import sys

import torch
from torch.autograd.function import BackwardCFunction, Function

from .checks import make_inputs

# the frames of a custom Function's forward (Function.apply) and backward
# (BackwardCFunction.apply, which the engine calls)
_APPLY_CODES = (Function.apply.__func__.__code__, BackwardCFunction.apply.__code__)


def refuse_inside_a_function(what: str) -> None:
    """Raise when called, at any depth, from the forward or backward of an autograd Function:
    the grader's own tiled attention (and a widget's online softmax) recognises mistakes and
    draws; wrapped into a learner's FlashAttention it would be the answer."""
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code in _APPLY_CODES:
            raise RuntimeError(
                f"{what} is the course's own reference, for the grader's hints and the "
                "widgets: it refuses to run inside an autograd Function's forward or backward; "
                "write FlashAttention's tiles and online softmax yourself")
        frame = frame.f_back

NAME = "FlashAttention"
NO_RESCALE = (f"{NAME}'s forward does not rescale the running output when a later key block "
              "raises a row's maximum: what was summed against the old maximum must be "
              "re-expressed against the new one before the new block is added; by what factor? "
              "(question 3 of \"Derive: the online softmax\", and your combine check)")
WRONG_MAX = (f"{NAME}'s forward rescales with the wrong maximum: its running sum and output "
             "mix terms measured against different maxima; which maximum must every term be "
             "measured against once the block is added, and what turns exp(S_j - m_old) into "
             "it? (question 2 of \"Derive: the online softmax\", and your combine check)")
TILE_ROW_SUM = (f"{NAME}'s backward takes D from dP instead of dO * O: rowsum(dP_ij * P_ij) "
                "of one tile is only part of the row's sum; D = rowsum(dO * O) is the whole row")


def visible_keys(i0: int, rows: int, Lq: int, Lk: int) -> int:
    """How many keys (from 0) the query block starting at ``i0`` with ``rows`` rows may see
    under causal, where query i sees keys j <= i + (Lk - Lq)."""
    return max(0, min(Lk, i0 + rows + Lk - Lq))


def _tile_scores(q, k, scale, causal, i0, j0, Lq, Lk):
    scores = (q @ k.transpose(-2, -1)) * scale
    if causal:
        rows = torch.arange(i0, i0 + q.shape[-2], device=q.device)[:, None]
        cols = torch.arange(j0, j0 + k.shape[-2], device=q.device)[None, :]
        scores = scores.masked_fill(cols > rows + (Lk - Lq), float("-inf"))
    return scores


def tiled_forward(Q, K, V, scale, causal, block, rescale="right"):
    """(O, L) by the online softmax. ``rescale``: "right"; "none" (the running output is not
    rescaled when the maximum grows); "tile max" (each tile exponentiated against its own
    maximum, the accumulators rescaled with the running one); "inverted" (exp(m_new - m_old))."""
    refuse_inside_a_function("autograder.tiled.tiled_forward")
    Lq, Lk = Q.shape[-2], K.shape[-2]
    O = Q.new_zeros(*Q.shape[:-1], V.shape[-1])
    L = Q.new_zeros(Q.shape[:-1])
    for i0 in range(0, Lq, block):
        q = Q[..., i0:i0 + block, :]
        m = q.new_full(q.shape[:-1], float("-inf"))
        total = q.new_zeros(q.shape[:-1])
        acc = q.new_zeros(*q.shape[:-1], V.shape[-1])
        for j0 in range(0, Lk, block):
            if causal and j0 >= visible_keys(i0, q.shape[-2], Lq, Lk):
                break
            s = _tile_scores(q, K[..., j0:j0 + block, :], scale, causal, i0, j0, Lq, Lk)
            m_new = torch.maximum(m, s.amax(-1))
            alpha = torch.exp(m - m_new)
            p = torch.exp(s - m_new[..., None])
            if rescale == "tile max":
                p = torch.exp(s - s.amax(-1, keepdim=True))
            elif rescale == "inverted":
                alpha = torch.exp(m_new - m)
            out_alpha = torch.ones_like(alpha) if rescale == "none" else alpha
            acc = acc * out_alpha[..., None] + p @ V[..., j0:j0 + block, :]
            total = total * alpha + p.sum(-1)
            m = m_new
        O[..., i0:i0 + block, :] = acc / total[..., None]
        L[..., i0:i0 + block] = m + total.log()
    return O, L


def tiled_backward(Q, K, V, O, dO, L, scale, causal, block, row_sum="dO*O"):
    """(dQ, dK, dV) by FlashAttention-2's backward. ``row_sum``: "dO*O" (right) or "tile"
    (D taken from one tile, rowsum(dP_ij * P_ij), instead of the whole row)."""
    refuse_inside_a_function("autograder.tiled.tiled_backward")
    Lq, Lk = Q.shape[-2], K.shape[-2]
    D = (dO * O).sum(-1)
    dQ, dK, dV = torch.zeros_like(Q), torch.zeros_like(K), torch.zeros_like(V)
    for j0 in range(0, Lk, block):
        k, v = K[..., j0:j0 + block, :], V[..., j0:j0 + block, :]
        for i0 in range(0, Lq, block):
            q, do = Q[..., i0:i0 + block, :], dO[..., i0:i0 + block, :]
            if causal and j0 >= visible_keys(i0, q.shape[-2], Lq, Lk):
                continue
            s = _tile_scores(q, k, scale, causal, i0, j0, Lq, Lk)
            p = torch.exp(s - L[..., i0:i0 + block, None])
            dp = do @ v.transpose(-2, -1)
            d = (dp * p).sum(-1) if row_sum == "tile" else D[..., i0:i0 + block]
            ds = p * (dp - d[..., None])
            dV[..., j0:j0 + block, :] += p.transpose(-2, -1) @ do
            dQ[..., i0:i0 + block, :] += scale * ds @ k
            dK[..., j0:j0 + block, :] += scale * ds.transpose(-2, -1) @ q
    return dQ, dK, dV


def _same(a, b, rtol=1e-5, atol=1e-7) -> bool:
    return (isinstance(a, torch.Tensor) and a.shape == b.shape
            and bool(torch.allclose(a.detach(), b, rtol=rtol, atol=atol, equal_nan=True)))


def _output(function, values) -> torch.Tensor:
    with torch.no_grad():
        return function.apply(*make_inputs(values, requires_grad=False).values())


def _designed(grows: bool, device) -> dict:
    """Scores chosen directly (K = identity, scale 1): each row's maximum either lies in the
    first key block of 4 or grows block after block."""
    generator = torch.Generator().manual_seed(7)
    S = torch.randn(2, 5, 12, generator=generator, dtype=torch.float64)
    bump = torch.arange(3, dtype=torch.float64).repeat_interleave(4) * 3 if grows else (
        torch.tensor([6.0] * 4 + [0.0] * 8, dtype=torch.float64))
    V = torch.randn(2, 12, 3, generator=generator, dtype=torch.float64)
    K = torch.eye(12, dtype=torch.float64).expand(2, 12, 12).contiguous()
    return {"Q": (S + bump).to(device), "K": K.to(device), "V": V.to(device), "scale": 1.0,
            "causal": False}


def recognise_forward(function, values: dict, block: int, reference) -> str | None:
    """The hint for a wrong online softmax, when the numbers say which."""
    output = _output(function, values)
    args = [values[n] for n in ("Q", "K", "V", "scale", "causal")]
    if _same(output, tiled_forward(*args, block, rescale="none")[0]):
        return NO_RESCALE
    if any(_same(output, tiled_forward(*args, block, rescale=r)[0])
           for r in ("tile max", "inverted")):
        return WRONG_MAX
    device = values["Q"].device
    right = [_same(_output(function, v), reference(**v))
             for v in (_designed(False, device), _designed(True, device))]
    if right == [True, False]:
        return NO_RESCALE
    return None


def recognise_backward(function, values: dict, block: int) -> str | None:
    inputs = make_inputs(values)
    output = function.apply(*inputs.values())
    args = [values[n] for n in ("Q", "K", "V")]
    O, L = tiled_forward(*args, values["scale"], values["causal"], block)
    if not _same(output, O):
        return None
    grad_output = torch.randn(O.shape, generator=torch.Generator().manual_seed(0),
                              dtype=O.dtype).to(O.device)
    grads = torch.autograd.grad(output, [inputs[n] for n in ("Q", "K", "V")], grad_output,
                                allow_unused=True)
    wrong = tiled_backward(*args, O, grad_output, L, values["scale"], values["causal"], block,
                           row_sum="tile")
    if _same(grads[0], wrong[0]) and _same(grads[1], wrong[1]):
        return TILE_ROW_SUM
    return None
