"""Lesson 00 (template): answers with known verdicts for Square, WeightedSum and Outer, one
module per exercise (its unusual answers and its mistakes), the answer builders they share in
``answers``, and in ``domains`` the dtype and layout slips only the later checks separate
(weights rounded through a float32 tensor, a backward that needs a contiguous grad_output)."""

from . import (domains, outer, review53, review54, review56, review56b, review57, review58,
               review58b, review58c, review58d, square, weighted_sum)

UNUSUAL = (square.UNUSUAL + weighted_sum.UNUSUAL + outer.UNUSUAL + review53.UNUSUAL
           + review54.UNUSUAL + review56.UNUSUAL + review56b.UNUSUAL + review57.UNUSUAL
           + review58.UNUSUAL + review58b.UNUSUAL + review58c.UNUSUAL
           + review58d.UNUSUAL)
MISTAKES = (square.MISTAKES + weighted_sum.MISTAKES + outer.MISTAKES + domains.MISTAKES
            + review53.MISTAKES + review54.MISTAKES + review56.MISTAKES
            + review56b.MISTAKES + review57.MISTAKES + review58.MISTAKES
            + review58b.MISTAKES + review58c.MISTAKES + review58d.MISTAKES)
