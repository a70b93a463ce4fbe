"""`make bench`: autograde a synthetic class the way `make autograde` does, in one run.

Forty submissions made from the solutions of lessons 00-02, about one in three with a seeded
mistake, graded by grader.batch (sealed, sandboxed kernels; one gradebook writer). Measured side
by side: the floor (a fresh kernel that imports torch), seconds per notebook with one worker, and
throughput with one and with two workers. Targets: per notebook <= 1.5 x the floor; two workers
>= 1.8 x the throughput of one. To stay near five minutes, the one-worker run grades every other
submission (the same mix of lessons and mistakes); the two-worker run grades all forty.
"""

import io
import os
import random
import statistics
import tempfile
import textwrap
import time
from pathlib import Path

import nbformat

from autograder.exercises import EXERCISES
from grader import batch
from grader.instructor import release
from grader.lessons import lesson_names, source_notebook
from tools.bench_grading import floor_seconds
from tools.catalogue import mistakes
from tools.submissions import solved, with_answer

CLASS_SIZE = 40
MISTAKE_RATE = 1 / 3
SEED = 0
FLOOR_REPEATS = 3
LESSONS = ("00_template", "01_sigmoid", "02_linear")

# lesson -> [(answer cell, wrong answer)]: the catalogue's mistakes that nbgrader also grades
MISTAKES: dict[str, list[tuple[str, str]]] = {}
for _mistake in mistakes():
    if _mistake.nbgrader:
        MISTAKES.setdefault(EXERCISES[_mistake.exercise].lesson, []).append(
            (f"answer_{_mistake.exercise}", _mistake.answer_cell))


def make_class(root: Path, lessons: list[str]) -> int:
    """Write CLASS_SIZE submissions, round-robin over ``lessons``; return how many are wrong."""
    chance = random.Random(SEED)
    solved_lessons = {}
    for lesson in lessons:
        released = nbformat.read(root / "release" / lesson / f"{lesson}.ipynb", as_version=4)
        solved_lessons[lesson] = solved(released, source_notebook(lesson))
    wrong = 0
    for number in range(CLASS_SIZE):
        lesson = lessons[number % len(lessons)]
        notebook = solved_lessons[lesson]
        if chance.random() < MISTAKE_RATE and MISTAKES.get(lesson):
            cell, code = chance.choice(MISTAKES[lesson])
            notebook, wrong = with_answer(notebook, cell, textwrap.dedent(code).strip()), wrong + 1
        folder = root / "submitted" / f"learner{number:02d}" / lesson
        folder.mkdir(parents=True)
        nbformat.write(notebook, folder / f"{lesson}.ipynb")
    return wrong


def _grade(root: Path, lessons: list[str], workers: int, students: set[str] | None = None):
    """Grade (again) the given students, or all, with ``workers``; return (seconds, summary)."""
    hidden = []
    if students is not None:  # set the others aside for this run
        for folder in sorted((root / "submitted").iterdir()):
            if folder.name not in students:
                hidden.append(folder.rename(root / f".aside-{folder.name}"))
    try:
        began = time.perf_counter()
        summary = batch.autograde(root, lessons, workers=workers, force=True, stream=io.StringIO())
        return time.perf_counter() - began, summary
    finally:
        for folder in hidden:
            folder.rename(root / "submitted" / folder.name[len(".aside-"):])


def run() -> str:
    lessons = [lesson for lesson in LESSONS if lesson in lesson_names()]
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="bench-class-") as scratch:
        root = Path(scratch) / "course"
        release(root, lessons)
        wrong = make_class(root, lessons)
        floors = [floor_seconds() for _ in range(FLOOR_REPEATS)]
        half = {f"learner{number:02d}" for number in range(0, CLASS_SIZE, 2)}
        one_seconds, one = _grade(root, lessons, 1, half)
        two_seconds, two = _grade(root, lessons, 2)
    floor = statistics.median(floors)
    per_notebook = one_seconds / len(half)
    one_rate, two_rate = len(half) / one_seconds, CLASS_SIZE / two_seconds
    phases = {phase: seconds / len(half) for phase, seconds in one.timing.items()}
    statuses = ", ".join(f"{count} {status}" for status, count in sorted(two.statuses.items()))
    rows = [
        ("fresh kernel + import torch (floor)", f"{floor:8.2f}", f"{1:8.2f}"),
        ("per notebook, 1 worker", f"{per_notebook:8.2f}", f"{per_notebook / floor:8.2f}"),
        ("  sealed, sandboxed kernel start", f"{phases.get('kernel start', 0):8.2f}", ""),
        ("  cells and hidden tests", f"{phases.get('cells', 0):8.2f}", ""),
        ("  gradebook write (the one writer)", f"{phases.get('gradebook write', 0):8.2f}", ""),
        (f"throughput, 1 worker ({len(half)} notebooks)", f"{one_rate:8.3f}", ""),
        (f"throughput, 2 workers ({CLASS_SIZE} notebooks)", f"{two_rate:8.3f}",
         f"{two_rate / one_rate:8.2f}"),
    ]
    lines = [
        f"Autograding a class of {CLASS_SIZE} ({', '.join(lessons)}; {wrong} with a seeded "
        f"mistake), measured in one run",
        f"  sandbox: {two.sandbox or 'off'}; results: {statuses}",
        f"  machine: {os.cpu_count()} cores, load average {load_before:.1f} before and "
        f"{os.getloadavg()[0]:.1f} after (other work on the machine skews these numbers)",
        "  targets: per notebook <= 1.5 x floor; 2 workers >= 1.8 x the throughput of 1",
        f"  {'':<44}{'seconds':>8}{'ratio':>8}",
        *(f"  {label:<44}{value}{ratio}" for label, value, ratio in rows),
        "  (throughput in notebooks per second; its ratio is 2 workers over 1)",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    print(run())
