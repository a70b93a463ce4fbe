"""Lesson 06: attention backwards without @once_differentiable, whose second derivative is
silently wrong where backward reads what forward saved (P or L), and one that needs no
decorator because it recomputes P from the saved inputs."""

from .. import Mistake, Unusual, edit
from .answers import AB, BIAS, FA, FLASH, M, MEMORY, S, SDPA

DECORATED = "    @staticmethod\n    @once_differentiable\n"
NO_DECORATOR = "second derivative is silently wrong"

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
    # the lesson says to keep the decorator: without it a Hessian-vector product through the
    # backward treats the saved P (or L) as a constant, off by about 1 with no error
    Mistake(S, "backward without @once_differentiable", NO_DECORATOR,
            edit(SDPA, (DECORATED, "    @staticmethod\n")), named=True),
    Mistake(M, "backward without @once_differentiable", NO_DECORATOR,
            edit(MEMORY, (DECORATED, "    @staticmethod\n")), named=True),
    Mistake(FA, "backward without @once_differentiable", NO_DECORATOR,
            edit(FLASH, (DECORATED, "    @staticmethod\n")), named=True),
    Mistake(AB, "backward without @once_differentiable", NO_DECORATOR,
            edit(BIAS, (DECORATED, "    @staticmethod\n"))),
]
