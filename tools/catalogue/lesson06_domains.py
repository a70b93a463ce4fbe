"""Lesson 06: a FlashAttention that keeps its running output in the input's half dtype, which
only a long key loop against float64 separates from one that accumulates in float32."""

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
            "FlashAttention's output is wrong: largest error 0.000211", edit(
        SOLUTION,
        ("o = torch.zeros(*q.shape[:-1], V.shape[-1], dtype=wide, device=Q.device)",
         "o = torch.zeros(*q.shape[:-1], V.shape[-1], dtype=Q.dtype, device=Q.device)"),
        ("o = alpha.unsqueeze(-1) * o + p @ v", "o = (alpha.unsqueeze(-1) * o + p @ v).to(Q.dtype)"))),
]
