"""Grade signed verdicts only: each test cell's outputs become its verdict (a tick, a partial
score or the hint), or an error saying why there was none; and what each verdict said, with its
mistake, is returned for the record (``grader.verdict_store``)."""

from nbformat.notebooknode import NotebookNode

import re

from autograder.mistakes import NOT_IMPLEMENTED, RAISED, TIMEOUT, is_mistake_id
from autograder.verdict import read_signed

from .answers import unparsed
from .faults import ADDED_LATER, put_in_answer
from .notebook_format import cell_label, error_output, is_test_cell, stream_output
from .one_line import without_paths
from .outcomes import KERNEL_DIED

# Faults that stop a cell: its test gets no verdict, and the message says why.
STOPPING = ("timeout", "kernel-died", "memory-limit", "notebook-timeout")


def apply_verdicts(nb, key: bytes, faults=()) -> dict[str, dict]:
    """Replace each test cell's outputs with its signed verdict: a tick, a partial score (an
    execute_result with the points, nbgrader's partial-credit convention), or an error whose
    first line is the hint. A test cell without a verdict gets an error saying why. Returns
    each test cell's record, by grade_id (``record``)."""
    stopped = {fault.cell: fault for fault in faults if fault.cell and fault.kind in STOPPING}
    added = {fault.cell for fault in faults if fault.kind == ADDED_LATER}
    put_in = {fault.cell for fault in faults if put_in_answer(fault)}  # their answers' stubs too
    records = {}
    answer, answer_error, lost = None, None, []  # lost: kernels lost since the previous test
    said_unparsed = ""  # the answer cell's SyntaxError, as the notebook's reason words it
    for index, cell in enumerate(nb.cells):
        metadata = cell.metadata.get("nbgrader", {})
        if cell.cell_type == "code" and metadata.get("solution"):
            answer, answer_error = metadata.get("grade_id"), _raised(cell)
            said_unparsed = unparsed(cell) if answer_error is not None else ""
        if cell_label(nb.cells, index) in stopped and not is_test_cell(cell):
            lost.append(stopped[cell_label(nb.cells, index)])
        if not is_test_cell(cell):
            continue
        before, lost = lost, []
        exercise = metadata["grade_id"]
        found = read_signed(cell.outputs, key).get(exercise)
        if found is None:
            message = _no_verdict(exercise, cell, stopped, answer)
            cause = stopped.get(exercise) or stopped.get(answer)
            records[exercise] = record(False, message, None, cause.kind if cause else NO_VERDICT)
            cell.outputs = [error_output("NoVerdict", message)]
            continue
        passed, message, score, mistake = found
        if not passed and exercise in added and (mistake == UNDEFINED or (
                mistake == NOT_IMPLEMENTED and exercise in put_in)):
            # the exercise came after the notebook: no answer of the learner's to name (intake
            # put its stub in: not answered). A test added later that meets the learner's own
            # stub (an exercise they had and left) keeps its not-implemented line
            message = (f"not answered: {exercise} was added to the lesson after you fetched "
                       "your copy of it, so your notebook has no answer for it (0 points)")
        elif not passed and mistake == UNDEFINED and answer_error is not None:
            # a name the answer cell never defined: what stopped that cell is the mistake, in
            # the words of the notebook's reason where it did not parse (no kernel file name)
            message = said_unparsed or (f"your answer cell stopped with {answer_error.ename}: "
                                        f"{answer_error.evalue}; then: {message}")
            mistake = SYNTAX_ERROR if said_unparsed else f"{RAISED}{answer_error.ename}"
        if not passed and mistake == TIMEOUT and exercise in stopped:  # name it, and the limit
            message = interrupted(exercise, stopped[exercise].message)
        # a kernel lost before this test explains its failure better than what followed, unless
        # the test proved a mistake of the answer itself (a probe's id survives the restart)
        message = without_paths(message)  # a learner reads it: no path of the grader's machine
        proven = is_mistake_id(mistake or "")
        records[exercise] = record(passed, message, score, before[-1].kind if before and not
                                   passed and not proven else mistake)
        points = float(metadata.get("points", 0))
        if passed:
            cell.outputs = [stream_output(f"✓ {message}\n")]
        elif score and 0 < score < 1 and points:
            cell.outputs = [
                stream_output(f"◐ partial credit, {score * points:.3g} of {points:g} points: "
                              f"{message}\n"),
                NotebookNode(output_type="execute_result", execution_count=cell.execution_count,
                             metadata={}, data={"text/plain": repr(round(score * points, 6))})]
        else:
            if before and not proven:  # say so: the hint alone (a NameError) would not
                message = f"{before[-1].message}; then: {message}"
            cell.outputs = [error_output("GradingError", message)]
    return records


