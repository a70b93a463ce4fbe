"""Lesson 12 (surgery): the grading of GradientReversal, ClipGradientNorm, SoftThreshold and
PerSampleClippedLinear."""
