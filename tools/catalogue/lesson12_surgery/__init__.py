"""Lesson 12 (gradient surgery): answers with known verdicts for GradientReversal,
ClipGradientNorm, SoftThreshold and the transfer exercise PerSampleClippedLinear, one module per
exercise (answers.py: the builders the entries share, answers written as edits of one another;
domains.py: a constant kept on the class, which only the generated checks of its domain see)."""

from . import (clip_gradient_norm, domains, gradient_reversal, per_sample_clipped_linear,
               soft_threshold)

UNUSUAL = (gradient_reversal.UNUSUAL + clip_gradient_norm.UNUSUAL + soft_threshold.UNUSUAL
           + per_sample_clipped_linear.UNUSUAL)
MISTAKES = (gradient_reversal.MISTAKES + clip_gradient_norm.MISTAKES + soft_threshold.MISTAKES
            + per_sample_clipped_linear.MISTAKES + domains.MISTAKES)
