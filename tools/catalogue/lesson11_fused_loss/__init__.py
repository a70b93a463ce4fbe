"""Lesson 11 (fused losses): answers with known verdicts for CrossEntropy, linear_cross_entropy
and the transfer exercise SmoothedCrossEntropy, one module per exercise (linear_cross_entropy's
unusual answers and mistakes apart), most written as edits of the lesson's own answers
(answers.py); domains.py holds the slips only the contracts' generated inputs show."""

from . import (cross_entropy, domains, linear_cross_entropy_mistakes, linear_cross_entropy_unusual,
               review53, review54, review57, review57c, smoothed_cross_entropy,
               smoothed_cross_entropy_terms)

UNUSUAL = (cross_entropy.UNUSUAL + linear_cross_entropy_unusual.UNUSUAL
           + smoothed_cross_entropy.UNUSUAL + review53.UNUSUAL + review54.UNUSUAL
           + review57.UNUSUAL + review57c.UNUSUAL)
MISTAKES = (cross_entropy.MISTAKES + linear_cross_entropy_mistakes.MISTAKES
            + smoothed_cross_entropy.MISTAKES + smoothed_cross_entropy_terms.MISTAKES
            + domains.MISTAKES + review53.MISTAKES + review54.MISTAKES
            + review57.MISTAKES + review57c.MISTAKES)
