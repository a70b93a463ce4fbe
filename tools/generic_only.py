"""`make generic`: what the generic grading layer catches alone, exercise by exercise.

For each exercise, every wrong answer of the catalogue (``tools.catalogue.mistakes()``) is
graded twice on this machine's grading devices (``AUTOGRADER_DEVICE=cpu`` for the CPU alone):

- by the **full battery**, as a learner's answer is graded (``Exercise.run``: the exercise's own
  battery, then every check its domain implies);
- by the **generic layer alone**: ``contract.check_each_input_alone`` at the domain's typical
  inputs (``comparison.compare``, every input at once, for an op returning a tuple), then
  ``properties.check_domain`` (the properties the exercise's ``Domain`` implies and the
  Function contract's rules), with no bespoke check of the exercise.

It prints one row per exercise: its mistakes, how many fail the full battery, how many fail the
generic layer alone, and the generic layer's share of what the full battery fails. A mistake
marked ``gpu`` (wrong on CUDA only) is left out where no GPU grades. ``--missed`` lists, below
the table, each mistake the full battery fails and the generic layer lets pass: the verdicts
that still rest on per-exercise code.

    python -m tools.generic_only [EXERCISE|LESSON ...] [--limit N] [--missed] [--workers N]
    make generic LESSONS="00 01" EXERCISES=Square

Names are exercises (``Square``) or lessons (``01``, ``01_sigmoid``, ``lesson01``); every
exercise when none is given. ``--limit N`` grades only each exercise's first N mistakes (a
quick look, and the test of this table).
"""

import argparse
import contextlib
import io
import sys
import time
import warnings
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field

import torch

from autograder.checks import check_is_function, run_forward
from autograder.comparison import compare, fresh_leaves
from autograder.contract import check_each_input_alone
from autograder.devices import grading_devices
from autograder.exercise import Exercise
from autograder.exercises import EXERCISES
from tools import catalogue


def generic_exercise(exercise: Exercise) -> Exercise:
    """``exercise`` with its battery replaced by the generic one: each input alone at the
    domain's typical inputs; ``Exercise.run`` then adds every check the domain implies."""
    domain = exercise.domain
    if domain is None:
        raise ValueError(f"{exercise.name} declares no domain: the generic layer has nothing "
                         "to run")

    def battery(submission, device) -> None:
        function = (domain.prepare(submission) if domain.prepare is not None
                    else check_is_function(submission, domain.spec))
        values = domain.values(device)
        inputs = fresh_leaves(values)
        if isinstance(run_forward(function, domain.spec, inputs).output, torch.Tensor):
            check_each_input_alone(function, domain.spec, values)
        else:  # a tuple of outputs (indices among them): every input at once
            compare(domain, function, inputs)

    return Exercise(exercise.name, exercise.lesson, battery, domain=domain,
                    within=exercise.within)


def fails(exercise: Exercise, entry) -> bool:
    """Whether grading ``entry`` with ``exercise`` fails (its own output silenced)."""
    with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            exercise.run(entry.load())
        except Exception:  # noqa: BLE001 - any failure is a verdict of "wrong"
            return True
    return False


@dataclass
class Row:
    lesson: str
    exercise: str
    mistakes: int = 0
    full: int = 0
    generic: int = 0
    gpu_only: int = 0  # left out: wrong on CUDA only, and no GPU grades here
    missed: list[str] = field(default_factory=list)  # full fails, generic passes

    @property
    def share(self) -> str:
        return f"{100 * self.generic / self.full:.0f}%" if self.full else "-"


def tally(name: str, limit: int | None = None) -> Row:
    """The row of exercise ``name``: each of its mistakes (the first ``limit``) graded both
    ways."""
    exercise = EXERCISES[name]
    generic = generic_exercise(exercise)
    gpu = any(device.type == "cuda" for device in grading_devices())
    entries = [entry for entry in catalogue.mistakes() if entry.exercise == name]
    row = Row(exercise.lesson, name)
    for entry in entries[:limit] if limit else entries:
        if entry.gpu and not gpu:
            row.gpu_only += 1
            continue
        row.mistakes += 1
        full, alone = fails(exercise, entry), fails(generic, entry)
        row.full += full
        row.generic += alone
        if full and not alone:
            row.missed.append(entry.name)
    return row


def table(rows: list[Row]) -> str:
    """A Markdown table of ``rows``, with a total line."""
    lines = ["| lesson | exercise | mistakes | full battery fails | generic alone fails "
             "| generic / full |", "|---|---|---:|---:|---:|---:|"]
    for row in rows:
        gpu = f" (+{row.gpu_only} GPU-only)" if row.gpu_only else ""
        lines.append(f"| {row.lesson} | {row.exercise} | {row.mistakes}{gpu} | {row.full} | "
                     f"{row.generic} | {row.share} |")
    total = Row("", "total", sum(r.mistakes for r in rows), sum(r.full for r in rows),
                sum(r.generic for r in rows))
    lines.append(f"| | **total** | {total.mistakes} | {total.full} | {total.generic} | "
                 f"{total.share} |")
    return "\n".join(lines)


def selected(names: list[str]) -> list[str]:
    """Exercises named, or every exercise of the lessons named; all when none is. In the
    course's order."""
    if not names:
        return list(EXERCISES)
    found = set()
    for name in names:
        number = name.removeprefix("lesson")[:2]
        lesson = {e for e, ex in EXERCISES.items() if name in (ex.lesson, ex.lesson[:2])
                  or (name.startswith("lesson") and ex.lesson[:2] == number)}
        if name not in EXERCISES and not lesson:
            raise ValueError(f"no exercise or lesson called {name!r}")
        found |= {name} & set(EXERCISES) or lesson
    return [name for name in EXERCISES if name in found]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.generic_only",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", metavar="EXERCISE|LESSON")
    parser.add_argument("--limit", type=int, default=None, help="first N mistakes per exercise")
    parser.add_argument("--missed", action="store_true",
                        help="list the mistakes only the full battery fails")
    parser.add_argument("--workers", type=int, default=1, help="exercises graded at once")
    arguments = parser.parse_args(argv)
    try:
        names = selected(arguments.names)
    except ValueError as error:
        parser.error(str(error))
    start = time.monotonic()
    if arguments.workers > 1:
        with ProcessPoolExecutor(arguments.workers) as pool:
            rows = list(pool.map(tally, names, [arguments.limit] * len(names)))
    else:
        rows = [tally(name, arguments.limit) for name in names]
    print(table(rows))
    if arguments.missed:
        for row in rows:
            for name in row.missed:
                print(f"- {row.exercise}: {name}")
    print(f"\n{time.monotonic() - start:.0f} s on {arguments.workers} worker(s), devices: "
          f"{', '.join(d.type for d in grading_devices())}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
