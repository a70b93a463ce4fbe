"""``python -m tools.mutants [EXERCISE|LESSON ...] [--workers N] [--cap N]``: see the package."""

import argparse
import os
import sys
import time
from pathlib import Path

# one compute thread per worker, set before torch starts its pools: the workers are the
# parallelism (and a process forked after torch's thread pools start can deadlock in them)
for variable in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                 "TORCHINDUCTOR_COMPILE_THREADS"):
    os.environ.setdefault(variable, "1")

from autograder.devices import interpret_triton_without_gpu  # noqa: E402

interpret_triton_without_gpu()  # before torch._dynamo imports Triton, as a grading kernel does

from .answers import answers  # noqa: E402
from .campaign import run, selected  # noqa: E402
from .instructor import register  # noqa: E402
from .report import exercise_block, totals_table  # noqa: E402
from .selection import cap  # noqa: E402


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.mutants", description=(
        "Grade single-point mutants of every exercise's answers; fail on a survivor not listed "
        "as an equivalent."))
    parser.add_argument("names", nargs="*", metavar="EXERCISE|LESSON",
                        help="exercises (Square) or lessons (01, 01_sigmoid); all when none")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1,
                        help="processes grading at once (default: one per core)")
    parser.add_argument("--notebook", type=Path, metavar="PATH",
                        help="an instructor's notebook (.ipynb or jupytext .py): mutants of its "
                             "solution, graded by the FunctionExercise its test cells build")
    parser.add_argument("--cap", type=int, default=None,
                        help="mutants run per exercise (default: the lesson's, see "
                             "tools/mutants/selection.py; 0: all)")
    arguments = parser.parse_args(argv)
    try:
        instructor = register(arguments.notebook) if arguments.notebook else {}
        exercises = list(instructor) if instructor and not arguments.names else selected(
            arguments.names)
    except ValueError as error:
        parser.error(str(error))
    start = time.monotonic()
    limits = {exercise: cap(exercise) if arguments.cap is None else arguments.cap or None
              for exercise in exercises}
    answers_of = lambda exercise: instructor.get(exercise) or answers(exercise)  # noqa: E731
    tallies, errors = run(limits, max(1, arguments.workers), answers_of)
    for tally in tallies:
        print(exercise_block(tally), end="\n\n")
    print(totals_table(tallies))
    print(f"\n{time.monotonic() - start:.0f} s on {arguments.workers} workers")
    survivors = sum(len(tally.survivors) for tally in tallies)
    for error in errors:
        print(f"error: {error}")
    if survivors:
        print(f"{survivors} survivors: kill each with a stronger check, or list it in the "
              "lesson's tools/mutants/listed/<lesson>/equivalents.py with its reason")
    return 1 if survivors or errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
