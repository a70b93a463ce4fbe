"""Catalogue entries by name, for the lesson-special tests (the harness runs them all)."""

from tools import catalogue


def mistake(exercise: str, name: str):
    """The Function (or function) of the catalogued mistake ``name`` of ``exercise``."""
    return catalogue.mistake(exercise, name).load()


def unusual(exercise: str, name: str):
    """The Function (or function) of the catalogued unusual answer ``name`` of ``exercise``."""
    return _find(catalogue.unusual(), exercise, name).load()


def _find(entries, exercise: str, name: str):
    for entry in entries:
        if (entry.exercise, entry.name) == (exercise, name):
            return entry
    raise KeyError(f"no catalogue entry {name!r} for {exercise}")


def graded_mistake(exercise: str, name: str) -> str:
    """The mistake id (or category) grading records for the catalogued mistake ``name``; the
    mistake must fail."""
    from autograder.grading import classified_verdict

    verdict = classified_verdict(exercise, mistake(exercise, name))
    assert not verdict.passed, f"{exercise}: catalogued mistake {name!r} passed"
    return verdict.mistake
