"""Lesson 10 (norms): the grading of LayerNormFunction, RMSNormFunction, RMSNorm and
GroupNormFunction."""
