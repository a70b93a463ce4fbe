"""Lesson 03's layout clauses: the words each exercise's domain quotes when a layout fails
(its bullets and their checks and witnesses are the catalogue's,
tools/catalogue/lesson03_straight_through)."""

from ...function_contract import rule_reference

# the layouts rule 1 of the Function contract asks for, as a failed layout case cites them
# (autograder.domain)
X_LAYOUT_CLAUSE = ("x of any shape and strides (a transposed, sliced or expanded view too) "
                   f"{rule_reference('values')}")
LOGITS_LAYOUT_CLAUSE = f"logits of any leading shape and of any strides {rule_reference('values')}"
