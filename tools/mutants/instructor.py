"""An instructor's own exercises through ``make mutants`` (``--notebook PATH``): each
``FunctionExercise`` a test cell of the notebook builds, with the notebook's solution.

The notebook (``.ipynb``, or a jupytext ``.py`` lesson source) is read as nbgrader reads it:
its first code cell is the setup, its ``solution`` cells are the answers, and its ``grade``
cells hold ``NAME = FunctionExercise(...)``. Those assignments run after the setup, and each
exercise they build is registered under its name, so grading sees it as a course exercise.
"""

import ast
from pathlib import Path

import jupytext

from autograder.custom import FunctionExercise
from autograder.exercises import EXERCISES
from grader.notebook_format import without_solution_markers

from .answers import SOLUTION, Answer


def _nbgrader(cell) -> dict:
    return cell.metadata.get("nbgrader", {})


def _constructions(source: str) -> str:
    """The statements of a test cell that build a FunctionExercise (not those that grade)."""
    kept = [statement for statement in ast.parse(source).body
            if isinstance(statement, ast.Assign) and "FunctionExercise" in ast.unparse(
                statement.value)]
    return "\n".join(ast.unparse(statement) for statement in kept)


def register(path: Path) -> dict[str, list[Answer]]:
    """Exercise name -> [its solution], for each FunctionExercise the notebook builds."""
    if not path.is_file():
        raise ValueError(f"no notebook at {path}")
    notebook = jupytext.read(path)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    if not code:
        raise ValueError(f"{path} has no code cell")
    answers = [without_solution_markers(cell.source) for cell in code
               if _nbgrader(cell).get("solution")]
    names: dict = {}
    exec(compile(code[0].source, str(path), "exec"), names)  # noqa: S102 (the instructor's own)
    for cell in code:
        if _nbgrader(cell).get("grade"):
            exec(compile(_constructions(cell.source), str(path), "exec"), names)  # noqa: S102
    built = [value for value in names.values() if isinstance(value, FunctionExercise)]
    if not built:
        raise ValueError(f"{path}: no test cell builds a FunctionExercise")
    found = {}
    for exercise in built:
        if exercise.name in EXERCISES and EXERCISES[exercise.name].lesson != "instructor":
            raise ValueError(f"{path}: {exercise.name} is already a course exercise")
        EXERCISES[exercise.name] = exercise.exercise()
        found[exercise.name] = [Answer(exercise.name, SOLUTION, (code[0].source, *answers),
                                       notebook=str(path))]
    return found
