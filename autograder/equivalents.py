"""Mutants no grader can kill: edits of an answer that leave it correct.

``make mutants`` (``tools.mutants``) grades single-point edits of every answer; an edit that
still passes is either a hole in the grader or an equivalent mutant, which each lesson package
lists in its ``equivalents.py`` as ``EQUIVALENTS = [EquivalentMutant(...), ...]``, each with the
reason a reader can check.
"""

import importlib
import pkgutil
from dataclasses import dataclass


@dataclass(frozen=True)
class EquivalentMutant:
    """One surviving edit that is not a hole: ``before`` and ``after`` are the mutated line's
    text, stripped (several lines joined by newlines), so the entry survives the line moving."""

    exercise: str
    operator: str
    before: str
    after: str
    reason: str  # one line a reader can verify, e.g. "reshape of a tensor made contiguous above"

    def __post_init__(self):
        if not self.reason.strip():
            raise ValueError(f"equivalent mutant of {self.exercise} ({self.operator}) gives no "
                             "reason: say why the edit leaves the answer correct")


def collected() -> list[EquivalentMutant]:
    """Every ``EQUIVALENTS`` list of an ``equivalents`` module under ``autograder.exercises``."""
    from . import exercises

    found = []
    prefix = f"{exercises.__name__}."
    for info in pkgutil.walk_packages(exercises.__path__, prefix):
        if info.name.rpartition(".")[2] == "equivalents":
            module = importlib.import_module(info.name)
            found.extend(module.EQUIVALENTS)
    return found
