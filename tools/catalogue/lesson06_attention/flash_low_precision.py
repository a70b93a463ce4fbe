"""Lesson 06: FlashAttentions that keep a step in a narrower dtype than float32 (or float32 for
float64 inputs): the log-sum-exp, the score tile, and the accumulators in the input's half dtype
(the running output; D = rowsum(dO * O); dK and dV across the query blocks; dQ), which only the
accumulation cases (a long key loop with values equal along the keys; a long query loop with
one query row and dO rows that cancel) separate from one that accumulates in float32. Each is
named a precision loss after the same code matched in float32 on the same values.

``SOLUTION`` is the lesson's own FlashAttention, read from lessons/06_attention.py."""

from pathlib import Path

from .. import Mistake, Unusual, edit
from .answers import FA, FLASH

_SOURCE = (Path(__file__).parents[3] / "lessons" / "06_attention.py").read_text()
_START = _SOURCE.index("class FlashAttention(torch.autograd.Function):")
_END = _SOURCE.index('# %% nbgrader={"grade_id": "FlashAttention"')
SOLUTION = (_SOURCE[_START:_END].replace("        ### BEGIN SOLUTION\n", "")
            .replace("        ### END SOLUTION\n", ""))

UNUSUAL = [
    # FlashAttention-2's own backward: P and dS rounded to the input dtype as the operands of
    # dV, dQ and dK's products, accumulated in float32 (review at 2d863fb7)
    Unusual(FA, "P and dS rounded to the input dtype as matmul operands in backward", edit(
        FLASH, ("dv += p.transpose(-2, -1) @ do",
                "dv += p.to(Q.dtype).to(wide).transpose(-2, -1) @ do"),
        ("grad_Q[..., i:i + block, :] += ctx.scale * ds @ k",
         "grad_Q[..., i:i + block, :] += ctx.scale * ds.to(Q.dtype).to(wide) @ k"),
        ("dk += ctx.scale * ds.transpose(-2, -1) @ q",
         "dk += ctx.scale * ds.to(Q.dtype).to(wide).transpose(-2, -1) @ q"))),
]

