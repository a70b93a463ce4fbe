"""Make learner submissions from released notebooks: solved, untouched, or with a mistake
(the mistakes themselves live in tools/catalogue)."""

import copy

import nbformat

from grader.notebook_format import without_solution_markers


def _cell(notebook, grade_id: str):
    for cell in notebook.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == grade_id:
            return cell
    raise KeyError(f"no cell with grade_id {grade_id!r}")


def solved(released: nbformat.NotebookNode, source: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """The released notebook with every answer cell filled in from the source's solution."""
    notebook = copy.deepcopy(released)
    for cell in notebook.cells:
        metadata = cell.metadata.get("nbgrader", {})
        if metadata.get("solution"):
            answer = _cell(source, metadata["grade_id"]).source
            cell.source = without_solution_markers(answer)
    return notebook


def with_answer(notebook: nbformat.NotebookNode, grade_id: str, code: str) -> nbformat.NotebookNode:
    """A copy whose answer cell ``grade_id`` holds ``code``."""
    changed = copy.deepcopy(notebook)
    _cell(changed, grade_id).source = code
    return changed


def with_cell_before(notebook: nbformat.NotebookNode, grade_id: str,
                     code: str) -> nbformat.NotebookNode:
    """A copy with a new learner code cell placed just before cell ``grade_id``."""
    changed = copy.deepcopy(notebook)
    index = changed.cells.index(_cell(changed, grade_id))
    cell = nbformat.v4.new_code_cell(code)
    cell.id = f"learner-{index}"
    changed.cells.insert(index, cell)
    return changed
