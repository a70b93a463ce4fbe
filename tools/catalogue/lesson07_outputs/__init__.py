"""Lesson 07 (outputs beyond one tensor): answers with known verdicts for SortWithIndices (an
integer output), SplitHalves (two outputs, gradients that may be None; split_halves_allocations:
a backward that allocates more than the gradient it returns), ReLUInPlace and AbsInPlace (writes
into the input), one module per exercise; ``reviewed``, ``later_review`` and
``fresh_review`` (and ``fresh_review_in_place``), ``review53``, ``review54``, ``review54b``,
``review55``, ``review55b``, ``review55c`` and ``review57`` for reviewers' answers kept as written."""

from . import (abs_in_place, fresh_review, fresh_review_in_place, later_review, relu_in_place,
               review53, review54, review54b, review55, review55b, review55c, review57,
               reviewed,
               sort_with_indices, split_halves, split_halves_allocations)

UNUSUAL = (sort_with_indices.UNUSUAL + split_halves.UNUSUAL + relu_in_place.UNUSUAL
           + abs_in_place.UNUSUAL + reviewed.UNUSUAL + later_review.UNUSUAL
           + fresh_review.UNUSUAL + review53.UNUSUAL + review54.UNUSUAL
           + review54b.UNUSUAL + review55.UNUSUAL + review55b.UNUSUAL + review57.UNUSUAL)
MISTAKES = (sort_with_indices.MISTAKES + split_halves.MISTAKES + split_halves_allocations.MISTAKES
            + relu_in_place.MISTAKES + abs_in_place.MISTAKES + reviewed.MISTAKES
            + later_review.MISTAKES + fresh_review.MISTAKES + fresh_review_in_place.MISTAKES
            + review53.MISTAKES + review54.MISTAKES + review54b.MISTAKES + review55.MISTAKES
            + review55b.MISTAKES + review55c.MISTAKES + review57.MISTAKES)
