"""Lesson 00 (template): answers with known verdicts for Square, WeightedSum and Outer: one
module per exercise (its forms, its own mistakes), the answer builders they share in
``answers``, and one module per concept across the three: ``domains`` (dtype and layout slips),
``shapes`` (size-1 and empty dimensions, a broadcast gradient), ``state`` (state kept outside
ctx), ``by_hand`` (Jacobians as matrices, autograd inside backward), ``written`` (tensors
written in place), ``float_extremes`` (answers right over every value a model meets) and
``devices`` (tensors made on the default device in a branch for one shape)."""

from . import (by_hand, devices, domains, float_extremes, outer, shapes, square, state,
               weighted_sum, written)

UNUSUAL = (square.UNUSUAL + weighted_sum.UNUSUAL + outer.UNUSUAL + domains.UNUSUAL
           + shapes.UNUSUAL + state.UNUSUAL + float_extremes.UNUSUAL)
MISTAKES = (square.MISTAKES + weighted_sum.MISTAKES + outer.MISTAKES + domains.MISTAKES
            + shapes.MISTAKES + state.MISTAKES + by_hand.MISTAKES + written.MISTAKES
            + float_extremes.MISTAKES + devices.MISTAKES)
