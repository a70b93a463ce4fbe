"""The seal's test-cell runner: nbgrader's rule for any test cell, decided by the grader."""

import pytest

from autograder.errors import GradingError
from autograder.test_cells import make_sealed_test_cell


def _runner(namespace=None, tampered=(), published=None):
    """A runner whose restore reports ``tampered`` and whose verdicts land in a list."""
    verdicts, published = [], published if published is not None else []
    calls = iter([[], list(tampered)])
    run = make_sealed_test_cell(lambda: next(calls, []), published,
                                lambda *verdict: verdicts.append(verdict),
                                lambda: namespace if namespace is not None else {})
    return run, verdicts, published


def test_asserts_that_hold_earn_the_points():
    """Does a cell of plain asserts that all hold pass?"""
    run, verdicts, _ = _runner({"x": 2})
    run("extra", 2.0, "assert x == 2\nassert x * x == 4")
    assert verdicts == [("extra", True, "extra: all tests passed", None, "")]


def test_a_failing_assert_shows_its_message_not_its_code():
    """Does a failing assert fail the cell with its message and line, never its source?"""
    run, verdicts, _ = _runner({"x": 3})
    with pytest.raises(GradingError):
        run("extra", 2.0, "y = x + 1\nassert y == 3, 'y is not 3'")
    (name, passed, message, score, mistake), = verdicts
    assert (name, passed, score, mistake) == ("extra", False, None, "test-failed")
    assert message == "a test failed (line 2 of the test cell): y is not 3"


@pytest.mark.parametrize("line, where", [
    (2, "line 2 of the test cell"), (4, "in the hidden tests of the test cell"),
    (7, "line 4 of the test cell")])
def test_a_failure_is_placed_in_the_cell_as_the_learner_sees_it(line, where):
    """Is a failed assert in the hidden tests said to be there, not on a line the learner's
    copy (without them, nbgrader having removed the region) lacks; and one after them given
    the line number the learner's copy has?"""
    source = ["x = 1", "assert x", "### BEGIN HIDDEN TESTS", "assert x", "### END HIDDEN TESTS",
              "y = 2", "assert y"]
    source[line - 1] = source[line - 1].replace("assert", "assert False, 'no'; assert")
    run, verdicts, _ = _runner({})
    with pytest.raises(GradingError):
        run("extra", 1.0, "\n".join(source))
    assert verdicts[0][2] == f"a test failed ({where}): no"


def test_a_silent_failed_assert_says_it_gives_no_message():
    """Does an assert without a message say so, rather than end on a colon?"""
    run, verdicts, _ = _runner({})
    with pytest.raises(GradingError):
        run("extra", 1.0, "assert 1 == 2")
    assert verdicts[0][2] == "a test failed (line 1 of the test cell); the test gives no message"


def test_any_error_fails_the_cell():
    """Does an exception other than an assert (or SystemExit) fail the cell too?"""
    for source, phrase in [("1 / 0", "the test raised ZeroDivisionError"),
                           ("raise SystemExit(0)", "the test raised SystemExit")]:
        run, verdicts, _ = _runner()
        with pytest.raises(GradingError):
            run("extra", 1.0, source)
        assert verdicts[0][1] is False and verdicts[0][2].startswith(phrase)
        assert verdicts[0][4] == f"raised:{phrase.split()[-1]}"


@pytest.mark.parametrize("result, passed, score", [(1.5, False, 0.75), (2, True, None),
                                                   (5.0, True, None), (0, False, 0.0),
                                                   (True, True, None), ("text", True, None)])
def test_a_number_as_the_result_is_the_points_earned(result, passed, score):
    """nbgrader's partial credit: is a numeric last expression the points earned (capped), and
    anything else full marks?"""
    run, verdicts, _ = _runner({"result": result})
    if passed:
        run("extra", 2.0, "result")
    else:
        with pytest.raises(GradingError):
            run("extra", 2.0, "result")
    assert verdicts[0][1:2] == (passed,) and verdicts[0][3] == score


def test_a_failed_grade_call_keeps_its_hint_and_partial_credit():
    """In a cell that calls grade(), is grade's own verdict (hint, score) the cell's?"""
    published = []
    namespace = {"published": published, "GradingError": GradingError}
    run, verdicts, _ = _runner(namespace, published=published)
    source = ("published.append(('Square', False, 'check the sign', 0.5, "
              "'unproven:wrong-value'))\nraise GradingError('check the sign')")
    with pytest.raises(GradingError):
        run("Square", 2.0, source)
    assert verdicts == [("Square", False, "check the sign", 0.5, "unproven:wrong-value")]


def test_asserts_after_a_passing_grade_call_still_count():
    """Does a failing assert after a passing grade() fail the mixed cell?"""
    published = []
    run, verdicts, _ = _runner({"published": published}, published=published)
    with pytest.raises(GradingError):
        run("Square", 2.0,
            "published.append(('Square', True, 'ok', None, ''))\nassert False, 'more'")
    assert verdicts[0][1] is False and "more" in verdicts[0][2]


def test_tampering_while_the_cell_ran_fails_it():
    """Does a change to torch or the grading library during the cell cost the cell?"""
    run, verdicts, _ = _runner(tampered=["torch.allclose"])
    with pytest.raises(GradingError):
        run("extra", 1.0, "pass")
    assert verdicts[0][1] is False and "replaced torch.allclose" in verdicts[0][2]
    assert verdicts[0][4] == "tampered"


def test_an_interrupted_cell_is_a_timeout():
    """Is a cell stopped at the time limit recorded as a timeout, and the interrupt kept?"""
    run, verdicts, _ = _runner()
    with pytest.raises(KeyboardInterrupt):
        run("extra", 1.0, "raise KeyboardInterrupt")
    assert verdicts == [("extra", False, "the test cell was interrupted (time limit)", None,
                         "timeout")]
