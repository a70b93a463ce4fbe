"""Lesson 06: FlashAttentions that keep an accumulator in the input's half dtype (the running
output; D = rowsum(dO * O); dK and dV across the query blocks), which only the accumulation
cases (a long key loop with values equal along the keys; a long query loop with one query row
and dO rows that cancel) separate from one that accumulates in float32. Each is named a
precision loss after the same code matched in float32 on the same values."""

from pathlib import Path

from tools.catalogue import Mistake, edit

_SOURCE = (Path(__file__).parents[2] / "lessons" / "06_attention.py").read_text()
_START = _SOURCE.index("class FlashAttention(torch.autograd.Function):")
_END = _SOURCE.index('# %% nbgrader={"grade_id": "FlashAttention"')
SOLUTION = (_SOURCE[_START:_END].replace("        ### BEGIN SOLUTION\n", "")
            .replace("        ### END SOLUTION\n", ""))

UNUSUAL = []

MISTAKES = [
    Mistake("FlashAttention", "running output kept in float16",
            "a precision loss, not a wrong formula; keep the running output", edit(
        SOLUTION,
        ("o = torch.zeros(*q.shape[:-1], V.shape[-1], dtype=wide, device=Q.device)",
         "o = torch.zeros(*q.shape[:-1], V.shape[-1], dtype=Q.dtype, device=Q.device)"),
        ("o = alpha.unsqueeze(-1) * o + p @ v", "o = (alpha.unsqueeze(-1) * o + p @ v).to(Q.dtype)"))),
    Mistake("FlashAttention", "D = rowsum(dO * O) in float16",
            "a precision loss, not a wrong formula; the output matches, so backward keeps", edit(
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
            "backward returns grad_Q in float32 for Q in bfloat16", edit(
        SOLUTION, ("return grad_Q.to(Q.dtype), ", "return grad_Q, "))),
]
