"""Lesson 13 (your own kernels): answers with known verdicts for silu_mul and rms_norm_rows,
kept in one module per exercise."""

from . import rms_norm_rows, silu_mul

UNUSUAL = silu_mul.UNUSUAL + rms_norm_rows.UNUSUAL
MISTAKES = silu_mul.MISTAKES + rms_norm_rows.MISTAKES
