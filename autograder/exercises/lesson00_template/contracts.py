"""Lesson 00's layout clauses: the words each exercise's domain quotes when a layout fails (its
bullets and their checks and witnesses are the catalogue's, tools/catalogue/lesson00_template)."""

# the layouts each exercise's domain tries (autograder.domain.LAYOUTS): the grader quotes these
# words when one fails (rule 1 of the Function contract: every layout)
SQUARE_LAYOUTS = ("`x` in any layout torch's own ops accept: transposed, a column slice of a "
                  "wider tensor, or expanded (strides other than its shape's)")
WEIGHTED_SUM_LAYOUTS = ("`x1` and `x2` in any layout torch's own ops accept, each alone or both: "
                        "transposed, a column slice of a wider tensor, or expanded")
OUTER_LAYOUTS = ("`u` and `v` of any stride, each alone or both: every other element of a longer "
                 "tensor, or expanded (stride 0)")
