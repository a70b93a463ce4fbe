"""An exercise's contract as the learner reads it: one ``Clause`` per bullet of the lesson's
contract list, each with the checks that enforce it and, for each check, a wrong answer that
it fails (its witness), so that a clause nothing checks, or a check nothing makes fail, shows.

A check is named the way a failed verdict names its mistake (``autograder.mistakes``): a proven
id (``"Outer/computes-unneeded-gradient"``), or ``"case:<words>"`` for a failure in the case
the words describe (``"case:a transposed grad_output"``), where no probe names the cause. A
witness is the name of a catalogued mistake of the exercise (this catalogue). Each lesson's
``contracts`` module holds its exercises' clauses and the checks through which each enforces
the Function contract's rules (``autograder.function_contract``); ``contract_of`` reads them.
Grading never reads them: they are the catalogue's map of which answer proves which check.
"""

# One Clause for both homes while lessons 05 and 13 still declare theirs in the grading library
# (which cannot import tools/); when they move, the definitions move here.
from autograder.clauses import CASE, Clause, enforced  # noqa: F401 (this module's vocabulary)
