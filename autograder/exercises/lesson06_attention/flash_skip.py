"""Lesson 06: FlashAttention's causal skip bound, off by one.

Query i sees keys j <= i + (Lk - Lq): an inclusive bound. Used as an exclusive loop end (the
forward's ``range(0, end, BLOCK)`` with end = the last visible key), or as ``first = (j - (Lk -
Lq) + 1) // BLOCK * BLOCK`` in backward, it drops one tile: the key block that starts at the
query block's last visible key, which that block's last query still sees. That happens only
where Lk - Lq = 1 (mod BLOCK) for full query blocks (or at a ragged last block when the bound
is written with the rows of the block). These probes name the slip only where the learner's
values are exactly what dropping those tiles gives, and differ from the right ones.
"""

import torch

from .attention import attention_reference
from .attention_inputs import same as _close
from .flash_probes import NAME


def _dropped(Lq: int, Lk: int, block: int, full_rows: bool, device) -> torch.Tensor:
    """(Lq, Lk) bool: the visible (query, key) pairs an exclusive end = last visible key
    drops, the block's rows counted as BLOCK (full_rows) or as the rows it has."""
    off = Lk - Lq
    causal = torch.ones(Lq, Lk, dtype=torch.bool, device=device).tril(off)
    dropped = torch.zeros_like(causal)
    for i in range(0, Lq, block):
        rows = block if full_rows else min(block, Lq - i)
        end = max(0, min(Lk, i + rows - 1 + off))
        kept = -(-end // block) * block  # key blocks starting before end are visited
        dropped[i:i + block, kept:] = True
    return dropped & causal


def _where(dropped: torch.Tensor, block: int) -> str:
    query, key = (int(n) for n in dropped.nonzero()[0])
    start = query // block * block
    return (f"queries {start}..{query} against the key block from key {key // block * block}; "
            f"query {query} sees key {key}")


def _candidates(values: dict, block: int):
    Q, K = values["Q"], values["K"]
    Lq, Lk = Q.shape[-2], K.shape[-2]
    if not values["causal"]:
        return
    seen = []
    for full_rows in (True, False):
        dropped = _dropped(Lq, Lk, block, full_rows, Q.device)
        if dropped.any() and not any(torch.equal(dropped, d) for d in seen):
            seen.append(dropped)
            yield dropped


def recognise_skip_forward(function, values: dict, block: int) -> str | None:
    """The hint when the output is the reference under the causal mask less the dropped
    tiles (and differs from the right one)."""
    Q, K, V, scale = (values[n] for n in ("Q", "K", "V", "scale"))
    Lq, Lk = Q.shape[-2], K.shape[-2]
    candidates = list(_candidates(values, block))
    if not candidates:
        return None
    with torch.no_grad():
        output = function.apply(*values.values())
    causal = torch.ones(Lq, Lk, dtype=torch.bool, device=Q.device).tril(Lk - Lq)
    if _close(output, attention_reference(Q, K, V, scale, causal)):
        return None
    for dropped in candidates:
        if _close(output, attention_reference(Q, K, V, scale, causal & ~dropped)):
            return (f"{NAME}'s forward skips a key tile whose first key the query block's last "
                    f"query can still see ({_where(dropped, block)}; Lk - Lq = {Lk - Lq}, "
                    f"BLOCK = {block}): query i sees keys j <= i + (Lk - Lq), an inclusive "
                    "bound, so the exclusive end of range(0, end, BLOCK) must be one past the "
                    "block's last visible key")
    return None


def _dropped_gradients(values: dict, dropped: torch.Tensor, grad_output) -> list:
    """dQ, dK, dV in float64 from the right P and D, with the dropped pairs' terms left out."""
    Q, K, V = (values[n].double() for n in "QKV")
    scale, Lq, Lk = values["scale"], Q.shape[-2], K.shape[-2]
    causal = torch.ones(Lq, Lk, dtype=torch.bool, device=Q.device).tril(Lk - Lq)
    P = torch.softmax(((Q @ K.transpose(-2, -1)) * scale).masked_fill(~causal, float("-inf")),
                      dim=-1)
    O, dO = P @ V, grad_output.double()
    kept = P * ~dropped
    dS = kept * (dO @ V.transpose(-2, -1) - (dO * O).sum(-1, keepdim=True))
    return [scale * dS @ K, scale * dS.transpose(-2, -1) @ Q, kept.transpose(-2, -1) @ dO]


def recognise_skip_backward(function, values: dict, block: int) -> str | None:
    """The hint when the output is right and dQ, dK, dV are what leaving the dropped tiles out
    of backward gives (and differ from the right ones)."""
    Q, K = values["Q"], values["K"]
    Lq, Lk = Q.shape[-2], K.shape[-2]
    candidates = list(_candidates(values, block))
    if not candidates:
        return None
    inputs = {n: v.clone().requires_grad_() if n in ("Q", "K", "V") else v
              for n, v in values.items()}
    output = function.apply(*inputs.values())
    causal = torch.ones(Lq, Lk, dtype=torch.bool, device=Q.device).tril(Lk - Lq)
    if not _close(output, attention_reference(Q, K, values["V"], values["scale"], causal)):
        return None
    grad_output = torch.randn(output.shape, dtype=torch.float64,
                              generator=torch.Generator().manual_seed(6)).to(Q.device)
    grads = torch.autograd.grad(output, [inputs[n] for n in "QKV"],
                                grad_output.to(output.dtype))
    right = _dropped_gradients(values, torch.zeros_like(causal), grad_output)
    if all(_close(g, r.to(g.dtype)) for g, r in zip(grads, right)):
        return None
    for dropped in candidates:
        wrong = _dropped_gradients(values, dropped, grad_output)
        if all(_close(g, w.to(g.dtype)) for g, w in zip(grads, wrong)):
            return (f"{NAME}'s backward leaves out a tile that causal attention needs "
                    f"({_where(dropped, block)}; Lk - Lq = {Lk - Lq}, BLOCK = {block}), the "
                    "output right and dQ, dK, dV right everywhere else: a skip bound is off "
                    "by one. Query i sees keys j <= i + (Lk - Lq), an inclusive bound: the "
                    "first query block a key block from j visits is the one holding query "
                    "j - (Lk - Lq) (and a key loop's exclusive end is one past the last "
                    "visible key)")
    return None
