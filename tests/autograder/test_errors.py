"""GradingError: the hint is the first line, details follow once, whatever a check passes."""

from autograder.errors import GradingError
from autograder.function_contract import rule_reference


def test_details_absent_or_none_leave_the_hint_alone():
    for details in ("", None):
        error = GradingError("the gradient for lam is 1/4 of the right one", details)
        assert str(error) == "the gradient for lam is 1/4 of the right one"
        assert error.details == ""


def test_details_already_quoted_by_the_hint_are_not_repeated():
    error = GradingError("backward raised ValueError: bad shape",
                         "Traceback line\nValueError: bad shape")
    assert str(error).splitlines() == ["backward raised ValueError: bad shape", "Traceback line"]


def test_a_case_goes_before_the_rule_reference_that_ends_the_hint():
    """The contract page: a rule check's first line ends with the rule's reference, case or not."""
    hint = f"Square.backward modified its input x in place {rule_reference('unwritten')}"
    error = GradingError(hint, case="x of shape (5,)")
    assert error.hint == ("Square.backward modified its input x in place (with x of shape (5,)) "
                          f"{rule_reference('unwritten')}")
    assert GradingError("no rule here", case="x of shape (5,)").hint == \
        "no rule here (with x of shape (5,))"
