"""A failing visible self-check offers the gradient-check explorer; a passing one does not."""

import pytest

import widgets  # noqa: F401  (installs the hook)
from autograder import self_check
from autograder.errors import GradingError
from autograder.grading import SELF_CHECK_FAILURE_HOOKS
from tests.autograder.catalogued import mistake
from tools.solutions import solution
from widgets import self_check as hook_module
from widgets.view import View


@pytest.fixture
def shown(monkeypatch) -> list:
    """What the hook displayed."""
    displayed = []
    monkeypatch.setattr(hook_module, "display", displayed.append)
    return displayed


def test_importing_widgets_installs_the_hook_once():
    """Is the explorer registered with autograder exactly once, however often it is installed?"""
    hook_module.install()
    assert SELF_CHECK_FAILURE_HOOKS.count(hook_module.offer_gradient_explorer) == 1


def test_a_failing_self_check_shows_the_explorer_and_still_raises_the_hint(shown):
    """Does a wrong sign get its hint and, below it, the Jacobian explorer?"""
    with pytest.raises(GradingError, match="check the sign"):
        self_check("Square", mistake("Square", "wrong sign"))
    assert any(isinstance(item, View) for item in shown)


def test_a_passing_self_check_shows_nothing(shown, capsys):
    """Does a correct Function get only its tick?"""
    self_check("Square", solution("Square"))
    assert shown == [] and "✓ Square passes the self-check" in capsys.readouterr().out


def test_exercises_without_a_gradient_to_compare_are_left_alone(shown):
    """Are straight-through estimators, whose gradients differ by design, not offered it?"""
    with pytest.raises(GradingError):
        self_check("SignSTE", mistake("SignSTE", "zero gradient (the true derivative)"))
    assert shown == []


def test_a_broken_view_never_hides_the_hint(monkeypatch):
    """If the view itself fails, does the learner still get the hint (and a warning)?"""
    def broken(*args, **kwargs):
        raise RuntimeError("view broke")

    monkeypatch.setattr(hook_module, "explore_gradients", broken)
    with pytest.warns(UserWarning, match="view broke"), pytest.raises(GradingError, match="sign"):
        self_check("Square", mistake("Square", "wrong sign"))