NO_VERDICT = "no-verdict"  # the test cell published none, and no fault says why
SYNTAX_ERROR = "syntax-error"  # grades.csv's status: the answer cell did not parse, none of it ran
UNDEFINED = f"{RAISED}NameError"


def interrupted(exercise: str, said: str) -> str:
    """What a test interrupted at the cell time limit says (the kernel knows only "interrupted"):
    which test, the limit, and where to look, from the fault the grader recorded (``said``)."""
    limit = re.search(r"past the (\d+) s limit", said)
    if not limit:
        return f"the test cell {exercise} was interrupted: {said}"
    return (f"the test cell {exercise} ran past the {limit[1]} s time limit and was interrupted: "
            "does the code it grades (a forward or backward) loop endlessly?")


def _raised(cell):
    """The error that stopped an answer cell, if any: not an unanswered stub's."""
    errors = [output for output in cell.get("outputs", []) if output.get("output_type") == "error"]
    # a dead kernel is said by its fault (``lost``), not as an error the answer raised
    if errors and errors[-1].get("ename") not in ("NotImplementedError", KERNEL_DIED):
        return errors[-1]
    return None


def record(passed: bool, message: str, score: float | None, mistake: str) -> dict:
    """What a test cell's verdict said, as recorded: passed, and for a failure the score
    (partial credit), the mistake (an id or a category, ``autograder.mistakes``), the hint
    (the message's first line) and, where the message names them, the further checks that
    failed (``also_failed``)."""
    if passed:
        return {"passed": True}
    found = {"passed": False, "score": score, "mistake": mistake or NO_VERDICT,
             "hint": message.partition("\n")[0]}
    # only a weighted verdict (it has a score, 0 too) lists its parts, each on a line the
    # library wrote; an all-or-nothing one's details may quote the learner's own error
    if score is not None and (also := also_failed(message)):
        found["also"] = also
    return found


# A weighted part's line in a verdict's details (``autograder.partial``): "✗ gradients (3 of 4):
# the hint"; its name is the short name insight shows
_FAILED_PART = re.compile(r"^✗ (?P<name>.+?) \([0-9.e+-]+ of [0-9.e+-]+\)(?::|$)")


def also_failed(message: str) -> list[str]:
    """The checks a failed verdict's message says failed besides the first, whose hint heads
    the message: the failing parts of an exercise scored by weighted parts after the first
    (each part runs whatever the others did). An all-or-nothing battery stops at its first
    failure, so its message names no other: nothing is known of the checks after it."""
    failed = [found["name"] for line in message.splitlines()[1:]
              if (found := _FAILED_PART.match(line))]
    return failed[1:]


def _no_verdict(exercise: str, cell, stopped: dict, answer: str | None) -> str:
    if exercise in stopped:
        return f"the hidden tests for {exercise} did not finish: {stopped[exercise].message}"
    if answer in stopped:
        return (f"the hidden tests for {exercise} could not run: its answer cell was stopped "
                f"({stopped[answer].message})")
    errors = [o for o in cell.outputs if o.get("output_type") == "error"]
    cause = f" ({errors[-1].ename}: {errors[-1].evalue})" if errors else ""
    return (f"the hidden tests for {exercise} did not report a verdict{cause}: the cell was "
            "interrupted, timed out, lost its kernel, or failed before the hidden tests ran")
