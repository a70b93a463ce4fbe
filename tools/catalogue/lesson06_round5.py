"""Lesson 06: answers from the fifth fresh review, each the plain answer with one change: the
masked scores taking part in the row maximum or the normaliser, a backward without
@once_differentiable (a second derivative silently wrong), grad_output flattened with .view
(it arrives in the multi-head layout), dQ accumulated in float16."""

from tools.catalogue import Mistake, Unusual, edit
from tools.catalogue.lesson06 import MEMORY, SDPA
from tools.catalogue.lesson06_bias import BIAS
from tools.catalogue.lesson06_flash import FLASH

S, M, FA, B = ("ScaledDotProductAttention", "MemoryEfficientAttention", "FlashAttention",
               "AttentionWithBias")
FILL = 'scores = scores.masked_fill(~mask, float("-inf"))'
DECORATED = "    @staticmethod\n    @once_differentiable\n"
TAKE_PART = "the masked scores still take part"
NO_DECORATOR = "second derivative is silently wrong"
GRAD_OUTPUT = "raises in .view on grad_output of the standard multi-head layout"
# grad_output's (B, H) merged by .view, then the shape restored: a no-op on a contiguous one
VIEW = ("    def backward(ctx, grad_output):\n",
        "    def backward(ctx, grad_output):\n"
        "        grad_output = grad_output.view(-1, *grad_output.shape[-2:])"
        ".view(grad_output.shape)\n")

UNUSUAL = [
    # no decorator, yet twice differentiable: backward recomputes P from the saved inputs by
    # differentiable ops, so a second derivative through it matches the composed one
    Unusual(S, "no decorator, P recomputed from the saved inputs", edit(
        SDPA, (DECORATED, "    @staticmethod\n"),
        ("ctx.save_for_backward(Q, K, V, P)", "ctx.save_for_backward(Q, K, V, mask)"),
        ("Q, K, V, P = ctx.saved_tensors",
         "Q, K, V, mask = ctx.saved_tensors\n"
         "        scores = (Q @ K.transpose(-2, -1)) * ctx.scale\n"
         "        if mask is not None:\n"
         "            scores = scores.masked_fill(~mask, float(\"-inf\"))\n"
         "        P = torch.softmax(scores, dim=-1)"))),
]

MISTAKES = [
    # all three were told to subtract each row's maximum, which they do (torch.softmax too):
    # on the scores in the thousands the masked ones set the maximum or the normaliser
    Mistake(S, "softmax over every key, then masked and renormalised", TAKE_PART, edit(
        SDPA, (FILL, "pass"), ("P = torch.softmax(scores, dim=-1)\n",
                               "P = torch.softmax(scores, dim=-1)\n        if mask is not None:\n"
                               "            P = P * mask\n"
                               "            P = P / P.sum(-1, keepdim=True)\n"))),
    Mistake(S, "row maximum taken before the mask fill", TAKE_PART, edit(
        SDPA, ("scores = (Q @ K.transpose(-2, -1)) * scale\n",
               "scores = (Q @ K.transpose(-2, -1)) * scale\n"
               "        top = scores.amax(-1, keepdim=True)\n"),
        ("P = torch.softmax(scores, dim=-1)", "e = (scores - top).exp()\n"
                                               "        P = e / e.sum(-1, keepdim=True)"))),
    Mistake(M, "row maximum taken before the mask fill", TAKE_PART, edit(
        MEMORY, ("scores = (Q @ K.transpose(-2, -1)) * scale\n",
                 "scores = (Q @ K.transpose(-2, -1)) * scale\n"
                 "        top = scores.amax(-1, keepdim=True)\n"),
        ("lse = torch.logsumexp(scores, dim=-1, keepdim=True)",
         "lse = top + (scores - top).exp().sum(-1, keepdim=True).log()"))),
    # the lesson says to keep the decorator: without it a Hessian-vector product through the
    # backward treats the saved P (or L) as a constant, off by about 1 with no error
    Mistake(S, "backward without @once_differentiable", NO_DECORATOR,
            edit(SDPA, (DECORATED, "    @staticmethod\n")), named=True),
    Mistake(M, "backward without @once_differentiable", NO_DECORATOR,
            edit(MEMORY, (DECORATED, "    @staticmethod\n")), named=True),
    Mistake(FA, "backward without @once_differentiable", NO_DECORATOR,
            edit(FLASH, (DECORATED, "    @staticmethod\n")), named=True),
    Mistake(B, "backward without @once_differentiable", NO_DECORATOR,
            edit(BIAS, (DECORATED, "    @staticmethod\n"))),
    # out.transpose(1, 2).reshape(B, L, H * dv) @ W sends grad_output back in that layout
    Mistake(S, "grad_output flattened by .view", GRAD_OUTPUT, edit(SDPA, VIEW)),
    Mistake(M, "grad_output flattened by .view", GRAD_OUTPUT, edit(MEMORY, VIEW)),
    Mistake(FA, "grad_output flattened by .view", GRAD_OUTPUT, edit(FLASH, VIEW)),
    Mistake(B, "grad_output flattened by .view", GRAD_OUTPUT, edit(BIAS, VIEW)),
    # key blocks visited last to first: at BLOCK 64 dQ in float16 was off by 1.75e-4 only,
    # under the old tolerance of 2.5e-4; at BLOCK 16 by 5.6e-4, against the solution's 7.4e-5
    Mistake(FA, "dQ accumulated in float16, key blocks last to first", "backward keeps "
            "something in float16", edit(
                FLASH, ("grad_Q = torch.zeros(Q.shape, dtype=wide, device=Q.device)",
                        "grad_Q = torch.zeros_like(Q)"),
                ("for j in range(0, Lk, block):\n            k, v",
                 "for j in reversed(range(0, Lk, block)):\n            k, v"))),
    Mistake(FA, "dQ accumulated in float16", "backward keeps something in float16", edit(
        FLASH, ("grad_Q = torch.zeros(Q.shape, dtype=wide, device=Q.device)",
                "grad_Q = torch.zeros_like(Q)"))),
]
