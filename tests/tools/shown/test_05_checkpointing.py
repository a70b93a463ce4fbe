"""Lesson 05's live checker of the memory model M(k) and the best k: the worked answer passes
every counted case, a peak that forgets the held inputs fails; the closure quiz's verdict."""

from autograder.predictions import compare
from tests.tools.shown.lesson_code import run_cells, source


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


def test_closure_quiz_credits_python_not_pytorch():
    """Does the late-binding quiz, plain Python with no tensor in it, print its result as
    Python's (not PyTorch's), with a ✓ for the right prediction?"""
    lines = run_cells("05_checkpointing", ["predicted_calls = None",
                                           "functions = [lambda: i for i in range(3)]"],
                      predicted_calls=[2, 2, 2], compare=compare)
    assert lines == ["[f() for f in functions]: you said [2, 2, 2], Python: [2, 2, 2]  ✓"], lines


def test_exercise_1_prompt_reads_as_a_sentence():
    """Does Exercise 1's prompt hand the design to the learner in a sentence that parses (the
    learner's report quoted "How is the design's work, and the questions below ...")?"""
    text = source("05_checkpointing")
    assert "How is the design's work" not in text
    prose = " ".join(line.removeprefix("#").strip() for line in text.splitlines())
    exercise_1 = " ".join(prose[prose.index("Exercise 1 · `CheckpointFunction`"):].split())
    assert "Design it before you write it: 1. Which arguments go to" in exercise_1
