"""Code that reaches into the grader: what the seal cannot stop, shown to the instructor.

Learner code runs in the kernel that grades it, so code that digs out the seal's key (closure
cells, ``gc``, ``ctypes``, frames) and signs its own verdicts cannot be stopped there. It can be
seen: every code cell the learner controls is scanned, and each line that reaches for one of
these gets the notebook the status ``suspicious-code``, with the line in the grades CSV. A line
the released notebook itself ships in a demo cell (lesson 06 unwraps a decorated backward with
``__wrapped__``) is the course's, not the learner's. Scores are not changed: an instructor reads
the line and decides.
"""

import re

from .faults import Fault
from .notebook_format import cell_label

PATTERNS = {
    "reads closure cells": r"__closure__|cell_contents|getclosurevars",
    "reads or replaces function code": r"__code__|__globals__|__wrapped__",
    "walks the garbage collector": r"\bgc\s*\.\s*get_(objects|referents|referrers)\b",
    "loads ctypes": r"\bctypes\b",
    "registers an IPython event hook": r"events\s*\.\s*register\b|set_custom_exc\b",
    "writes the grader's verdict format": r"vnd\.autograd-course\.verdict|VERDICT_MIME",
    "signs with hmac": r"\bhmac\b",
    "walks stack frames": r"_getframe\b|\bf_globals\b|\bf_locals\b|\bf_back\b",
    "replaces a function that grading uses":
        r"^\s*def\s+(grade|self_check|gradcheck|gradgradcheck|allclose|isclose)"
        r"\s*\(|^\s*(grade|self_check|gradcheck|gradgradcheck|"
        r"torch\.(autograd|testing)(\.\w+)+|torch\.(allclose|isclose|equal)|autograder(\.\w+)+)"
        r"\s*=(?!=)|\bsetattr\(\s*(torch|autograder)\b|\bas\s+(grade|self_check)\b",
}
COMPILED = {what: re.compile(pattern) for what, pattern in PATTERNS.items()}


def suspicious_lines(nb, shipped: list[str] = ()) -> list[tuple[str, int, str, str]]:
    """(cell, line number, what it does, the line) for every learner-controlled line that
    reaches into the grader, but those the course ships in the ``shipped`` (demo) cells."""
    course_lines = {line.strip() for source in shipped for line in source.splitlines()}
    found = []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code" or not _learners(cell):
            continue
        for number, line in enumerate(cell.source.splitlines(), start=1):
            if line.strip() in course_lines:
                continue
            code = line.split("#", 1)[0]
            for what, pattern in COMPILED.items():
                if pattern.search(code):
                    found.append((cell_label(nb.cells, index), number, what, line.strip()))
                    break
    return found


def _learners(cell) -> bool:
    """Whether the learner wrote this cell: an answer cell, or one they added (read-only cells
    are put back from the gradebook before grading)."""
    metadata = cell.metadata.get("nbgrader")
    return not isinstance(metadata, dict) or bool(metadata.get("solution"))


def suspicious_code_faults(nb, shipped: list[str] = ()) -> list[Fault]:
    return [Fault("suspicious-code", f"{label}, line {number} {what}: {line[:160]}")
            for label, number, what, line in suspicious_lines(nb, shipped)]
