"""Any nbgrader test cell, graded under the seal: plain asserts, ``grade()`` calls, or both.

nbgrader's rule is kept: a test cell earns its points if it runs without an error, and a cell
whose last expression is a number earns that many points (partial credit). But the cell's
outcome is decided here, by code the seal keeps private, not by what the cell printed: a learner
who silences tracebacks (``set_custom_exc``, ``showtraceback``, ``sys.excepthook``) still fails a
failing assert. In a sealed kernel ``seal.boot`` installs ``run_test_cell``; the grader runs each
test cell through it.
"""

import ast
import numbers

from .errors import GradingError
from .mistakes import TAMPERED, TEST_FAILED, TIMEOUT, mistake_of

# Taken now, when the seal snapshots this module: learner code that rebinds ``ast`` or
# ``numbers`` attributes later cannot change how a test cell is read.
_EXPR, _EXPRESSION, _ONLY_AST, _REAL = ast.Expr, ast.Expression, ast.PyCF_ONLY_AST, numbers.Real


def run_cell_source(source: str, namespace: dict, filename: str):
    """Run ``source`` in ``namespace`` as a cell does; return its last expression's value."""
    tree = compile(source, filename, "exec", _ONLY_AST)
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], _EXPR) else None
    exec(compile(tree, filename, "exec"), namespace)  # noqa: S102 (the instructor's test)
    if last is None:
        return None
    return eval(compile(_EXPRESSION(last.value), filename, "eval"), namespace)  # noqa: S307


def describe_failure(error: BaseException, filename: str, source: str = "") -> str:
    """The first line a learner reads for a failed test: the assert's message, never its
    source, and where in the cell it failed, as the learner sees the cell (``source``, the
    whole cell: its hidden tests are not in the learner's copy)."""
    if isinstance(error, GradingError):  # the grading library's own hint says it best
        return str(error)
    line = next((lineno for name, lineno in _frames(error.__traceback__) if name == filename),
                None)
    where = f" ({visible_place(source, line)})" if line else ""
    text = str(error).strip().splitlines()[0] if str(error).strip() else ""
    if isinstance(error, AssertionError):
        return f"a test failed{where}: {text}" if text else \
            f"a test failed{where}; the test gives no message"
    name = type(error).__name__
    return f"the test raised {name}{where}: {text}" if text else f"the test raised {name}{where}"


HIDDEN_BEGIN, HIDDEN_END = "BEGIN HIDDEN TESTS", "END HIDDEN TESTS"  # nbgrader's delimiters


def visible_place(source: str, line: int) -> str:
    """Where line ``line`` of a test cell is for a learner, whose copy of the cell has no
    hidden tests (nbgrader removes them, the lines holding its delimiters included): its line
    number there, or that it is in the hidden tests."""
    hidden_above, hidden = 0, False
    for number, text in enumerate(source.split("\n"), start=1):
        if HIDDEN_BEGIN in text:
            hidden = True
        if number == line:
            return "in the hidden tests of the test cell" if hidden else \
                f"line {line - hidden_above} of the test cell"
        hidden_above += hidden
        if HIDDEN_END in text:
            hidden = False
    return f"line {line - hidden_above} of the test cell"


def _frames(traceback):
    """(file name, line) of each frame, innermost last (attributes only: nothing to patch)."""
    while traceback is not None:
        yield traceback.tb_frame.f_code.co_filename, traceback.tb_lineno
        traceback = traceback.tb_next


def cell_score(value, points: float) -> float | None:
    """nbgrader's partial credit: a number as the cell's result is the points earned, as a
    fraction of ``points``; None when the result is not a number (full marks)."""
    if isinstance(value, bool) or not isinstance(value, _REAL) or not points:
        return None
    return min(max(float(value) / points, 0.0), 1.0)


def make_sealed_test_cell(restore, published: list, publish_verdict, namespace):
    """``run_test_cell(grade_id, points, source)`` for a sealed kernel. ``published`` collects
    the verdicts of ``grade()`` calls, as (name, passed, message, score, mistake);
    ``publish_verdict(name, passed, message, score, mistake)`` signs one; ``namespace()`` is the
    learner's namespace the test runs in."""

    def run_test_cell(grade_id: str, points: float, source: str) -> None:
        filename = f"<test cell {grade_id}>"
        published.clear()
        restore()
        error, value = None, None
        try:
            value = run_cell_source(source, namespace(), filename)
        except KeyboardInterrupt:
            publish_verdict(grade_id, False, "the test cell was interrupted (time limit)", None,
                            TIMEOUT)
            raise
        except BaseException as raised:  # noqa: BLE001 (SystemExit too: a failed test)
            error = raised
        tampered = restore()
        failed_grades = [verdict for verdict in published if not verdict[1]]
        mistake = ""
        if tampered:
            passed, message, score, mistake = False, (
                f"the code tested in {grade_id} replaced {tampered[0]} while it was being "
                "graded: a submission must not modify torch or the grading library"), None, \
                TAMPERED
        elif error is not None and failed_grades and isinstance(error, GradingError):
            _, passed, message, score, mistake = failed_grades[-1]
        elif error is not None:
            passed, message, score = False, describe_failure(error, filename, source), None
            mistake = TEST_FAILED if type(error) is AssertionError else mistake_of(error)
        else:
            score = cell_score(value, points)
            passed = score is None or score >= 1
            earned = [verdict[2] for verdict in published if verdict[1]]
            message = (earned[-1] if earned else f"{grade_id}: all tests passed") if passed \
                else f"{grade_id}: the test cell's result gives {value!r} of {points:g} points"
            score, mistake = (None, "") if passed else (score, TEST_FAILED)
        publish_verdict(grade_id, passed, message, score, mistake)
        if not passed:
            raise GradingError(message)
        print(f"✓ {message}")

    return run_test_cell
