"""What a submission's answer cells show before any of them runs: an answer Python cannot parse
(a SyntaxError: none of the cell runs, so every exercise it defines scores 0), and a notebook
whose every answer is still the lesson's stub (the released notebook handed in unchanged, or the
wrong file?); and once they ran, an answer cell that stopped with an error of its own (an
``import`` of a module grading lacks: what follows it never ran). Each becomes a fault, so that
such a notebook has a status and a reason and reaches the list of notebooks worth a look of
`make autograde` and `make grades`."""

import ast
import re

from .faults import CELL_ERROR, Fault
from .one_line import without_paths
from .notebook_format import cell_label, grade_id, is_test_cell, skipped_when_grading


def answer_faults(notebook, reference: dict) -> list[Fault]:
    """The faults of ``notebook``'s answer cells (its cells restored against ``reference``)."""
    stubs = {entry["grade_id"]: entry["released_source"] for entry in reference["cells"]
             if entry["solution"] and entry["cell_type"] == "code"}
    answers = [cell for cell in notebook.cells
               if cell.cell_type == "code" and grade_id(cell) in stubs]
    faults = []
    for cell in answers:
        said = unparsed(cell)
        if said:
            faults.append(Fault("syntax-error", said, grade_id(cell)))
    if answers and all(cell.source.strip() == stubs[grade_id(cell)].strip() for cell in answers):
        faults.append(Fault("unanswered", f"every answer cell ({len(answers)}) is still the "
                            "lesson's stub: nothing was answered (the released notebook handed "
                            "in unchanged, or the wrong file?)"))
    return faults


def unparsed(cell) -> str:
    """What the reason, the insight report and the feedback say of an answer cell that does not
    parse ("" for one that does): one wording, without the kernel's file name."""
    problem = syntax_error(cell.source)
    return (f"answer cell {grade_id(cell)} does not parse ({problem}): Python ran none of it, so "
            "the tests of what it defines scored 0") if problem else ""


def syntax_error(source: str) -> str:
    """Why ``source`` (a cell, IPython's magics and shell escapes allowed) does not parse as
    Python, in a few words with its line; "" when it parses."""
    from IPython.core.inputtransformer2 import TransformerManager

    try:
        code = TransformerManager().transform_cell(source)
        compile(code, "<answer cell>", "exec",
                ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True)
    except SyntaxError as error:
        return f"{type(error).__name__} at line {error.lineno}: {error.msg}"
    except Exception:  # IPython could not read it as a cell: let the kernel say what it says
        return ""
    return ""


ANSI = re.compile(r"\x1b\[[0-9;]*m")
CELL_LINE = re.compile(r"Cell In\[\d+\], line (\d+)")
# An unanswered stub (its test says "not answered"), a failed self-check run in the answer cell
# (its test gives the same hint), a dead kernel (its kernel-died fault says it)
SAID_ELSEWHERE = ("NotImplementedError", "GradingError", "KernelDied")


def answer_error_faults(notebook, faults=()) -> list[Fault]:
    """An ``answer-error`` fault for each answer cell of the executed ``notebook`` that stopped
    with an error: not the stub's NotImplementedError or a self-check's GradingError, not one
    that does not parse (its ``syntax-error`` says it), not one a fault of the run already
    names (a time limit, a dead kernel)."""
    named = {fault.cell for fault in faults if fault.cell}
    found = []
    for cell in notebook.cells:
        name = grade_id(cell)
        if (cell.cell_type != "code" or not cell.metadata.get("nbgrader", {}).get("solution")
                or name in named or unparsed(cell)):
            continue
        errors = [output for output in cell.get("outputs", [])
                  if output.get("output_type") == "error"]
        if not errors or errors[-1].get("ename") in SAID_ELSEWHERE:
            continue
        error = errors[-1]
        said = without_paths((str(error.get("evalue", "")).strip().splitlines() or [""])[0])[:160]
        lines = CELL_LINE.findall(ANSI.sub("", "\n".join(error.get("traceback", []))))
        at = f" at line {lines[0]}" if lines else ""
        found.append(Fault("answer-error", f"answer cell {name} stopped with "
                           f"{error.get('ename', 'an error')}{': ' + said if said else ''}{at}: "
                           "the rest of it did not run, so the tests of what it left undefined "
                           "scored 0", name))
    return found


def cell_error_notes(notebook, faults=(), released_demos: list[str] | None = None) -> list[Fault]:
    """A routine ``cell-error`` note for each cell the learner wrote (neither an answer nor a
    test, and not one of the released notebook's own cells, ``released_demos``: a lesson's cell
    that raises on purpose is not theirs) that stopped with an error under grading, not one a
    fault of the run already names (a time limit, a dead kernel): its label, the error, and
    whether anything graded reads what it sets (``needed_cells``). Scores are as the tests gave
    them; the note only says what the learner's feedback page shows as a traceback."""
    from .needed_cells import unneeded_cells

    named = {fault.cell for fault in faults if fault.cell}
    released = set(released_demos or ())
    found = []
    for index, cell in enumerate(notebook.cells):
        if (cell.cell_type != "code" or grade_id(cell) and (
                is_test_cell(cell) or cell.metadata.get("nbgrader", {}).get("solution"))
                or skipped_when_grading(cell) or cell.source in released
                or (released_demos is None and cell.metadata.get("nbgrader", {}).get("locked"))):
            continue
        errors = [output for output in cell.get("outputs", [])
                  if output.get("output_type") == "error"]
        label = cell_label(notebook.cells, index)
        if not errors or label in named:
            continue
        error = errors[-1]
        said = without_paths((str(error.get("evalue", "")).strip().splitlines() or [""])[0])[:120]
        unused = index in unneeded_cells(notebook, [cell.source])
        found.append(Fault(CELL_ERROR, f"note: {label} raised {error.get('ename', 'an error')}"
                           f"{': ' + said if said else ''} ("
                           + ("nothing graded uses what it sets" if unused else
                              "graded cells may use what it sets: their tests say how they "
                              "went") + ")", label))
    return found
