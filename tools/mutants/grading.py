"""One mutant graded as a submission is: loaded from its cells, then ``classified_verdict``,
the very call grading makes, with the answer's printing and warnings kept off the report."""

import contextlib
import io
import os
import time
import warnings
from dataclasses import dataclass

from autograder.grading import classified_verdict

from .answers import Answer
from .generate import Mutant

KILLED, SURVIVED, DISCARDED, TIMEOUT, CRASHED = "killed", "survived", "discarded", "timeout", \
    "crashed"
FAILED = {KILLED, TIMEOUT, CRASHED}  # a mutant that ran past its time or took its process down
# earns no marks either


@dataclass(frozen=True)
class Outcome:
    status: str
    detail: str  # the mistake grading names, or why the mutant was discarded
    seconds: float  # wall time
    cpu_seconds: float = 0.0  # CPU time, compilers it ran included: an idle machine's time


def grade(task: tuple[Answer, Mutant | None]) -> Outcome:
    """The verdict on ``mutant`` (on the answer itself when None)."""
    answer, mutant = task
    start, cpu = time.perf_counter(), _cpu()
    sources = answer.sources if mutant is None else mutant.sources(answer)
    with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            submission = answer.load(sources)
        except Exception as error:  # noqa: BLE001 (an edit may break the cell any way)
            return Outcome(DISCARDED, f"does not define {answer.exercise}: "
                           f"{type(error).__name__}: {error}", *_since(start, cpu))
        try:
            verdict = classified_verdict(answer.exercise, submission)
        except BaseException as error:  # noqa: BLE001 (SystemExit, RecursionError, ...)
            return Outcome(KILLED, f"raised {type(error).__name__} past grading",
                           *_since(start, cpu))
    detail = "" if verdict.passed else str(verdict.mistake or verdict.message.partition("\n")[0])
    return Outcome(SURVIVED if verdict.passed else KILLED, detail, *_since(start, cpu))


def _cpu() -> float:
    """CPU seconds of this process and of the children it waited for (inductor's compiler)."""
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


def _since(start: float, cpu: float) -> tuple[float, float]:
    return time.perf_counter() - start, _cpu() - cpu
