"""autograder.unwritten: a demo cell that uses an unanswered exercise fails in one calm line."""

import re

import pytest
from IPython.core.interactiveshell import InteractiveShell

from autograder.unwritten import show_unwritten_calmly

STUB = '''
import torch

class MySigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        # YOUR CODE HERE
        raise NotImplementedError()
'''


@pytest.fixture
def shell():
    """An IPython shell with the course's handler, as a lesson's setup cell leaves it; what it
    shows of an error collects in ``shell.shown``."""
    shell = InteractiveShell.instance()
    shell.shown = []
    shell._showtraceback = lambda etype, value, stb: shell.shown.append("\n".join(stb))
    show_unwritten_calmly()
    shell.run_cell(STUB)
    yield shell
    shell.set_custom_exc((), None)
    InteractiveShell.clear_instance()


def test_a_demo_cell_on_an_unwritten_function_fails_in_one_line(shell):
    """Does a cell that calls an unanswered Function fail (the error stays), showing one line
    that names the exercise and no traceback?"""
    result = shell.run_cell("MySigmoid.apply(torch.zeros(3))")
    assert isinstance(result.error_in_exec, NotImplementedError)
    shown, = shell.shown
    assert shown.startswith("MySigmoid is not written yet") and "\n" not in shown


def test_any_other_not_implemented_error_keeps_its_traceback(shell):
    """Is a NotImplementedError that is no stub (a message of its own, torch's) shown whole?"""
    result = shell.run_cell("raise NotImplementedError('no kernel for this dtype')")
    assert isinstance(result.error_in_exec, NotImplementedError)
    shown, = shell.shown
    assert "no kernel for this dtype" in shown and "not written yet" not in shown


def test_tb_shows_the_whole_traceback_after_the_calm_line(shell):
    """Does %tb after the calm line show the stub's traceback, down to the stub's line?"""
    shell.run_cell("MySigmoid.apply(torch.zeros(3))")
    shell.run_cell("%tb")
    assert "raise NotImplementedError()" in re.sub(r"\x1b\[[0-9;]*m", "", shell.shown[-1])


def test_an_answer_cell_whose_stub_raise_under_the_class_still_runs_names_its_exercise(shell):
    """Does an answer cell that defines its class and still holds the stub's raise under it
    (CubeOnce's, on Run All of the untouched lesson) say in one line which exercise's answer
    cell it is and what to do, never "<module> is not written yet"?"""
    result = shell.run_cell(
        "class CubeOnce(torch.autograd.Function):\n"
        "    @staticmethod\n"
        "    def forward(ctx, x):\n"
        "        return x ** 3\n"
        "\n"
        "\n"
        "# YOUR CODE HERE\n"
        "raise NotImplementedError()\n")
    assert isinstance(result.error_in_exec, NotImplementedError)
    shown, = shell.shown
    assert shown.startswith("CubeOnce's answer cell: the stub's raise") and "\n" not in shown
    assert "<module>" not in shown and "delete it" in shown


def test_a_name_read_before_its_cell_ran_fails_in_one_line(shell):
    """Does a comparison cell run before its prediction cell fail (the error stays), showing
    one line that names the variable, with no traceback?"""
    result = shell.run_cell("print(predicted_flops)")
    assert isinstance(result.error_in_exec, NameError)
    shown, = shell.shown
    assert shown.startswith("predicted_flops is not defined yet: if a cell above this one "
                            "assigns it") and "Traceback" not in shown


def test_a_name_error_inside_a_function_keeps_its_traceback(shell):
    """Is a NameError raised inside a function's body (a bug there) shown as IPython shows it?"""
    shell.run_cell("def f():\n    return undefined_inside\n")
    result = shell.run_cell("f()")
    assert isinstance(result.error_in_exec, NameError)
    shown, = shell.shown
    assert "undefined_inside" in shown and "not defined yet" not in shown
