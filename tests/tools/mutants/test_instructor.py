"""An instructor's own FunctionExercise through the mutation engine (issue 45 item 5)."""

import textwrap

import pytest

from autograder.exercises import EXERCISES
from tools.mutants.generate import mutants
from tools.mutants.grading import KILLED, SURVIVED, grade
from tools.mutants.instructor import register

LESSON = textwrap.dedent('''\
    # %%
    import torch

    from autograder.custom import FunctionExercise

    # %% nbgrader={"grade_id": "answer_MyTanh", "solution": true}
    class MyTanh(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ### BEGIN SOLUTION
            y = torch.tanh(x)
            ctx.save_for_backward(y)
            return y
            ### END SOLUTION

        @staticmethod
        def backward(ctx, grad_output):
            ### BEGIN SOLUTION
            y, = ctx.saved_tensors
            return grad_output * (1 - y * y)
            ### END SOLUTION

    # %% nbgrader={"grade_id": "MyTanh", "grade": true, "points": 3}
    MY_TANH = FunctionExercise("MyTanh", reference=torch.tanh, saves="output")
    MY_TANH.self_check(MyTanh)
    ### BEGIN HIDDEN TESTS
    MY_TANH.grade(MyTanh)
    ### END HIDDEN TESTS
''')


@pytest.fixture
def my_tanh(tmp_path):
    """The instructor's lesson registered; its exercise removed again afterwards."""
    path = tmp_path / "my_tanh.py"
    path.write_text(LESSON)
    yield register(path)
    EXERCISES.pop("MyTanh", None)


def test_the_notebook_exercise_and_solution_are_found(my_tanh):
    """Is MyTanh registered for grading, with the notebook's solution as its one answer?"""
    (answer,) = my_tanh["MyTanh"]
    assert EXERCISES["MyTanh"].lesson == "instructor"
    assert grade((answer, None)).status == SURVIVED


def test_the_instructor_sees_which_mutants_the_tests_kill(my_tanh):
    """Does a wrong sign die, and ``.contiguous()`` on the saved output (tanh's fresh output
    is contiguous: no copy is made) survive?"""
    (answer,) = my_tanh["MyTanh"]
    made = {(m.operator, m.after): m for m in mutants(answer)}
    sign = made["swap_arithmetic", "return grad_output * (1 + y * y)"]
    same = made["add_copy", "ctx.save_for_backward(y.contiguous())"]
    assert grade((answer, sign)).status == KILLED
    assert grade((answer, same)).status == SURVIVED


def test_a_notebook_without_a_function_exercise_is_refused(tmp_path):
    """Is a notebook whose tests build no FunctionExercise, or a missing one, a clear error?"""
    path = tmp_path / "plain.py"
    path.write_text("# %%\nimport torch\n")
    with pytest.raises(ValueError, match="no test cell builds a FunctionExercise"):
        register(path)
    with pytest.raises(ValueError, match="no notebook at"):
        register(tmp_path / "missing.ipynb")
