"""Lesson 11 (fused losses): answers with known verdicts for CrossEntropy, linear_cross_entropy
and the transfer exercise SmoothedCrossEntropy, most written as edits of the lesson's own
answers (answers.py). One module per exercise holds its first answers (cross_entropy,
linear_cross_entropy_unusual and linear_cross_entropy_mistakes, smoothed_cross_entropy and
smoothed_cross_entropy_terms); the *_variants modules hold more of CrossEntropy's and
SmoothedCrossEntropy's, linear_cross_entropy_numerics its dtypes and stability,
linear_cross_entropy_design where grad mode is asked and what is computed and kept; domains.py
holds the slips only the contracts' generated inputs show, squeezed_rows those raised at N = 1."""

from . import (cross_entropy, cross_entropy_variants, domains, linear_cross_entropy_design,
               linear_cross_entropy_mistakes, linear_cross_entropy_numerics,
               linear_cross_entropy_unusual, smoothed_cross_entropy,
               smoothed_cross_entropy_terms, smoothed_cross_entropy_variants, squeezed_rows)

UNUSUAL = (cross_entropy.UNUSUAL + cross_entropy_variants.UNUSUAL
           + linear_cross_entropy_unusual.UNUSUAL + linear_cross_entropy_numerics.UNUSUAL
           + linear_cross_entropy_design.UNUSUAL + smoothed_cross_entropy.UNUSUAL
           + smoothed_cross_entropy_variants.UNUSUAL)
MISTAKES = (cross_entropy.MISTAKES + cross_entropy_variants.MISTAKES
            + linear_cross_entropy_mistakes.MISTAKES + linear_cross_entropy_numerics.MISTAKES
            + linear_cross_entropy_design.MISTAKES + smoothed_cross_entropy.MISTAKES
            + smoothed_cross_entropy_terms.MISTAKES + smoothed_cross_entropy_variants.MISTAKES
            + domains.MISTAKES + squeezed_rows.MISTAKES)
