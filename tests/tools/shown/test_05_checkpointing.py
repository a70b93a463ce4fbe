"""Lesson 05's live checker of the memory model M(k) and the best k: the worked answer passes
every counted case, a peak that forgets the held inputs fails."""

from tests.tools.shown.lesson_code import run_cells


def test_peak_worked_passes_and_a_peak_without_the_held_inputs_fails():
    """Does the worked my_peak / my_best_k pass every counted case, and a peak that forgets the
    k held inputs fail (and hold back the my_best_k check)?"""
    cells = ["my_peak = lambda", "from autograder.exercises.checkpoint_memory import"]
    lines = run_cells("05_checkpointing", cells)
    assert len(lines) == 10 and all(line.endswith("✓") for line in lines[:8]), lines
    forgets = run_cells("05_checkpointing", cells, my_peak=lambda n, a, k: n / k * a)
    assert forgets[0] == "n = 16, a = 2, k =  1: counted  33, yours  32.00 ✗", forgets
    assert forgets[-1].startswith("my_best_k: checked once every my_peak line"), forgets
