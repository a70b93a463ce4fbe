"""Partial credit for an exercise whose hidden tests are several weighted checks.

All-or-nothing is the default: an ``Exercise`` passes every check or scores 0. An exercise
that declares weighted parts instead earns the weight of the parts that pass::

    WeightedExercise("MyLinearFunction", "02_linear", battery=None,
                     parts=(Part("forward values", 1, check_forward),
                            Part("gradients for x, weight and bias", 2, check_gradients),
                            Part("skips work that needs_input_grad rules out", 1, check_flops)))

Each part is ``check(submission, device)``, raising GradingError with a hint when it fails. In a
sealed grading kernel (``autograder.seal``) the verdict then carries the fraction earned, which
nbgrader records as partial points; anywhere else ``grade`` stays all-or-nothing.
"""

from dataclasses import dataclass, field
from typing import Callable

from .devices import grading_devices
from .errors import GradingError
from .exercise import Exercise
from .mistakes import NOT_IMPLEMENTED, mistake_of, raised_message
from .torch_state import known_state
from .verdict import Verdict


@dataclass(frozen=True)
class Part:
    """One weighted check of an exercise."""

    name: str
    weight: float
    check: Callable[[object, object], None]


def _outcome(part: Part, name: str, submission) -> tuple[str, str] | None:
    """None if the part passes on every grading device, else the hint that says why not and
    the mistake (``autograder.mistakes``)."""
    try:
        with known_state():
            for device in grading_devices():
                part.check(submission, device)
    except GradingError as error:
        return str(error).splitlines()[0], mistake_of(error)
    except NotImplementedError:
        return (f"{name} is not implemented yet: its stub still raises NotImplementedError",
                NOT_IMPLEMENTED)
    except Exception as error:  # the learner's code may raise anything
        return raised_message(name, error), mistake_of(error)
    return None


@dataclass(frozen=True)
class WeightedExercise(Exercise):
    """An exercise scored as the weight of its passing parts (see the module docstring)."""

    parts: tuple[Part, ...] = field(default=())

    def __post_init__(self):
        if not self.parts or any(part.weight <= 0 for part in self.parts):
            raise ValueError(f"{self.name}: a WeightedExercise needs parts with positive weights")
        if self.battery is None:
            object.__setattr__(self, "battery", self._all_parts)

    def _all_parts(self, submission, device) -> None:
        for part in self.parts:
            part.check(submission, device)

    def score(self, submission) -> tuple[bool, str, float]:
        """(passed, message, fraction earned); the message's first line is the hint."""
        return self.scored_verdict(submission)[:3]

    def scored_verdict(self, submission) -> Verdict:
        """The verdict with the fraction earned and the first failing part's mistake."""
        failures = [(part, _outcome(part, self.name, submission)) for part in self.parts]
        failed = [(part, outcome) for part, outcome in failures if outcome is not None]
        total = sum(part.weight for part in self.parts)
        earned = sum(part.weight for part, outcome in failures if outcome is None)
        if not failed:
            return Verdict(True, f"{self.name}: passes every check grading runs", 1.0)
        details = "\n".join(f"{'✓' if outcome is None else '✗'} {part.name} "
                            f"({part.weight:g} of {total:g})"
                            f"{'' if outcome is None else ': ' + outcome[0]}"
                            for part, outcome in failures)
        hint, mistake = failed[0][1]
        return Verdict(False, f"{hint}\n{details}", earned / total, mistake)


def scored_verdict(verdict, exercises: dict):
    """``verdict`` (name, submission) -> (passed, message[, score, mistake]), extended to give
    the fraction earned (and the mistake) for exercises that declare weighted parts."""

    def scored(name: str, submission):
        exercise = exercises.get(name)
        if isinstance(exercise, WeightedExercise):
            return exercise.scored_verdict(submission)
        return verdict(name, submission)

    return scored
