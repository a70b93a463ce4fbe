"""Lesson 07 (outputs beyond one tensor): answers with known verdicts for SortWithIndices (an
integer output), SplitHalves (two outputs, gradients that may be None; split_halves_allocations:
a backward that allocates more than the gradient it returns), ReLUInPlace and AbsInPlace (writes
into the input), one module per exercise, with the reviewers' answers at the end of each;
``boolean_mask_writes`` for in-place writes through a boolean mask."""

from . import (abs_in_place, boolean_mask_writes, relu_in_place, sort_with_indices,
               split_halves, split_halves_allocations)

UNUSUAL = (sort_with_indices.UNUSUAL + split_halves.UNUSUAL + relu_in_place.UNUSUAL
           + abs_in_place.UNUSUAL + boolean_mask_writes.UNUSUAL)
MISTAKES = (sort_with_indices.MISTAKES + split_halves.MISTAKES + split_halves_allocations.MISTAKES
            + relu_in_place.MISTAKES + abs_in_place.MISTAKES + boolean_mask_writes.MISTAKES)
