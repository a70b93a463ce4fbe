"""The quick check a learner runs while iterating: values and gradients on one typical input,
in a fraction of the self-check's time (``make bench`` measures both); it passes the solution, shows where a wrong gradient
differs (the self-check's probes then name the cause), and says it promises less than the
self-check."""

import pytest

from autograder import quick_check, self_check
from autograder.errors import GradingError
from tests.autograder.catalogued import mistake
from tools.solutions import solution


def test_the_solution_passes_and_the_line_says_it_is_quick(capsys):
    quick_check("MySigmoid", solution("MySigmoid"))
    said = capsys.readouterr().out
    assert "values and gradients right on one typical input" in said
    assert "self_check runs every check grading runs" in said


def test_a_wrong_gradient_is_shown_and_the_self_check_names_its_cause():
    wrong = mistake("MySigmoid", "ignores grad_output")
    with pytest.raises(GradingError, match="your gradient for x is wrong"):
        quick_check("MySigmoid", wrong)
    with pytest.raises(GradingError, match="MySigmoid.backward ignores grad_output"):
        self_check("MySigmoid", wrong)


def test_an_unknown_exercise_is_named():
    with pytest.raises(KeyError, match="no exercise called 'Sigmoid'"):
        quick_check("Sigmoid", solution("MySigmoid"))