MISTAKES = [
    # the reviewer's F17: Q * scale in the input dtype, widened after (review at 2d863fb7)
    Mistake(FA, "the scale applied to the query block in the input dtype",
            "query was multiplied by the scale in bfloat16", edit(
        FLASH, ("            q = Q[..., i:i + block, :].to(wide)\n            m =",
                "            q = (Q[..., i:i + block, :] * scale).to(wide)\n            m ="),
        ("                s = (q @ k.transpose(-2, -1)) * scale\n",
         "                s = q @ k.transpose(-2, -1)\n"))),
    # forward right, backward's tile of scores from a product in the input dtype, widened
    # after (review at 32340a34: was "your gradient for Q is wrong")
    Mistake(FA, "backward's score tile computed in the input dtype",
            "backward's tile of scores is kept in the input dtype", edit(
        FLASH, ("                s = (q @ k.transpose(-2, -1)) * ctx.scale",
                "                s = (Q[..., i:i + block, :] @ K[..., j:j + block, :].transpose("
                "-2, -1)).to(wide) * ctx.scale"))),
    Mistake(FA, "log-sum-exp in low precision", "keeps its log-sum-exp L in bfloat16",
            edit(FLASH, ("L = torch.empty(Q.shape[:-1], dtype=wide, device=Q.device)",
                          "L = torch.empty(Q.shape[:-1], dtype=Q.dtype, device=Q.device)"),
                  ("block, Lq, Lk, wide = FlashAttention.BLOCK, Q.shape[-2], K.shape[-2], "
                   "L.dtype", "block, Lq, Lk = FlashAttention.BLOCK, Q.shape[-2], K.shape[-2]"
                   "\n        wide = torch.promote_types(Q.dtype, torch.float32)")), named=True),
    # the product taken in the input dtype, converted after: S rounded to bfloat16 (0.5 apart
    # near the low-precision case's scores of 85), 0.079 off where the solution is 0.0072
    Mistake(FA, "score tile computed in the input dtype", "attention whose scores were rounded "
            "to bfloat16", edit(FLASH, (
                "s = (q @ k.transpose(-2, -1)) * scale",
                "s = (Q[..., i:i + block, :] @ K[..., j:j + block, :].transpose(-2, -1))"
                ".to(wide) * scale"))),
    # right to 4e-8 in float64, which only the domain's precision check saw (a 'step in
    # float32' without saying which)
    Mistake(FA, "log-sum-exp kept in float32 for float64 inputs", "keeps its log-sum-exp L in "
            "float32 for float64 inputs", edit(FLASH, (
                "L = torch.empty(Q.shape[:-1], dtype=wide, device=Q.device)",
                "L = torch.empty(Q.shape[:-1], dtype=torch.float32, device=Q.device)"))),
    # key blocks visited last to first: at BLOCK 64 dQ in float16 was off by 1.75e-4 only,
    # under the old tolerance of 2.5e-4; at BLOCK 16 by 5.6e-4, against the solution's 7.4e-5
    Mistake(FA, "dQ accumulated in float16, key blocks last to first", "grad_Q alone "
            "loses precision: dQ is summed", edit(
                FLASH, ("grad_Q = torch.zeros(Q.shape, dtype=wide, device=Q.device)",
                        "grad_Q = torch.zeros_like(Q)"),
                ("for j in range(0, Lk, block):\n            k, v",
                 "for j in reversed(range(0, Lk, block)):\n            k, v"))),
    Mistake(FA, "dQ accumulated in float16", "grad_Q alone loses precision: dQ", edit(
        FLASH, ("grad_Q = torch.zeros(Q.shape, dtype=wide, device=Q.device)",
                "grad_Q = torch.zeros_like(Q)"))),
    Mistake("FlashAttention", "running output kept in float16",
            "a precision loss, not a wrong formula; keep the running output", edit(
        SOLUTION,
        ("o = torch.zeros(*q.shape[:-1], V.shape[-1], dtype=wide, device=Q.device)",
         "o = torch.zeros(*q.shape[:-1], V.shape[-1], dtype=Q.dtype, device=Q.device)"),
        ("o = alpha.unsqueeze(-1) * o + p @ v", "o = (alpha.unsqueeze(-1) * o + p @ v).to(Q.dtype)"))),
    # dP's product taken on the input dtype's blocks, widened after (review 74c, W34: was named
    # as D = rowsum(dO * O) in float16)
    Mistake(FA, "dP = dO V^T left in float16", "every tile's dP = dO V^T is a product of "
            "float16 blocks left in float16", edit(
                FLASH, ("ds = p * (do @ v.transpose(-2, -1) - D[..., i:i + block, None])",
                        "dp = (grad_output[..., i:i + block, :] @ V[..., j:j + block, :]"
                        ".transpose(-2, -1)).to(wide)\n"
                        "                ds = p * (dp - D[..., i:i + block, None])"))),
    Mistake("FlashAttention", "D = rowsum(dO * O) in float16",
            "grad_Q and grad_K both lose precision: what every tile's dS takes", edit(
        SOLUTION,
        ("D = (grad_output.to(wide) * O.to(wide)).sum(dim=-1)",
         "D = (grad_output * O).sum(dim=-1).to(wide)"))),
    Mistake("FlashAttention", "dK, dV accumulated in float16 across query blocks",
            "a precision loss, not a wrong formula; the output matches, and grad_K and grad_V are "
            "sums over the query blocks", edit(
        SOLUTION,
        ("dk, dv = torch.zeros_like(k), torch.zeros_like(v)",
         "dk, dv = torch.zeros_like(k, dtype=K.dtype), torch.zeros_like(v, dtype=V.dtype)"))),
    # grad_Q's float32 accumulator returned as it is: autograd's engine casts it to Q's dtype,
    # so only what backward itself returned shows it
    Mistake("FlashAttention", "grad_Q returned in its float32 accumulator",
            "backward returned grad_Q in float32 for a float16 Q", edit(
        SOLUTION, ("grad_Q.to(Q.dtype) if need_Q", "grad_Q if need_Q"))),
    # dK and dV buffers made by torch.zeros(K.shape): the default dtype and device, so float32
    # gradients for bfloat16 inputs and float64 ones rounded through float32 (review 76, W5:
    # was named as a float32 accumulator not cast back); the Function contract's default-device
    # check names the torch.zeros made without device=
    Mistake(FA, "dK, dV buffers made by torch.zeros(K.shape)", "made a tensor on the default "
            "device (torch.zeros without device=)", edit(
                FLASH, ("grad_K, grad_V = torch.empty_like(K), torch.empty_like(V)",
                        "grad_K, grad_V = torch.zeros(K.shape), torch.zeros(V.shape)"))),
    # the row sum of P rounded to float16 passed every case whose probabilities round both
    # ways; the saved L shows it on a row whose 255 equal probabilities round one way
    Mistake(FA, "row sum of P rounded to the input dtype",
            "the running row sum adds P rounded to the input dtype", edit(
                FLASH, ("ell = alpha * ell + p.sum(dim=-1)",
                        "ell = alpha * ell + p.to(Q.dtype).sum(dim=-1)"))),
]
