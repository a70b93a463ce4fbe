"""Lesson 12 (gradient surgery): answers with known verdicts for GradientReversal,
ClipGradientNorm, SoftThreshold and the transfer exercise PerSampleClippedLinear, one module per
exercise (answers.py: the builders of the two identity-forward Functions; domains.py: a constant
kept on the class, which only the generated checks of its domain see)."""

from . import (clip_gradient_norm, domains, gradient_reversal, per_sample_clipped_linear,
               review53, review54, review54b, review55, review55b, review55c, review56,
               soft_threshold)

UNUSUAL = (gradient_reversal.UNUSUAL + clip_gradient_norm.UNUSUAL + soft_threshold.UNUSUAL
           + per_sample_clipped_linear.UNUSUAL + review53.UNUSUAL + review54.UNUSUAL
           + review54b.UNUSUAL + review55.UNUSUAL + review55b.UNUSUAL
           + review55c.UNUSUAL + review56.UNUSUAL)
MISTAKES = (gradient_reversal.MISTAKES + clip_gradient_norm.MISTAKES + soft_threshold.MISTAKES
            + per_sample_clipped_linear.MISTAKES + domains.MISTAKES + review53.MISTAKES
            + review54.MISTAKES + review54b.MISTAKES + review55.MISTAKES
            + review55b.MISTAKES + review55c.MISTAKES + review56.MISTAKES)
