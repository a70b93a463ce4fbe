"""Lesson 06, review 53: the reviewer's answers that passed (a scale split as its square root,
a scale divided by its inverse, a backward that takes each row's maximum again beside L, the
scale saved as a 0-d tensor beside L, a FlashAttention that wraps the grader's own tiled
attention) or whose first line missed the mistake (a scale ignored, d ** -0.5 in its place; an
all-True mask made for mask=None), and the same slips in FlashAttention and AttentionWithBias.
The reviewer's other answers, and all their correct but unusual ones, duplicate entries
already here."""

from .. import Mistake, Unusual, edit
from .answers import AB, BIAS, FA, FLASH, MEMORY, SDPA, M, S

_SCORES = "scores = (Q @ K.transpose(-2, -1)) * scale"
_TILE = "s = (q @ k.transpose(-2, -1)) * scale"
_BIAS_SCORES = "(Q @ K.transpose(-2, -1)) * scale + bias"
_OUT_OF_RANGE = "at scale=-0.7"
_ZERO = "at scale=0.0"
_IGNORED = "ignores the scale it is given"
_REFERENCE = "is the course's own reference"

UNUSUAL: list[Unusual] = []  # the reviewer's unusual answers are all here already

MISTAKES = [
    Mistake(S, "scale split as its square root over Q and K", _OUT_OF_RANGE, edit(
        SDPA, (_SCORES, "r = math.sqrt(scale)\n        scores = (Q * r) @ (K * r).transpose(-2, "
                        "-1)"))),
    Mistake(S, "scores divided by the scale's inverse", _ZERO, edit(
        SDPA, (_SCORES, "scores = (Q @ K.transpose(-2, -1)) / (1 / scale)"))),
    Mistake(S, "d ** -0.5 in place of the scale given", _IGNORED, edit(
        SDPA, (_SCORES, "scores = (Q @ K.transpose(-2, -1)) * Q.shape[-1] ** -0.5"))),
    Mistake(M, "backward takes each row's maximum again beside the saved L",
            "takes each row's maximum again", edit(
                MEMORY, ("P = (scores - lse.unsqueeze(-1)).exp()",
                         "m = scores.amax(dim=-1, keepdim=True)\n"
                         "        P = (scores - m).exp() * (m - lse.unsqueeze(-1)).exp()"))),
    Mistake(M, "the scale saved as a 0-d tensor beside L", "saves a tensor of shape ()", edit(
        MEMORY, ("ctx.save_for_backward(Q, K, V, output, lse.squeeze(-1), mask)",
                 "ctx.save_for_backward(Q, K, V, output, lse.squeeze(-1), mask, "
                 "torch.tensor(scale, dtype=Q.dtype))"),
        ("Q, K, V, output, lse, mask = ctx.saved_tensors",
         "Q, K, V, output, lse, mask, _ = ctx.saved_tensors"))),
    Mistake(M, "an all-True mask made and saved when mask is None",
            "that forward made though mask is None", edit(
                MEMORY, (_SCORES, _SCORES + "\n        if mask is None:\n            mask = "
                         "torch.ones(scores.shape[-2:], dtype=torch.bool, device=Q.device)"))),
    Mistake(FA, "the grader's tiled_forward and tiled_backward wrapped", _REFERENCE, '''
from autograder.tiled import tiled_backward, tiled_forward


class FlashAttention(torch.autograd.Function):
    BLOCK = 64

    @staticmethod
    def forward(ctx, Q, K, V, scale, causal=False):
        w = torch.promote_types(Q.dtype, torch.float32)
        O, L = tiled_forward(Q.to(w), K.to(w), V.to(w), scale, causal, FlashAttention.BLOCK)
        O = O.to(Q.dtype)
        ctx.save_for_backward(Q, K, V, O, L)
        ctx.scale, ctx.causal = scale, causal
        return O

    @staticmethod
    @once_differentiable
    def backward(ctx, dO):
        Q, K, V, O, L = ctx.saved_tensors
        w = L.dtype
        grads = tiled_backward(Q.to(w), K.to(w), V.to(w), O.to(w), dO.to(w), L, ctx.scale,
                               ctx.causal, FlashAttention.BLOCK)
        return (*(g.to(t.dtype) for g, t in zip(grads, (Q, K, V))), None, None)
'''),
    Mistake(FA, "the widget's online_softmax_steps run row by row", _REFERENCE, edit(
        FLASH, ("        ctx.save_for_backward(Q, K, V, O, L)",
                "        from widgets.flash import online_softmax_steps\n"
                "        online_softmax_steps(Q[(0,) * (Q.dim() - 1)] @ K[(0,) * (K.dim() - 2)]"
                ".transpose(-2, -1) * scale, V[(0,) * (V.dim() - 2)], block)\n"
                "        ctx.save_for_backward(Q, K, V, O, L)"))),
    Mistake(FA, "d ** -0.5 in place of the scale given", _IGNORED, edit(
        FLASH, (_TILE, "s = (q @ k.transpose(-2, -1)) * Q.shape[-1] ** -0.5"))),
    Mistake(FA, "tile scores divided by the scale's inverse", _ZERO, edit(
        FLASH, (_TILE, "s = (q @ k.transpose(-2, -1)) / (1 / scale)"))),
    Mistake(AB, "d ** -0.5 in place of the scale given", _IGNORED, edit(
        BIAS, (_BIAS_SCORES, "(Q @ K.transpose(-2, -1)) * Q.shape[-1] ** -0.5 + bias"))),
]
