"""GradingError: the hint is the first line, details follow once, whatever a check passes."""

from autograder.errors import GradingError


def test_details_absent_or_none_leave_the_hint_alone():
    for details in ("", None):
        error = GradingError("the gradient for lam is 1/4 of the right one", details)
        assert str(error) == "the gradient for lam is 1/4 of the right one"
        assert error.details == ""


def test_details_already_quoted_by_the_hint_are_not_repeated():
    error = GradingError("backward raised ValueError: bad shape",
                         "Traceback line\nValueError: bad shape")
    assert str(error).splitlines() == ["backward raised ValueError: bad shape", "Traceback line"]
