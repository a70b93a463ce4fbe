"""Lesson 06 (attention): the grading of ScaledDotProductAttention, MemoryEfficientAttention,
FlashAttention and AttentionWithBias."""
