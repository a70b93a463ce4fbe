"""How long grading takes: one lesson autograded end to end against the floor of a fresh kernel
importing torch, and the seconds each lesson's hidden tests spend, measured in one run."""

import contextlib
import io
import statistics
import tempfile
import time
from pathlib import Path

import matplotlib
import nbformat
from jupyter_client.manager import start_new_kernel

from autograder.exercises import EXERCISES
from grader.nbgrader_cli import nbgrader
from grader.instructor import release
from grader.lessons import lesson_names, source_notebook
from tools.notebooks import QUIET_KERNEL, SOLUTIONS
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


def autograde_seconds(root: Path, lesson: str, *students: str) -> float:
    """``nbgrader autograde`` of the given students' notebooks (all when none), CLI start to finish."""
    only = ["--student", students[0]] if len(students) == 1 else []
    began = time.perf_counter()
    nbgrader("autograde", lesson, *only, "--force", "--log-level=ERROR", root=root)
    return time.perf_counter() - began


def solution_namespace(lesson: str) -> dict:
    """The names a lesson's solution notebook defines, by running its code without a display."""
    matplotlib.use("Agg")
    namespace: dict = {"__name__": f"solution_{lesson}"}
    notebook = nbformat.read(SOLUTIONS / f"{lesson}.ipynb", as_version=4)
    with contextlib.redirect_stdout(io.StringIO()):
        for cell in notebook.cells:
            if cell.cell_type == "code":
                exec(compile(cell.source, f"<{lesson}>", "exec"), namespace)
    return namespace


def hidden_test_seconds(lesson: str) -> float:
    """Seconds the hidden tests of every exercise in ``lesson`` take on the solutions."""
    namespace = solution_namespace(lesson)
    began = time.perf_counter()
    for exercise in EXERCISES.values():
        if exercise.lesson == lesson:
            exercise.grade(namespace[exercise.name])
    return time.perf_counter() - began


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
        floors, singles = [], []
        for repeat in range(REPEATS):  # interleaved, so both see the same machine load
            floors.append(floor_seconds())
            singles.append(autograde_seconds(root, lesson, f"student{repeat}"))
        per_notebook = autograde_seconds(root, lesson) / CLASS_SIZE
    floor, single = statistics.median(floors), statistics.median(singles)
    rows = [
        ("fresh kernel + import torch (floor)", floor, 1.0),
        ("nbgrader autograde of one notebook", single, single / floor),
        (f"per notebook, {CLASS_SIZE} graded in one run", per_notebook, per_notebook / floor),
    ]
    lines = [f"Grading {lesson} (median of {REPEATS}), measured side by side; target ratio <= 1.5",
             f"  {'':<44}{'seconds':>8}{'ratio':>8}"]
    lines += [f"  {label:<44}{seconds:8.2f}{ratio:8.2f}" for label, seconds, ratio in rows]
    lines += ["", "Hidden tests per lesson, on the solutions (target <= 2 s)"]
    import torch._dynamo  # noqa: F401  (a sealed kernel imports it at boot, before the clock)
    for name in lessons:
        lines.append(f"  {name:<44}{hidden_test_seconds(name):8.2f} s")
    return "\n".join(lines)


if __name__ == "__main__":
    print(run())
