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

from dataclasses import dataclass, field

CASE = "case:"


@dataclass(frozen=True)
class Clause:
    """One bullet of the contract (its markdown, as the lesson prints it) -> check -> witness."""

    text: str
    checks: dict[str, str] = field(default_factory=dict)

    def __post_init__(self):
        if not self.checks:
            raise ValueError(f"the clause {self.text[:60]!r}... names no check that enforces it")


def enforced(check: str, mistake: str, message: str) -> bool:
    """Does a failed verdict (its ``mistake`` id or category, its ``message``) come from
    ``check``?"""
    if check.startswith(CASE):
        return check.removeprefix(CASE) in message
    return mistake == check
