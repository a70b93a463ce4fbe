"""lesson06_attention.attention_recompute: a backward that ignores the saved log-sum-exp is
named, one that recomputes P = exp(S - L) from it passes."""

import pytest

from autograder.exercises.lesson06_attention import attention as lesson
from autograder.exercises.lesson06_attention.attention_recompute import check_backward_reads_lse
from tests.autograder.catalogued import mistake
from tools.solutions import solution

pytestmark = pytest.mark.lesson06

M = "MemoryEfficientAttention"


def _values():
    return lesson.attention_values((2,), 5, 7, 3, 2, "cpu", mask="padding", seed=55)


def test_the_solution_reads_its_log_sum_exp():
    check_backward_reads_lse(solution(M), lesson.MEMORY_EFFICIENT, _values())


@pytest.mark.parametrize("name, said", [
    ("backward calls softmax again, ignoring the saved log-sum-exp", "shifted by 1"),
    ("nothing but Q, K, V and the mask saved: the softmax recomputed whole",
     "forward saved no per-row number")])
def test_a_backward_that_ignores_it_is_named(raises_hint, name, said):
    """Is a softmax recomputed in backward named, whether or not forward saved L?"""
    with raises_hint(said):
        check_backward_reads_lse(mistake(M, name), lesson.MEMORY_EFFICIENT, _values())
