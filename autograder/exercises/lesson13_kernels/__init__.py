"""Lesson 13 (kernels): the grading of silu_mul and rms_norm_rows."""
