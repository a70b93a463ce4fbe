"""Build the learner and solution notebooks from the one source of each lesson.

lessons/NN_name.py (jupytext percent format, nbgrader metadata in cell headers)
  -> source notebook (solutions and hidden tests; the instructor's nbgrader "source")
  -> course/NN_name.ipynb     learner copy: real `nbgrader generate_assignment` output
  -> solutions/NN_name.ipynb  solutions kept, hidden tests and markers removed, executed
lessons/function_contract.md -> course/ and solutions/, the page every exercise links to
"""

import argparse
import copy
import os
import re
import tempfile
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbconvert.preprocessors import CoalesceStreamsPreprocessor

from autograder.function_contract import PAGE as CONTRACT_PAGE
from grader.lessons import COURSE, LESSONS, SOLUTIONS, lesson_names, source_notebook
from grader.nbgrader_cli import release
from grader.notebook_format import without_hidden_tests, without_solution_markers
from grader.releases import stamp

EXECUTION_TIMEOUT = 300
WIDGETS_SEED_VARIABLE = "WIDGETS_SEED"
# ipykernel warns on every start that a local kernel talks over TCP: noise in a build's output
QUIET_KERNEL = ["--IPKernelApp.log_level=ERROR"]


def solution_notebook(source: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Solutions kept, hidden tests and solution markers removed, nbgrader metadata dropped (a
    collapsed cell stays collapsed)."""
    notebook = copy.deepcopy(source)
    for cell in notebook.cells:
        cell.metadata = {key: cell.metadata[key] for key in ("jupyter",) if key in cell.metadata}
        if cell.cell_type == "code":
            cell.source = without_solution_markers(without_hidden_tests(cell.source)).rstrip()
    return notebook


def execute(notebook: nbformat.NotebookNode, cwd: Path) -> nbformat.NotebookNode:
    """Run every cell in a fresh kernel, stopping at the first error; widget state is kept,
    with seeded widget ids so that a rebuild gives the same bytes."""
    client = NotebookClient(notebook, timeout=EXECUTION_TIMEOUT, kernel_name="python3",
                            resources={"metadata": {"path": str(cwd)}}, record_timing=False,
                            store_widget_state=True, extra_arguments=QUIET_KERNEL)
    previous = os.environ.get(WIDGETS_SEED_VARIABLE)
    os.environ[WIDGETS_SEED_VARIABLE] = "0"  # the kernel inherits it; see widgets/ids.py
    try:
        client.execute()
        # a print can arrive as several stream messages, split at random: merge them
        CoalesceStreamsPreprocessor().preprocess(notebook, {})
        without_log_clock(notebook)
    finally:
        if previous is None:
            os.environ.pop(WIDGETS_SEED_VARIABLE)
        else:
            os.environ[WIDGETS_SEED_VARIABLE] = previous
    return notebook


# c10's warnings start "[W1124 12:34:03.608093071 BatchedFallback.cpp:82]": the clock goes;
# a Python warning names the cell's file "/tmp/ipykernel_16885/3090928919.py": the pid goes
C10_LOG_CLOCK = re.compile(r"^\[([WEI])\d{4} \d\d:\d\d:\d\d\.\d+ ", re.MULTILINE)
KERNEL_PID = re.compile(r"/ipykernel_\d+/")


def without_log_clock(notebook: nbformat.NotebookNode) -> None:
    """Drop the time from PyTorch's C++ warnings and the kernel's pid from cell file names, so
    that a rebuild gives the same bytes: "[W BatchedFallback.cpp:82] Warning: ...",
    "/tmp/ipykernel/3090928919.py:13: UserWarning: ..." """
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            if output.get("output_type") == "stream":
                output.text = KERNEL_PID.sub("/ipykernel/",
                                             C10_LOG_CLOCK.sub(r"[\1 ", output.text))


def learner_notebooks(lessons: list[str]) -> dict[str, nbformat.NotebookNode]:
    """The learner copy of each lesson, as `make release` releases it (stamped with the test
    cells it holds)."""
    with tempfile.TemporaryDirectory(prefix="course-build-") as scratch:
        released = release({name: source_notebook(name) for name in lessons}, Path(scratch))
        for path in released.values():
            stamp(path)
        return {name: nbformat.read(path, as_version=4) for name, path in released.items()}


def write(notebook: nbformat.NotebookNode, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(nbformat.writes(notebook) + "\n")


def without_outputs(notebook: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """A copy without what execution adds (outputs, counts, widget state, language details)."""
    notebook = copy.deepcopy(notebook)
    notebook.metadata.pop("widgets", None)
    notebook.metadata.pop("language_info", None)
    for cell in notebook.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    return notebook


def build(lessons: list[str], *, run_solutions: bool = True) -> None:
    contract = (LESSONS / CONTRACT_PAGE).read_text()
    for folder in (COURSE, SOLUTIONS):
        (folder / CONTRACT_PAGE).write_text(contract)
    for name, notebook in learner_notebooks(lessons).items():
        write(notebook, COURSE / f"{name}.ipynb")
        print(f"course/{name}.ipynb")
    for name in lessons:
        solution = solution_notebook(source_notebook(name, worked=True))
        if run_solutions:
            # a fresh folder each: the progress table it ends with shows this lesson's checks only
            with tempfile.TemporaryDirectory(prefix="course-run-") as scratch:
                (Path(scratch) / name).mkdir()
                execute(solution, Path(scratch) / name)
        write(solution, SOLUTIONS / f"{name}.ipynb")
        print(f"solutions/{name}.ipynb" + (" (executed)" if run_solutions else ""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("lessons", nargs="*", help="lesson names (default: all)")
    parser.add_argument("--no-execute", action="store_true", help="do not run the solutions")
    args = parser.parse_args()
    unknown = sorted(set(args.lessons) - set(lesson_names()))
    if unknown:
        parser.error(f"unknown lessons {unknown}; known: {lesson_names()}")
    build(args.lessons or lesson_names(), run_solutions=not args.no_execute)


if __name__ == "__main__":
    main()
