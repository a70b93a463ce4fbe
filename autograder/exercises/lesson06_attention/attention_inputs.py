"""Lesson 06's inputs: attention problems with the masks people use, and the one-thread
exercise the four attention Functions are graded as."""

import math

import torch

from ...domain import Constant
from ...exercise import Exercise, sample
from ...function_contract import rule_reference

# The softmax-backward hints of Exercises 1, 2 and 4: each names what the probe proved (the
# submission's numbers match that formula), and points back to the Jacobian the lesson prints in
# "Derive the backward" instead of giving the softmax's vector-Jacobian product.
ELEMENTWISE = ("treats the softmax as element-wise, dS = P * dP: raising one score also lowers "
               "every other probability of its row, and your dS leaves that out; which product "
               "of two probabilities is an off-diagonal J_ij? (compare your formula with the J "
               "that \"Derive the backward\" prints for five scores)")
DIAGONAL_ONLY = ("uses only the diagonal of the softmax's Jacobian, P * (1 - P) * dP: every "
                 "score moves every probability of its row, so J has off-diagonal entries too; "
                 "which product of two probabilities is J_ij? (compare your formula with the J "
                 "that \"Derive the backward\" prints for five scores)")


class OneThreadExercise(Exercise):
    """A lesson 06 exercise whose whole run, its battery and the checks its domain implies,
    stays on one CPU thread: these checks multiply tiny matrices, for which one thread is the
    fastest, and which other threads of a busy machine would only stall."""

    def run(self, submission) -> list[torch.device]:
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            return super().run(submission)
        finally:
            torch.set_num_threads(threads)


def make_mask(kind: str | None, lead: tuple, Lq: int, Lk: int, device, seed: int = 0):
    """A boolean mask (True = attend) in which every query keeps at least one key.

    ``causal``: (Lq, Lk), query i sees keys up to i + Lk - Lq. ``padding``: (B, 1, ..., 1, Lk),
    a length per batch element. ``random``: the full (*lead, Lq, Lk), each row keeping one key
    and dropping another where it can. ``random2d``: the same, (Lq, Lk), broadcast."""
    if kind is None:
        return None
    if kind == "causal":
        return torch.ones(Lq, Lk, dtype=torch.bool, device=device).tril(Lk - Lq)
    generator = torch.Generator().manual_seed(seed)
    if kind == "padding":
        lengths = torch.randint(1, Lk + 1, (lead[0],), generator=generator)
        lengths[0] = Lk - 1 if Lk > 1 else 1  # at least one element really padded
        keep = torch.arange(Lk) < lengths[:, None]
        return keep.reshape(lead[0], *([1] * len(lead)), Lk).to(device)
    shape = (*lead, Lq, Lk) if kind == "random" else (Lq, Lk)
    keep = torch.rand(shape, generator=generator) < 0.6
    rows = torch.arange(Lq)
    first, second = rows % Lk, (rows + 1) % Lk
    keep[..., rows, first] = True  # every query attends somewhere
    if Lk > 1:
        keep[..., rows, second] = False  # and every query ignores something
    return keep.to(device)


SCALE = Constant(1e-3, 10.0, "scale any Python float of the size models use (up to 10), 0 and "
                 "negative ones included",
                 also=(0.0, -0.7))
# the same points where the exercise's own contract does not state them: rule 1's, as SDPA
SDPA_SCALE = Constant(1e-3, 10.0, "any scale F.scaled_dot_product_attention takes, 0 and "
                      f"negative ones included {rule_reference('values')}", also=(0.0, -0.7))


def attention_domain_values(device, dtype=torch.float64, seed=0, scale=0.5) -> dict:
    """Q (2, Lq, 4), K (2, 5, 4), V (2, 5, 3), ``scale`` and a mask broadcastable to
    (2, Lq, 5): at seed 0 (Lq 3) a (3, 5) mask read through a transpose's strides; at other
    seeds (Lq 3 or 4 by parity) a padding mask (2, 1, 5) or a full random one, so that two
    calls in one graph differ in every shape. (A mask is not floating, so the domain's
    layouts leave it as it is: its own strided layout is here.)"""
    if seed == 0:
        values = attention_values((2,), 3, 5, 4, 3, device, mask="random2d", dtype=dtype,
                                  scale=scale)
        values["mask"] = values["mask"].mT.contiguous().mT
        return values
    return attention_values((2,), 3 + seed % 2, 5, 4, 3, device, seed=seed, dtype=dtype,
                            mask="random" if seed % 2 else "padding", scale=scale)


def attention_values(lead, Lq, Lk, d, dv, device, *, mask=None, seed=0, dtype=torch.float64,
                     magnitude: float = 1.0, scale: float | None = None) -> dict:
    values = {
        "Q": magnitude * sample((*lead, Lq, d), device, seed=seed, dtype=dtype),
        "K": magnitude * sample((*lead, Lk, d), device, seed=seed + 1, dtype=dtype),
        "V": sample((*lead, Lk, dv), device, seed=seed + 2, dtype=dtype),
        "scale": 1 / math.sqrt(d) if scale is None else scale,
    }
    if mask is not None:
        values["mask"] = make_mask(mask, lead, Lq, Lk, device, seed + 3)
    return values


def attention_reference(Q, K, V, scale, mask=None):
    """softmax(Q @ K^T * scale, masked) @ V by autograd's own ops; mask False = masked out."""
    scores = (Q @ K.transpose(-2, -1)) * scale
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=-1) @ V


def describe(values: dict) -> str:
    """``Q (2, 4, 3), K (2, 5, 3), V (2, 5, 2), float64, mask (4, 5)``: the failing case."""
    Q, K, V, mask = values["Q"], values["K"], values["V"], values.get("mask")
    return (f"Q {tuple(Q.shape)}, K {tuple(K.shape)}, V {tuple(V.shape)}, "
            f"{str(Q.dtype).removeprefix('torch.')}, "
            + ("mask=None" if mask is None else f"mask of shape {tuple(mask.shape)}"))


def same(a, b, rtol=1e-5, atol=1e-7) -> bool:
    """``a`` a tensor of ``b``'s shape, close to it (nan where ``b`` is nan)."""
    return (isinstance(a, torch.Tensor) and a.shape == b.shape
            and bool(torch.allclose(a.detach(), b, rtol=rtol, atol=atol, equal_nan=True)))


MULTIHEAD = "Q, K, V laid out as x.view(B, L, H, d).transpose(1, 2)"


def multihead_layout(values: dict) -> dict:
    """``values`` with Q, K, V of shape (B, H, L, d) in the standard multi-head layout: the
    same numbers, stored as (B, L, H, d) and transposed, so that no two dimensions merge; and
    a mask of two dims or more read through a transpose's strides (a .contiguous() of it is a
    copy)."""
    def laid_out(name, value):
        if name in ("Q", "K", "V"):
            return value.transpose(1, 2).contiguous().transpose(1, 2)
        if name == "mask" and isinstance(value, torch.Tensor) and value.dim() >= 2:
            return value.mT.contiguous().mT
        return value
    return {name: laid_out(name, value) for name, value in values.items()}
