"""A run of ``make mutants``: each selected exercise's answers are graded unmutated first (an
answer that fails is an error, and its mutants are not run), then its capped mutants, in
parallel, each with a deadline of ``TIMEOUT_FACTOR`` times its unmutated answer's time."""

import sys
import time
from collections.abc import Callable

from autograder.exercises import EXERCISES

from . import pool
from .answers import Answer, answers
from .equivalents import listed, stale
from .generate import mutants
from .grading import CRASHED, DISCARDED, FAILED, SURVIVED, TIMEOUT, Outcome, grade
from .report import Tally
from .selection import chosen

# generous: a survivor that only ran slow on a loaded machine must not count as killed
TIMEOUT_FACTOR, MIN_TIMEOUT, ANSWER_TIMEOUT = 20, 60.0, 600.0  # seconds


def selected(names: list[str]) -> list[str]:
    """Exercises named, or every exercise of the lessons named (``01``, ``01_sigmoid``,
    ``lesson01``); all of them when none is named. In the course's order."""
    if not names:
        found = set(EXERCISES)
    else:
        found = set()
        for name in names:
            number = name.removeprefix("lesson")[:2]
            lesson = {e for e, ex in EXERCISES.items() if name in (ex.lesson, ex.lesson[:2])
                      or (name.startswith("lesson") and ex.lesson[:2] == number)}
            if name not in EXERCISES and not lesson:
                raise ValueError(f"no exercise or lesson called {name!r}; exercises: "
                                 f"{', '.join(EXERCISES)}")
            found |= {name} & set(EXERCISES) or lesson
    order = list(EXERCISES)
    return sorted(found, key=lambda e: (EXERCISES[e].lesson, order.index(e)))


def _outcome(result) -> Outcome:
    if result is pool.TIMED_OUT:
        return Outcome(TIMEOUT, "ran past its deadline", 0.0)
    if result is pool.DIED:
        return Outcome(CRASHED, "took its process down", 0.0)
    return result


def _graded(tasks: list, workers: int, timeout, what: str) -> list[Outcome]:
    outcomes: list = [None] * len(tasks)
    start = last = time.monotonic()
    for done, (index, result) in enumerate(pool.run(tasks, grade, workers, timeout), 1):
        outcomes[index] = _outcome(result)
        if time.monotonic() - last > 15 or done == len(tasks):
            last = time.monotonic()
            print(f"  {what}: {done}/{len(tasks)} graded, {last - start:.0f} s", file=sys.stderr)
    return outcomes


def _baseline(tallies: dict, plans: dict, workers: int, errors: list) -> dict:
    """(exercise, origin) -> seconds grading takes, for each answer some chosen mutant edits
    and that passes unmutated; each that fails is an error."""
    edited = {(m.exercise, m.origin) for _, picked in plans.values() for m in picked}
    originals = [(tallies[exercise].answers[origin], None) for exercise, origin in sorted(edited)]
    originals.sort(key=lambda task: EXERCISES[task[0].exercise].lesson, reverse=True)
    baseline = {}
    outcomes = _graded(originals, workers, lambda _: ANSWER_TIMEOUT, "answers unmutated")
    for (answer, _), outcome in zip(originals, outcomes):
        if outcome.status == SURVIVED:
            baseline[answer.exercise, answer.origin] = outcome.seconds
        else:
            errors.append(f"{answer.exercise} ({answer.origin}) fails unmutated: "
                          f"{outcome.status}, {outcome.detail}")
    return baseline


def run(limits: dict[str, int | None], workers: int,
        answers_of: Callable[[str], list[Answer]] = answers) -> tuple[list[Tally], list[str]]:
    """Grade the mutants of each exercise of ``limits``, at most its limit (all when None),
    made from ``answers_of(exercise)``; return a tally per exercise and the errors."""
    exercises = list(limits)
    errors, tallies, plans = [], {}, {}
    for exercise in exercises:
        by_origin = {answer.origin: answer for answer in answers_of(exercise)}
        made = [mutant for answer in by_origin.values() for mutant in mutants(answer)]
        plans[exercise] = (made, chosen(made, by_origin, limits[exercise]))
        tallies[exercise] = Tally(exercise, EXERCISES[exercise].lesson, made=len(made))
        tallies[exercise].answers = by_origin
    baseline = _baseline(tallies, plans, workers, errors)
    tasks = [(tallies[m.exercise].answers[m.origin], m) for _, picked in plans.values()
             for m in picked if (m.exercise, m.origin) in baseline]
    for _, mutant in tasks:
        tallies[mutant.exercise].run += 1
    tasks.sort(key=lambda task: -baseline[task[1].exercise, task[1].origin])
    timeout = lambda task: max(MIN_TIMEOUT,  # noqa: E731
                               TIMEOUT_FACTOR * baseline[task[1].exercise, task[1].origin])
    outcomes = _graded(tasks, workers, timeout, "mutants")
    listing = listed(exercises)
    survived, failed = set(), {}
    for (answer, mutant), outcome in zip(tasks, outcomes):
        tally = tallies[mutant.exercise]
        tally.seconds += outcome.seconds
        tally.cpu_seconds += outcome.cpu_seconds
        if outcome.status == DISCARDED:
            tally.discarded += 1
        elif outcome.status in FAILED:
            tally.killed += 1
            tally.timeouts += outcome.status == TIMEOUT
            failed[mutant.key] = outcome.detail
        elif mutant.key in listing:
            tally.equivalent += 1
            survived.add(mutant.key)
        else:
            tally.survivors.append((mutant, answer))
    made_all = [m for made, _ in plans.values() for m in made]
    # an edit that also appears in an answer the cap left out may survive there: not stale
    ran = {(mutant.origin, mutant.key) for _, mutant in tasks}
    capped = {m.key for m in made_all if (m.origin, m.key) not in ran}
    only_failed = {key: detail for key, detail in failed.items()
                   if key not in survived and key not in capped}
    for entry, why in stale(listing, made_all, only_failed):
        errors.append(f"stale equivalent of {entry.exercise} ({entry.operator}: "
                      f"{entry.before!r} -> {entry.after!r}): {why}")
    return [tallies[e] for e in exercises], errors

