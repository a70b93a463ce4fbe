"""The graded Functions as each lesson's own cells define them: the one copy of the correct
answers (the solution cells) and of the untouched stubs (the released learner notebook) that
tests and benchmarks use."""

import functools
import linecache
import sys
import types
from pathlib import Path

import jupytext
import nbformat

from grader.lessons import COURSE, LESSONS
from grader.notebook_format import without_solution_markers


def cells(lesson: str) -> list[str]:
    """The lesson's first code cell (its imports) and every answer cell, markers removed."""
    source = LESSONS / f"{lesson}.py"
    status = source.stat()
    return list(_parsed(source, status.st_mtime_ns, status.st_size))


@functools.cache
def _parsed(source: Path, modified: int, size: int) -> tuple[str, ...]:
    """``cells`` of the lesson file as it was when modified at ``modified`` with ``size``
    bytes: parsed once per version (a test run asks for each lesson's solutions hundreds of
    times, 0.1 s a parse)."""
    notebook = jupytext.read(source, fmt="py:percent")
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    answers = [cell for cell in code if cell.metadata.get("nbgrader", {}).get("solution")]
    return tuple(without_solution_markers(cell.source) for cell in [code[0], *answers])


_setup_and_answer_cells = cells  # the name tests/autograder/exercises/test_compile.py imports


def run_cells(sources: list[str], name: str, filename: str) -> dict:
    """What ``sources``, run in order as one notebook's cells, define (module ``name``)."""
    module = sys.modules[name] = types.ModuleType(name)  # torch.compile imports it by name
    names: dict = vars(module)
    for index, source in enumerate(sources):
        # each cell under its own name in linecache, as IPython keeps cells: @triton.jit reads
        # a kernel's source from there
        cell = f"{filename} (cell {index})"
        linecache.cache[cell] = (len(source), None, source.splitlines(True), cell)
        exec(compile(source, cell, "exec"), names)  # noqa: S102 (our own source)
    return names


def namespace(lesson: str, sources: list[str] | None = None) -> dict:
    """Everything the lesson's imports and answer cells define, run afresh each time (an answer
    cell may register a custom operator that a later definition replaces); ``sources``: those
    cells edited (``tools.mutants`` runs a mutated answer cell among the others)."""
    return run_cells(cells(lesson) if sources is None else sources, f"lesson_{lesson}",
                f"lessons/{lesson}.py")


def _lesson(exercise: str) -> str:
    from autograder.exercises import EXERCISES

    return EXERCISES[exercise].lesson


def solution(exercise: str):
    """The lesson's own solution of ``exercise`` (a Function class, or a function)."""
    return namespace(_lesson(exercise))[exercise]


def stub(exercise: str):
    """``exercise`` as the released learner notebook (``course/``) defines it, untouched: its
    stub raises NotImplementedError. Runs that notebook's two first code cells (the generated
    setup cell, then the lesson's imports) and the answer cell."""
    lesson = _lesson(exercise)
    notebook = nbformat.read(COURSE / f"{lesson}.ipynb", as_version=4)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    answer = next(cell for cell in code
                  if cell.metadata.get("nbgrader", {}).get("grade_id") == f"answer_{exercise}")
    return run_cells([code[0].source, code[1].source, answer.source], f"course_{lesson}",
                f"course/{lesson}.ipynb")[exercise]
