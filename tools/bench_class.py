"""`make bench`: autograde a synthetic class over every lesson the way `make autograde` does.

Two submissions per lesson (the solution, and the solution with one of the catalogue's mistakes
where the lesson has one), graded by grader.batch (sealed, sandboxed kernels; one gradebook
writer). Measured side by side in one run, per lesson: seconds per notebook with one worker,
against the floor (a fresh kernel that imports torch) and against the notebook's own cell time
(the same solved notebook, hidden tests included, run in a plain kernel); then the whole class
with two workers, against one. This is the figure an instructor plans with: heavy lessons
(checkpointing, attention, compile) cost what their cells cost. About 20 minutes on 2 cores.
"""

import contextlib
import io
import os
import statistics
import tempfile
import textwrap
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from autograder.exercises import EXERCISES
from grader import batch
from grader.instructor import release
from grader.lessons import lesson_names, source_notebook
from tools.bench_grading import floor_seconds
from tools.catalogue import mistakes
from tools.notebooks import QUIET_KERNEL
from tools.submissions import solved, with_answer

FLOOR_REPEATS = 3


def _first_mistake(lesson: str) -> tuple[str, str] | None:
    """(answer cell, wrong answer) of the lesson's first mistake that nbgrader also grades."""
    for mistake in mistakes():
        if mistake.nbgrader and EXERCISES[mistake.exercise].lesson == lesson:
            return f"answer_{mistake.exercise}", textwrap.dedent(mistake.answer_cell).strip()
    return None


def make_class(root: Path, lessons: list[str]) -> dict[str, list[str]]:
    """Two submissions per lesson under ``root/submitted``; return lesson -> student ids."""
    students: dict[str, list[str]] = {}
    for lesson in lessons:
        released = nbformat.read(root / "release" / lesson / f"{lesson}.ipynb", as_version=4)
        good = solved(released, source_notebook(lesson))
        wrong = _first_mistake(lesson)
        notebooks = {"solved": good, "mistake": with_answer(good, *wrong) if wrong else good}
        for kind, notebook in notebooks.items():
            student = f"{lesson[:2]}-{kind}"
            folder = root / "submitted" / student / lesson
            folder.mkdir(parents=True)
            nbformat.write(notebook, folder / f"{lesson}.ipynb")
            students.setdefault(lesson, []).append(student)
    return students


def own_cell_seconds(lesson: str, folder: Path) -> float:
    """The solved notebook with its hidden tests, run top to bottom in a plain kernel."""
    notebook = source_notebook(lesson)
    began = time.perf_counter()
    NotebookClient(notebook, timeout=600, kernel_name="python3", allow_errors=True,
                   extra_arguments=QUIET_KERNEL, resources={"metadata": {"path": str(folder)}}
                   ).execute()
    return time.perf_counter() - began


def _grade(root: Path, lessons: list[str], workers: int, students: list[str] | None = None):
    began = time.perf_counter()
    summary = batch.autograde(root, lessons, workers=workers, force=True, students=students,
                              stream=io.StringIO())
    return time.perf_counter() - began, summary


def run() -> str:
    lessons = lesson_names()
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="bench-class-") as scratch:
        root = Path(scratch) / "course"
        with contextlib.redirect_stdout(io.StringIO()):  # its 'released ...' lines
            release(root, lessons)
        students = make_class(root, lessons)
        floor = statistics.median(floor_seconds() for _ in range(FLOOR_REPEATS))
        rows, one_worker_total, statuses = [], 0.0, {}
        for lesson in lessons:
            own = own_cell_seconds(lesson, Path(scratch))
            seconds, summary = _grade(root, [lesson], 1, students[lesson])
            one_worker_total += seconds
            for status, count in summary.statuses.items():
                statuses[status] = statuses.get(status, 0) + count
            per_notebook = seconds / len(students[lesson])
            rows.append((lesson, per_notebook, own, per_notebook / floor, per_notebook / own))
        notebooks = sum(len(ids) for ids in students.values())
        two_seconds, two = _grade(root, lessons, 2)
    total_own = sum(row[2] for row in rows)
    lines = [
        f"Autograding a class over every lesson ({notebooks} notebooks: per lesson the solution "
        "and one catalogued mistake), measured in one run",
        f"  sandbox: {two.sandbox or 'off'}; results: "
        + ", ".join(f"{count} {status}" for status, count in sorted(statuses.items())),
        f"  machine: {os.cpu_count()} cores, load average {load_before:.1f} before and "
        f"{os.getloadavg()[0]:.1f} after (other work on the machine skews these numbers)",
        f"  floor (fresh kernel + import torch): {floor:.2f} s",
        f"  {'lesson':<20}{'s/notebook':>11}{'own cells':>11}{'/ floor':>9}{'/ own':>8}",
        *(f"  {lesson:<20}{per:>11.2f}{own:>11.2f}{to_floor:>9.2f}{to_own:>8.2f}"
          for lesson, per, own, to_floor, to_own in rows),
        f"  {'whole class':<20}{one_worker_total / notebooks:>11.2f}"
        f"{total_own / len(rows):>11.2f}{one_worker_total / notebooks / floor:>9.2f}"
        f"{one_worker_total / notebooks / (total_own / len(rows)):>8.2f}",
        f"  1 worker: {one_worker_total:.0f} s for the class; 2 workers: {two_seconds:.0f} s "
        f"(throughput ratio {one_worker_total / two_seconds:.2f})",
        "  (s/notebook: sealed, sandboxed grading with one worker; own cells: the solved "
        "notebook with its hidden tests in a plain kernel)",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    print(run())
