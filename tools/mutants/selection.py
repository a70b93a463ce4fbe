"""Which mutants run: every one of the solution's, then the catalogued answers' up to ``cap``
per exercise in all, chosen the same way every run.

The solution's mutants come first, all of them, then the catalogued answers': within each,
operators take turns (in their registered order), so a cap keeps every operator, and an
operator's mutants go by a hash of what they change, so a mutant keeps its place when other
lines move. Only mutants that compile take a place. A slow lesson has a smaller cap
(``CAPS``): every run of ``make mutants`` fits in 20 minutes on 2 cores.
"""

import itertools
from collections import defaultdict

from autograder.exercises import EXERCISES

from .answers import SOLUTION, Answer, solution
from .generate import Mutant, mutants
from .operators import FAMILIES, OPERATORS


# mutants run per exercise. Measured CPU time per mutant (what an idle core spends): about
# 0.1 s in most lessons, 0.4 s in lesson 06, 0.5 s in lesson 08 (torch.compile), 2 to 4 s in
# lesson 13 (Triton kernels interpreted on CPU); these caps keep a whole run near 12 CPU-minutes
CAPS = {"13_kernels": 12, "08_compile": 40, "06_attention": 60}
DEFAULT_CAP = 120


def cap(exercise: str) -> int:
    """How many of ``exercise``'s mutants ``make mutants`` runs by default."""
    return CAPS.get(EXERCISES[exercise].lesson, DEFAULT_CAP)


def _turns(mutants: list[Mutant]) -> list[Mutant]:
    """The mutants in capping order: one of each operator in turn."""
    groups = defaultdict(list)
    for mutant in sorted(mutants, key=lambda m: m.rank):
        groups[mutant.operator].append(mutant)
    queues = [groups[operator.name] for operator in OPERATORS if operator.name in groups]
    return [mutant for turn in itertools.zip_longest(*queues) for mutant in turn if mutant]


def _order(mutants: list[Mutant]) -> list[Mutant]:
    """The solution's mutants in turns, then the catalogued answers'."""
    return (_turns([m for m in mutants if m.origin == SOLUTION])
            + _turns([m for m in mutants if m.origin != SOLUTION]))


def chosen(mutants: list[Mutant], answers: dict[str, Answer], limit: int | None) -> list[Mutant]:
    """Every compiling mutant of the solution, however small ``limit`` (issue 45: the
    solution's mutants are the promise), then the catalogued answers' in capping order until
    ``limit`` in all (all that compile when None)."""
    picked = []
    for mutant in _order(mutants):
        if limit is not None and len(picked) >= limit and mutant.origin != SOLUTION:
            break
        if mutant.compiles(answers[mutant.origin]):
            picked.append(mutant)
    return picked


def sample(lesson: str) -> tuple[Answer, Mutant]:
    """The fixed sample ``make test`` grades from ``lesson``: one mutant of its solution, of the
    family whose turn the lesson's number gives (the next family where it has none), the first
    in capping order over the lesson's exercises. Fourteen lessons cover the three families."""
    turn = int(lesson[:2])
    families = [FAMILIES[(turn + step) % len(FAMILIES)] for step in range(len(FAMILIES))]
    answers = {exercise: solution(exercise) for exercise, spec in EXERCISES.items()
               if spec.lesson == lesson}
    made = sorted((m for answer in answers.values() for m in mutants(answer)),
                  key=lambda m: m.rank)
    for family in families:
        for mutant in made:
            if mutant.family == family and mutant.compiles(answers[mutant.exercise]):
                return answers[mutant.exercise], mutant
    raise ValueError(f"lesson {lesson} has no mutant that compiles")
