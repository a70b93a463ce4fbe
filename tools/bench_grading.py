"""How long grading takes: one lesson autograded end to end against the floor of a fresh kernel
importing torch, as graded (demo cells grading does not need left out) and with every cell run
(AUTOGRADER_RUN_EVERY_CELL=1), and the seconds each exercise's self-check (the battery grading
runs) spends on CPU, measured in one run."""

import contextlib
import io
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import matplotlib
import nbformat
from jupyter_client.manager import start_new_kernel

from autograder.exercises import EXERCISES
from autograder.grading import self_check
from grader.nbgrader_cli import nbgrader
from grader.instructor import release
from grader.lessons import ROOT, lesson_names, source_notebook
from tools.notebooks import QUIET_KERNEL
from tools.solutions import solution
from tools.submissions import solved

REPEATS = 3
CLASS_SIZE = 6


def floor_seconds() -> float:
    """A fresh kernel that imports torch: the least any grading of a notebook can cost."""
    began = time.perf_counter()
    manager, client = start_new_kernel(kernel_name="python3", extra_arguments=QUIET_KERNEL)
    try:
        client.execute_interactive("import torch", timeout=120)
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
    return time.perf_counter() - began


def autograde_seconds(root: Path, lesson: str, *students: str, every_cell: bool = False
                      ) -> float:
    """``nbgrader autograde`` of the given students' notebooks (all when none), CLI start to
    finish; ``every_cell``: demo cells grading does not need run too."""
    only = ["--student", students[0]] if len(students) == 1 else []
    environment = {**os.environ, "AUTOGRADER_RUN_EVERY_CELL": "1" if every_cell else "0"}
    began = time.perf_counter()
    nbgrader("autograde", lesson, *only, "--force", "--log-level=ERROR", root=root,
             env=environment)
    return time.perf_counter() - began


def command_seconds(root: Path, lesson: str, student: str) -> float:
    """``python -m grader autograde`` of one student's notebook (what ``make autograde`` runs),
    start to finish: its kernels' zygote imports torch while the command itself starts."""
    environment = {**os.environ, "COURSE_ROOT": str(root)}
    began = time.perf_counter()
    subprocess.run([sys.executable, "-m", "grader", "autograde", lesson, "--student", student,
                    "--workers", "1", "--force"], cwd=ROOT, env=environment, check=True,
                   capture_output=True)
    return time.perf_counter() - began


# Exercises whose battery runs torch.library.opcheck or torch.compile: 10 s; the others 2 s.
OPERATOR_EXERCISES = {"LogSumExp", "softplus", "squared_norm", "silu_mul", "rms_norm_rows"}


def self_check_seconds(name: str) -> float:
    """Seconds of one self-check of ``name`` on its solution, after a warm-up call (first
    imports and dispatches are paid once per kernel, not per check)."""
    submission = solution(name)
    with contextlib.redirect_stdout(io.StringIO()):
        self_check(name, submission)
        began = time.perf_counter()
        self_check(name, submission)
    return time.perf_counter() - began


def self_check_table() -> list[str]:
    lines = ["Self-check per exercise on CPU: the whole battery grading runs (budget 2 s, 10 s "
             "for an operator or compile exercise)",
             f"  {'exercise':<28}{'lesson':<20}{'seconds':>8}{'budget':>8}{'ratio':>8}"]
    for name, exercise in sorted(EXERCISES.items(), key=lambda item: item[1].lesson):
        budget = 10.0 if name in OPERATOR_EXERCISES else 2.0
        seconds = self_check_seconds(name)
        flag = "" if seconds <= budget else "  over budget"
        lines.append(f"  {name:<28}{exercise.lesson:<20}{seconds:8.2f}{budget:8.0f}"
                     f"{seconds / budget:8.2f}{flag}")
    return lines


def run(lesson: str = "01_sigmoid") -> str:
    lessons = lesson_names()
    lesson = lesson if lesson in lessons else lessons[0]
    with tempfile.TemporaryDirectory(prefix="bench-grading-") as scratch:
        root = Path(scratch)
        with contextlib.redirect_stdout(io.StringIO()):  # its 'released ...' line
            release(root, [lesson])
        released = nbformat.read(root / "release" / lesson / f"{lesson}.ipynb", as_version=4)
        submission = solved(released, source_notebook(lesson))
        for student in range(CLASS_SIZE):
            folder = root / "submitted" / f"student{student}" / lesson
            folder.mkdir(parents=True)
            nbformat.write(submission, folder / f"{lesson}.ipynb")
        floors, commands, singles, singles_every = [], [], [], []
        for repeat in range(REPEATS):  # interleaved, so all see the same machine load
            floors.append(floor_seconds())
            commands.append(command_seconds(root, lesson, f"student{repeat}"))
            singles.append(autograde_seconds(root, lesson, f"student{repeat}"))
            singles_every.append(autograde_seconds(root, lesson, f"student{repeat}",
                                                   every_cell=True))
        per_notebook = autograde_seconds(root, lesson) / CLASS_SIZE
        per_notebook_every = autograde_seconds(root, lesson, every_cell=True) / CLASS_SIZE
    floor, single = statistics.median(floors), statistics.median(singles)
    command = statistics.median(commands)
    single_every = statistics.median(singles_every)
    rows = [
        ("fresh kernel + import torch (floor)", floor, 1.0),
        ("python -m grader autograde of one notebook", command, command / floor),
        ("nbgrader autograde of one notebook", single, single / floor),
        ("  the same, every cell run", single_every, single_every / floor),
        (f"per notebook, {CLASS_SIZE} graded in one run", per_notebook, per_notebook / floor),
        ("  the same, every cell run", per_notebook_every, per_notebook_every / floor),
    ]
    lines = [f"Grading {lesson} (median of {REPEATS}), measured side by side; target ratio <= 1.5",
             f"  {'':<44}{'seconds':>8}{'ratio':>8}"]
    lines += [f"  {label:<44}{seconds:8.2f}{ratio:8.2f}" for label, seconds, ratio in rows]
    return "\n".join([*lines, "", *self_check_table()])


if __name__ == "__main__":
    print(run())
