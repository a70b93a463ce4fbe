"""The course's notebook conventions, written once: nbgrader's markers, which cells are tests,
and the outputs the grader writes into cells."""

import json
import re

from nbformat.notebooknode import NotebookNode
from nbgrader.utils import is_grade, is_solution

NBGRADER_SCHEMA = 3
CODE_STUB = "# YOUR CODE HERE\nraise NotImplementedError()"
HIDDEN_TESTS = re.compile(r"^[ \t]*### BEGIN HIDDEN TESTS.*?^[ \t]*### END HIDDEN TESTS[^\n]*\n?",
                          re.DOTALL | re.MULTILINE)
SOLUTION_MARKER = re.compile(r"^[ \t]*### (BEGIN|END) SOLUTION[ \t]*\n?", re.MULTILINE)
GRADE_CALL = re.compile(r"""grade\(\s*["']([^"']+)["']""")
# A lesson's ungraded, slow cells (a C++ build, say) carry this tag: autograding skips them.
SKIP_WHEN_GRADING = "skip-when-grading"
SKIPPED_NOTE = ("Not run while grading: an ungraded section that only costs time "
                f"(tagged {SKIP_WHEN_GRADING}).\n")


def is_test_cell(cell) -> bool:
    """An nbgrader test ("autograder tests") cell: graded, and not an answer."""
    return cell.cell_type == "code" and is_grade(cell) and not is_solution(cell)


def skipped_when_grading(cell) -> bool:
    """A code cell the lesson marked to skip under autograding; never an nbgrader cell."""
    return (cell.cell_type == "code" and SKIP_WHEN_GRADING in cell.metadata.get("tags", [])
            and grade_id(cell) is None)


def grade_id(cell) -> str | None:
    nbgrader = cell.get("metadata", {}).get("nbgrader")
    return nbgrader.get("grade_id") if isinstance(nbgrader, dict) else None


QUOTED = 40  # characters of a cell's first line that its label quotes


RESTORED = "restored-"  # the id prefix of a test cell grading put back or added


def cell_label(cells: list, index: int) -> str:
    """How messages name ``cells[index]`` as the learner finds it: its grade_id, else its place
    in the learner's notebook (every cell counted from 1 at the top, markdown included, but the
    test cells grading put in) and its first line, which a search (Ctrl+F) finds:
    'cell 54 "checkpointing_explorer(…)"'."""
    cell, quoted = cells[index], first_line(cells[index])
    place = 1 + sum(not str(before.get("id", "")).startswith(RESTORED) for before in cells[:index])
    return grade_id(cell) or f"cell {place}" + (f' "{quoted}"' if quoted else "")


def first_line(cell) -> str:
    """The first non-blank line of ``cell``, cut to ``QUOTED`` characters; where the cut
    leaves a bracket open, the line ends at the first such bracket, closed on "…"
    ("explorer(…)"), so that the brackets of a message balance."""
    line = next((line.strip() for line in cell.get("source", "").splitlines() if line.strip()),
                "")
    if len(line) <= QUOTED:
        return line
    line, opened = line[:QUOTED - 1].rstrip(), []
    for at, char in enumerate(line):
        if char in _CLOSE:
            opened.append(at)
        elif char in _CLOSE.values() and opened:
            opened.pop()
    return line[:opened[0] + 1] + "…" + _CLOSE[line[opened[0]]] if opened else line + "…"


_CLOSE = {"(": ")", "[": "]", "{": "}"}


def without_hidden_tests(source: str) -> str:
    return HIDDEN_TESTS.sub("", source)


def without_solution_markers(source: str) -> str:
    return SOLUTION_MARKER.sub("", source)


def error_output(name: str, message: str) -> NotebookNode:
    """An error output whose evalue is the message's first line (what nbgrader shows)."""
    lines = message.splitlines() or [""]
    return NotebookNode(output_type="error", ename=name, evalue=lines[0], traceback=lines)


def stream_output(text: str) -> NotebookNode:
    return NotebookNode(output_type="stream", name="stdout", text=text)


def output_size(content: dict) -> int:
    """Characters of one output message's content (text, data or traceback)."""
    if "text" in content:
        return len(content["text"])
    if "data" in content:
        return sum(len(value) if isinstance(value, str) else len(str(value))
                   for value in content["data"].values())
    return sum(len(line) for line in content.get("traceback", ())) + len(content.get("evalue", ""))


def quiet_notebook_warnings() -> None:
    """nbformat's notices about a submission's cell ids (duplicated, missing) are repaired on
    reading and would only break the progress lines."""
    import warnings

    from nbformat.warnings import DuplicateCellId, MissingIDFieldWarning

    for category in (DuplicateCellId, MissingIDFieldWarning):
        warnings.filterwarnings("ignore", category=category)


class _SchemaCheckedOnce:
    """``jsonschema`` as nbgrader's metadata validator sees it (``check_schema_once``)."""

    def __init__(self, jsonschema):
        self._jsonschema, self._validators = jsonschema, {}

    def __getattr__(self, name):
        return getattr(self._jsonschema, name)

    def validate(self, instance, schema, *args, **kwargs):
        if args or kwargs:
            return self._jsonschema.validate(instance, schema, *args, **kwargs)
        key = json.dumps(schema, sort_keys=True)
        validator = self._validators.get(key)
        if validator is None:
            kind = self._jsonschema.validators.validator_for(schema)
            kind.check_schema(schema)  # a SchemaError, as jsonschema.validate raises it
            validator = self._validators[key] = kind(schema)
        error = self._jsonschema.exceptions.best_match(validator.iter_errors(instance))
        if error is not None:
            raise error
        return None


def check_schema_once() -> None:
    """nbgrader validates each nbgrader cell's metadata with ``jsonschema.validate``, which first
    checks the schema itself against JSON Schema's meta-schema, every call: nine tenths of the
    time validation takes, and grading one notebook validates it up to three times (intake, then
    nbgrader's CheckCellMetadata before and after the run). The schema is nbgrader's own
    file: here it is checked once per process, and one validator serves every cell after,
    raising the error ``jsonschema.validate`` raises (its best match). Idempotent."""
    from nbgrader.nbgraderformat import common

    if not isinstance(common.jsonschema, _SchemaCheckedOnce):
        common.jsonschema = _SchemaCheckedOnce(common.jsonschema)
