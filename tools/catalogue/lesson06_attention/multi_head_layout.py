"""Lesson 06: attention answers that merge leading dimensions with .view. They pass on
contiguous inputs (every 3-d input, and 4-d ones made contiguous) and raise on the standard
multi-head layout, x.view(B, L, H, d).transpose(1, 2), whose (B, H) do not merge: Q, K, V
viewed (``INPUTS_VIEWED``), or grad_output, which arrives in that layout
(``GRAD_OUTPUT_VIEWED``)."""

from .. import Mistake, edit
from .answers import AB, BIAS, FA, FLASH, M, MEMORY, S, SDPA

HINT = "raises in .view on Q, K, V of the standard multi-head layout"
GRAD_OUTPUT = "raises in .view on grad_output of the standard multi-head layout"

# the scores by one torch.bmm over the leading dimensions flattened by .view
_BMM = ("scores = (Q @ K.transpose(-2, -1)) * scale",
        "lead, Lq, Lk = Q.shape[:-2], Q.shape[-2], K.shape[-2]\n"
        "        q, k = Q.view(-1, Lq, Q.shape[-1]), K.view(-1, Lk, K.shape[-1])\n"
        "        scores = (torch.bmm(q, k.transpose(1, 2)) * scale).view(*lead, Lq, Lk)")
# grad_output's (B, H) merged by .view, then the shape restored: a no-op on a contiguous one
VIEW = ("    def backward(ctx, grad_output):\n",
        "    def backward(ctx, grad_output):\n"
        "        grad_output = grad_output.view(-1, *grad_output.shape[-2:])"
        ".view(grad_output.shape)\n")

INPUTS_VIEWED = [
    Mistake(S, "scores by torch.bmm on Q.view(-1, Lq, d)", HINT, edit(SDPA, _BMM)),
    Mistake(M, "scores by torch.bmm on Q.view(-1, Lq, d)", HINT, edit(MEMORY, _BMM)),
    # every tile 3-d: Q, K, V flattened to (B * H, L, d) in forward, the gradients viewed back
    Mistake(FA, "Q, K, V flattened to 3-d by .view", HINT, edit(
        FLASH, ("        block, Lq, Lk = FlashAttention.BLOCK, Q.shape[-2], K.shape[-2]\n",
                "        block, Lq, Lk = FlashAttention.BLOCK, Q.shape[-2], K.shape[-2]\n"
                "        ctx.lead = Q.shape[:-2]\n"
                "        Q, K, V = (t.view(-1, *t.shape[-2:]) for t in (Q, K, V))\n"),
        ("        return O\n", "        return O.view(*ctx.lead, *O.shape[-2:])\n"),
        ("        Q, K, V, O, L = ctx.saved_tensors\n",
         "        Q, K, V, O, L = ctx.saved_tensors\n"
         "        grad_output = grad_output.reshape(O.shape)\n"),
        ("grad_Q.to(Q.dtype) if", "grad_Q.to(Q.dtype).view(*ctx.lead, *Q.shape[-2:]) if"),
        ("grad_K if", "grad_K.view(*ctx.lead, *K.shape[-2:]) if"),
        ("grad_V if", "grad_V.view(*ctx.lead, *V.shape[-2:]) if"))),
]

GRAD_OUTPUT_VIEWED = [
    # out.transpose(1, 2).reshape(B, L, H * dv) @ W sends grad_output back in that layout
    Mistake(S, "grad_output flattened by .view", GRAD_OUTPUT, edit(SDPA, VIEW)),
    Mistake(M, "grad_output flattened by .view", GRAD_OUTPUT, edit(MEMORY, VIEW)),
    Mistake(FA, "grad_output flattened by .view", GRAD_OUTPUT, edit(FLASH, VIEW)),
    Mistake(AB, "grad_output flattened by .view", GRAD_OUTPUT, edit(BIAS, VIEW)),
]

MISTAKES = INPUTS_VIEWED + GRAD_OUTPUT_VIEWED
