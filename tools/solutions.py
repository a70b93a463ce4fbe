"""The graded Functions as each lesson's own solution cells define them: the one copy of the
correct answers that tests and benchmarks use."""

import jupytext

from grader.lessons import LESSONS
from grader.notebook_format import without_solution_markers


def _setup_and_answer_cells(lesson: str) -> list[str]:
    """The lesson's first code cell (its imports) and every answer cell, markers removed."""
    notebook = jupytext.read(LESSONS / f"{lesson}.py", fmt="py:percent")
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    answers = [cell for cell in code if cell.metadata.get("nbgrader", {}).get("solution")]
    return [without_solution_markers(cell.source) for cell in [code[0], *answers]]


def namespace(lesson: str) -> dict:
    """Everything the lesson's imports and answer cells define, run afresh each time (an answer
    cell may register a custom operator that a later definition replaces)."""
    names: dict = {"__name__": f"lesson_{lesson}"}
    for source in _setup_and_answer_cells(lesson):
        exec(compile(source, f"lessons/{lesson}.py", "exec"), names)  # noqa: S102 (our own source)
    return names


def solution(exercise: str):
    """The lesson's own solution of ``exercise`` (a Function class, or a function)."""
    from autograder.exercises import EXERCISES

    return namespace(EXERCISES[exercise].lesson)[exercise]
