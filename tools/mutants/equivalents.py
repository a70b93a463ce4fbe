"""The listed equivalent mutants of the exercises a run covers, and the listings that have gone
stale: no mutant makes that edit any more, or grading now fails every mutant that does."""

from .listed import EquivalentMutant, collected
from autograder.exercises import EXERCISES

from .generate import Mutant
from .operators import OPERATORS


def listed(exercises: list[str]) -> dict[tuple, EquivalentMutant]:
    """(exercise, operator, before, after) -> its listing, for these exercises."""
    operators = {operator.name for operator in OPERATORS}
    found = {}
    for entry in collected():
        if entry.exercise not in EXERCISES or entry.operator not in operators:
            raise ValueError(f"equivalent mutant {entry} names an unknown exercise or operator")
        key = (entry.exercise, entry.operator, entry.before, entry.after)
        if key in found:
            raise ValueError(f"equivalent mutant listed twice: {entry}")
        if entry.exercise in exercises:
            found[key] = entry
    return found


def stale(listing: dict[tuple, EquivalentMutant], made: list[Mutant],
          failed: dict[tuple, str]) -> list[tuple[EquivalentMutant, str]]:
    """Listings no mutant matches any more, or whose every mutant fails (``failed``: key -> the
    mistake grading names, for edits no capped-out answer also makes): (entry, why)."""
    made_keys = {mutant.key for mutant in made}
    found = []
    for key, entry in listing.items():
        if key not in made_keys:
            found.append((entry, "no mutant makes this edit any more"))
        elif key in failed:
            found.append((entry, f"grading now fails it ({failed[key]}): not an equivalent, "
                                 "remove the listing"))
    return found
