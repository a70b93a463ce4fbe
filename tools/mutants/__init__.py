"""Mutation testing of the grader: ``make mutants`` (``python -m tools.mutants``).

Each exercise's answers (the lesson's solution cells and the catalogue's correct-but-unusual
answers) are edited at one point each (``operators``), and every edit is graded with
``classified_verdict``, the call grading makes. A mutant grading fails is killed; one that
passes is a hole in the grader, unless its lesson lists it as an equivalent
(``tools.mutants.listed``) with the reason it is still correct.

Why our own AST pass and not mutmut 3 or cosmic-ray 8: both mutate installed modules on disk
and run a test command per mutant (a fresh interpreter each time, seconds before torch is even
imported), and both see only files. Our answers are notebook cells held in strings (the lessons'
jupytext sources and the catalogue's entries), run with their lesson's other cells, and graded
in-process by workers forked after torch is imported: a mutant costs its battery, nothing more.
The operators that matter here are about autograd's contract (``ctx``, ``save_for_backward``,
``needs_input_grad``, in-place writes), which neither tool has. Edits are spliced into the
source text at the AST's node positions, so each mutant is the answer as written with one
readable change (libcst would keep formatting too, but adds a dependency for what ``ast``'s
end positions already give).
"""
