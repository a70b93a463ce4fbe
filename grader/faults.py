"""What can go wrong with a submission while it is graded, and how the grades CSV names it.

Each fault costs at most the exercise it touches; a notebook that cannot be read at all costs that
one notebook. A notebook's status is its most serious fault ("ok" when there is none); its reason
lists every fault, in plain words, for the instructor and the learner.
"""

from dataclasses import asdict, dataclass

# Most serious first. The first three are about the file; the rest about what ran.
STATUSES = {
    "grader-error": "the grader itself failed on this submission; `make autograde` retries it",
    "invalid-notebook": "the notebook file is empty or not a notebook: scored 0",
    "missing-notebook": "no notebook for this lesson was found in the submission: scored 0",
    "suspicious-code": "the learner's code reaches into the grader (closure cells, gc, ctypes, "
                       "event hooks, the verdict format) or replaces a function grading uses: "
                       "read the line in `reason`; scores "
                       "were not changed",
    "notebook-timeout": "the notebook ran out of its total time; the cells after that did not run",
    "kernel-died": "the kernel exited while a cell ran; it was restarted and grading went on",
    "memory-limit": "a cell ran out of its memory cap; the kernel was restarted, grading went on",
    "timeout": "a cell ran past the time limit and was stopped",
    "stray-process": "a child process was still running when grading ended; it was killed",
    "output-limit": "a cell printed more than the output limit; the rest was dropped",
    "syntax-error": "an answer cell does not parse (a SyntaxError): none of it ran, so the tests "
                    "of what it defines scored 0",
    "answer-error": "an answer cell stopped with an error when it ran (an import of a module "
                    "grading lacks, say): the rest of it did not run, so the tests of what it "
                    "left undefined scored 0",
    "unanswered": "every answer cell is still the lesson's stub (the wrong file handed in?)",
    "no-nbgrader-metadata": "the notebook's cells had no nbgrader metadata (pasted into a new "
                            "notebook?): its cells were matched to the lesson's by their code "
                            "and graded",
    "deleted-test-cell": "a test cell was deleted; it was put back and graded",
    "markdown-test-cell": "a test cell was turned into markdown; it was turned back and graded",
    "edited-test-cell": "a test cell was edited; the original was graded",
    "duplicated-test-cell": "a test cell appears more than once; one copy was graded",
    "edited-locked-cell": "a read-only cell was edited or deleted; the original was used",
    "shadowing-file": "a file beside the notebook has the name of a module the grader imports; "
                      "it was left out",
    "large-files": "files beside the notebook were too large; they were left out",
    "renamed-notebook": "the notebook had another name; it was graded as the lesson's notebook",
    "added-test-cell": "a test cell was added to the lesson after the release this notebook was "
                       "made from (it never held the cell, however late it was handed in); "
                       "it was put in after its answer (the stub, not answered, for an exercise "
                       "added with it) and graded",
    "cell-error": "a cell the learner wrote (neither an answer nor a test) stopped with an "
                  "error under grading; a note: the scores are as the tests gave them",
    "ok": "graded normally",
}
SEVERITY = {status: rank for rank, status in enumerate(STATUSES)}
RETRIED = {"grader-error"}
# Routine, nothing the learner did: `make grades` gives such a notebook the status of its other
# faults ("ok" when it has none), keeps the note in its reason, and counts the notes per lesson.
ADDED_LATER = "added-test-cell"  # a notebook handed in before a test cell existed
# A cell the learner wrote that raised under grading (an `import torchviz` grading lacks): a
# note with its own line per notebook, as the learner's feedback shows its traceback anyway
CELL_ERROR = "cell-error"
NOTES = {ADDED_LATER, CELL_ERROR}
# How an added-test-cell note says that grading also put in the answer cell of the test's
# exercise, which the notebook never had (an exercise added with the test): only then is the
# test's failure on that stub "handed in before" (``put_in_answer``); a test added later that
# meets the learner's own unanswered stub is not-implemented, as any other exercise
STUB_PUT_IN = "after the stub of its answer"
BEFORE_ADDED = "handed-in-before"  # insight's group for such a test: not a mistake of theirs


