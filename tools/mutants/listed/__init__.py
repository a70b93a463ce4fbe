"""Mutants no grader can kill: edits of an answer that leave it correct.

``make mutants`` (``tools.mutants``) grades single-point edits of every answer; an edit that
still passes is either a hole in the grader or an equivalent mutant, which each lesson's package
here (``tools/mutants/listed/lessonNN_<name>/equivalents.py``) lists as
``EQUIVALENTS = [EquivalentMutant(...), ...]``, each with the reason a reader can check. They
belong to the mutation tool, not to the grading library a learner's kernel imports.
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
    """Every ``EQUIVALENTS`` list of an ``equivalents`` module in a lesson's package here."""
    found = []
    for info in pkgutil.walk_packages(__path__, f"{__name__}."):
        if info.name.rpartition(".")[2] == "equivalents":
            module = importlib.import_module(info.name)
            found.extend(module.EQUIVALENTS)
    return found
