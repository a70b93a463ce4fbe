"""What a submission's answer cells show before any of them runs: an answer Python cannot parse
(a SyntaxError: none of the cell runs, so every exercise it defines scores 0), and a notebook
whose every answer is still the lesson's stub (the released notebook handed in unchanged, or the
wrong file?). Each becomes a fault, so that such a notebook has a status and a reason and
reaches the list of notebooks worth a look of `make autograde` and `make grades`."""

import ast

from .faults import Fault
from .notebook_format import grade_id


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
