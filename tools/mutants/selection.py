"""Which mutants run: at most ``cap`` per exercise, chosen the same way every run.

Operators take turns (in their registered order), so a cap keeps every operator an exercise
has; within an operator the solution's mutants come first, then the others by a hash of what
they change, so a mutant keeps its place when other lines move. Only mutants that compile
take a place.
"""

import itertools
from collections import defaultdict

from .answers import SOLUTION, Answer
from .generate import Mutant
from .operators import OPERATORS


def _turns(mutants: list[Mutant]) -> list[Mutant]:
    """The mutants in capping order: one of each operator in turn."""
    groups = defaultdict(list)
    for mutant in mutants:
        groups[mutant.operator].append(mutant)
    queues = [sorted(groups[operator.name], key=lambda m: (m.origin != SOLUTION, m.rank))
              for operator in OPERATORS if operator.name in groups]
    return [mutant for turn in itertools.zip_longest(*queues) for mutant in turn if mutant]


def chosen(mutants: list[Mutant], answers: dict[str, Answer], cap: int | None) -> list[Mutant]:
    """The first ``cap`` compiling mutants in capping order (all that compile when None)."""
    picked = []
    for mutant in _turns(mutants):
        if cap is not None and len(picked) == cap:
            break
        if mutant.compiles(answers[mutant.origin]):
            picked.append(mutant)
    return picked