def put_in_answer(fault: "Fault | dict") -> bool:
    """Did this added-test-cell note put in the answer cell its test grades (the stub of an
    exercise added after the notebook was handed in)?"""
    kind, message = ((fault.get("kind"), fault.get("message", "")) if isinstance(fault, dict)
                     else (fault.kind, fault.message))
    return kind == ADDED_LATER and STUB_PUT_IN in (message or "")


@dataclass(frozen=True)
class Fault:
    """One thing that went wrong: its kind (a key of STATUSES), where, and what happened."""

    kind: str
    message: str
    cell: str = ""

    def __post_init__(self):
        if self.kind not in STATUSES:
            raise ValueError(f"unknown fault kind {self.kind!r}")

    def to_dict(self) -> dict:
        return asdict(self)


def status_of(faults) -> str:
    """The most serious fault's kind, or "ok"."""
    kinds = [fault.kind for fault in faults]
    return min(kinds, key=SEVERITY.__getitem__) if kinds else "ok"


SEPARATOR = "; "  # between the messages of a reason


# A reason's order: most serious first, but a cell stopped at its time limit (the cause) before
# the notebook's time running out (what it led to), and the routine notes last.
REASON_ORDER = {**SEVERITY, "timeout": SEVERITY["notebook-timeout"] - 0.5,
                **{note: len(SEVERITY) for note in NOTES}}


def in_reason_order(faults) -> list[Fault]:
    """``faults`` in the order a reason lists them (``REASON_ORDER``)."""
    return sorted(faults, key=lambda fault: REASON_ORDER[fault.kind])


def own_status(faults) -> str:
    """A notebook's status: its most serious fault but the routine notes ("ok" if none)."""
    return status_of([fault for fault in faults if fault.kind not in NOTES])


def reason_of(faults) -> str:
    """Every fault's message in ``REASON_ORDER``, without repeats."""
    return SEPARATOR.join(dict.fromkeys(fault.message for fault in in_reason_order(faults)))


def from_dicts(items) -> list[Fault]:
    return [Fault(**item) for item in items]


def added_note_line(lesson: str, cells, count: int, late: int = 0) -> str:
    """What `make autograde`, a regrade and `make grades` say once per lesson of the test cells
    added after ``count`` notebooks were made: ``late`` of them handed in after the cells were
    added, from a copy of an earlier release (``copied_before``), the others before."""
    cells = sorted(cells)
    many = len(cells) > 1
    it, before = ("them" if many else "it"), count - late
    notebooks = f"{count} notebook{'s' if count != 1 else ''}"
    after = (f"after {'one of them' if many else 'it'} was added, from "
             f"{'a copy' if late == 1 else 'copies'} fetched before")
    if not late:
        held = f"{notebooks} handed in before {it}"
    elif not before:
        held = f"{notebooks} handed in {after}"
    else:
        held = (f"{notebooks} that never held {it}: {before} handed in before {it}, {late} "
                f"{after}")
    return (f"{lesson}: test cell{'s' if many else ''} {', '.join(cells)} added and graded in "
            f"{held} (a note in their reason; their status is their own)")


# How an added-test-cell note says the notebook was handed in after the cell was added, from a
# copy of a release that did not hold it (``intake``'s words)
COPIED_BEFORE = "after the release this notebook was made from"


def copied_before(fault: "Fault | dict") -> bool:
    """Was this added-test-cell note's notebook handed in after the cell was added, from a copy
    of an earlier release?"""
    kind, message = ((fault.get("kind"), fault.get("message", "")) if isinstance(fault, dict)
                     else (fault.kind, fault.message))
    return kind == ADDED_LATER and COPIED_BEFORE in (message or "")
