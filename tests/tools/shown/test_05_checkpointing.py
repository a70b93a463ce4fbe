"""Lesson 05's live checker of the memory model M(k) and the best k: the worked answer passes
every counted case, a peak that forgets the held inputs fails."""

from tests.tools.shown.lesson_code import run_cells


def test_peak_worked_passes_and_a_peak_without_the_held_inputs_fails():
    """Does the worked my_peak / my_best_k pass every counted case, and a peak that forgets the
    k held inputs fail, saying only which way it is off (the counted values withheld until every
    line is right) and holding back the my_best_k check?"""
    cells = ["my_peak = lambda",
             "from autograder.exercises.lesson05_checkpointing.checkpoint_memory import"]
    lines = run_cells("05_checkpointing", cells)
    assert len(lines) == 10 and all(line.endswith("✓") for line in lines[:8]), lines
    forgets = run_cells("05_checkpointing", cells, my_peak=lambda n, a, k: n / k * a)
    assert forgets[0] == "n = 16, a = 2, k =  1: yours  32.00 ✗ (too low)", forgets
    assert not any("counted" in line for line in forgets), forgets
    assert forgets[-1].startswith("my_best_k: checked once every my_peak line"), forgets


def test_peak_counting_the_shared_input_once_passes_and_a_floor_division_is_named():
    """Does a peak that counts the segment's input once (k - 1 + n a / k, as the meter reads)
    pass with a line saying so, and a peak with n // k, right wherever k divides n, get the
    line that asks for a real k instead of a wrong best k?"""
    cells = ["my_peak = lambda",
             "from autograder.exercises.lesson05_checkpointing.checkpoint_memory import"]
    once = run_cells("05_checkpointing", cells, my_peak=lambda n, a, k: k - 1 + n / k * a)
    assert once[0] == "n = 16, a = 2, k =  1: counted  33, yours  32.00 ✓", once
    assert once[5].startswith("✓ you counted the shared input once"), once
    assert len(once) == 11 and all(line.endswith("✓") for line in once[6:9]), once
    floor = run_cells("05_checkpointing", cells, my_peak=lambda n, a, k: k + n // k * a)
    assert all(line.endswith("✓") for line in floor[:5]), floor
    assert floor[5] == ("n = 16, a = 2, k =  5: yours  11.00; step 4 treats k as a real number: "
                        "does your M(k) round n / k somewhere? ✗"), floor
    assert floor[6].startswith("my_best_k: checked once every my_peak line"), floor
    assert len(floor) == 7, floor
