"""Lesson 03's live checkers: question 5's numbers against the grading library's autograd
oracle (a wrong element located, none of autograd's numbers shown, no per-element formula asked
for before the answer cell), the stand-ins on a grid exact at 0 and the halves, judged by their
properties, and the quick questions' verdicts."""

import torch

from autograder.exercises.lesson03_straight_through.fake_quantize_derivation import check_derivation
from autograder.exercises.lesson03_straight_through.stand_ins import stand_in_verdicts
from autograder.predictions import compare, same_answer, written
from tests.tools.shown.lesson_code import cell_from, definitions, run_code, source


def _check(**predicted) -> list[str]:
    """What the lesson's derivation cell prints for question 5's ``predicted`` numbers."""
    given = {"predicted_y": None, "predicted_dy_dx": None, "predicted_dy_ds": None, **predicted}
    return run_code(cell_from("03_ste", "check_derivation("),
                    {"check_derivation": check_derivation, **given})


def test_question_5_is_judged_against_autograd_without_showing_its_numbers():
    """Are question 5's numbers (s = 0.5, x = (0.7, -3.0, 1.8)) judged right and wrong, a wrong
    one located by element and none of autograd's shown?"""
    assert _check()[0] == "question 5, y: no prediction written"
    lines = _check(predicted_y=[0.5, -2, 1.5], predicted_dy_dx=[1, 0, 0],
                   predicted_dy_ds=[0.6, -4, 4])
    assert lines == [
        "question 5, y: you said [0.5, -2, 1.5] ✓",
        "question 5, dy/dx: you said [1, 0, 0] ✓",
        "question 5, dy/ds: you said [0.6, -4, 4] ✗ (the first and third elements off)"], lines
    lines = _check(predicted_dy_ds=0.6)
    assert lines[2] == "question 5, dy/ds: you said 0.6 ✗ (three numbers expected)", lines


def test_no_per_element_formula_is_checked_before_the_answer_cell():
    """Does the derivation cell judge question 5's three elements only, so that the formulas of
    questions 1 and 2 are first checked in FakeQuantize's own answer cell?"""
    learner = source("03_ste", learner=True)
    assert "my_dy_dx" not in learner and "my_dy_ds" not in learner


def test_the_notebook_does_not_name_the_derivation_oracle():
    """Does the learner's copy call the checker without naming the function it compares with
    (?? on that would show LSQ's composed form, Exercise 3's answer)?"""
    assert "fake_quantize_derivatives" not in source("03_ste", learner=True)


def _stand_ins(stand_in_round, stand_in_sign=None) -> list[str]:
    """What the stand-in checker prints for ``stand_in_round`` and ``stand_in_sign`` (the
    worked one when None)."""
    worked = definitions("03_ste", "stand_in_sign")
    return run_code("stand_in_verdicts(stand_in_round, stand_in_sign)",  # no plot
                    {"stand_in_verdicts": stand_in_verdicts, "stand_in_round": stand_in_round,
                     "stand_in_sign": stand_in_sign or worked["stand_in_sign"]})


def test_worked_stand_ins_pass_and_round_itself_fails_for_its_jumps():
    worked = definitions("03_ste", "stand_in_round")
    lines = _stand_ins(worked["stand_in_round"])
    assert len(lines) == 2 and all(line.endswith("✓") for line in lines), lines
    for slip in (torch.round, lambda x: 0.5 * x + 0.5 * torch.round(x)):  # slope 0, slope 0.5
        lines = _stand_ins(slip)
        assert lines[0].endswith("✗") and lines[1].startswith("    yours jumps at x = 0.5."), lines
        assert "(for round itself 0, the true derivative" in lines[1], lines
    lines = _stand_ins(lambda x: x + 0.1)  # strays at the halves
    assert lines[0].endswith("✗") and lines[1].startswith("    furthest off at x = "), lines


def test_a_sign_stand_in_that_jumps_at_0_is_caught_at_0():
    """Does the checker probe x = 0 itself, where sign jumps (torch.sign as its own stand-in)?"""
    worked = definitions("03_ste", "stand_in_round")
    lines = _stand_ins(worked["stand_in_round"], torch.sign)
    assert lines[1].endswith("✗") and lines[2].startswith("    yours jumps at x = 0."), lines
    assert "(for sign itself 0, the true derivative" in lines[2], lines  # not round's


def test_the_checker_asks_for_stand_ins_not_slopes():
    """Does the live checker stop one step short of the backward: no slope asked for?"""
    assert "slope_" not in source("03_ste", learner=True)


def test_the_sign_checker_measures_properties_and_never_shows_stand_in_b():
    """Is stand-in B judged by its properties (sign where |x| >= 1, the steepest slope), its
    value never printed nor written in the learner's copy before Exercise 2?"""
    worked = definitions("03_ste", "stand_in_round")
    lines = _stand_ins(worked["stand_in_round"], lambda x: torch.clamp(2 * x, -1, 1))
    assert lines[1].endswith("✗") and lines[2].startswith("    its steepest slope is 2:"), lines
    lines = _stand_ins(worked["stand_in_round"], lambda x: torch.tanh(x))
    assert lines[2] == ("    at x = -1, where |x| >= 1, yours is -0.7615941559557649, not "
                        "sign(x) = -1"), lines
    # the closed form (|x + 1| - |x - 1|) / 2 is -1.0000000000000284 at x = -511.95, a rounding
    # of |x + 1|: accepted, as maximum/minimum is; a miss by 1e-9 at x = 1000 is not
    for exact_b in (lambda x: ((x + 1).abs() - (x - 1).abs()) / 2,
                    lambda x: torch.maximum(torch.minimum(x, torch.ones_like(x)),
                                            -torch.ones_like(x))):
        lines = _stand_ins(worked["stand_in_round"], exact_b)
        assert lines[1].endswith("✓"), lines
    lines = _stand_ins(worked["stand_in_round"],
                       lambda x: torch.clamp(x, -1, 1) * (1 + 1e-12 * (x.abs() >= 1000).to(x.dtype)))
    assert lines[2] == ("    at x = -1000, where |x| >= 1, yours is -1.000000000001, not "
                        "sign(x) = -1"), lines
    learner = source("03_ste", learner=True)
    before = learner[:learner.index("class SignClippedSTE")]  # Exercise 2's statement too
    assert "hardtanh" not in before and "clamp(x, -1, 1)" not in before
    assert "torch.where(inside, grid" not in learner


def test_the_halves_verdict_takes_0_for_minus_0():
    """Is the prediction (-2, -2, 0, 0, 2, 2) right against torch.round's -0., and rounding
    halves up wrong?"""
    def verdict(predicted):
        lesson = definitions("03_ste", compare=compare, written=written,
                             predicted_round_halves=predicted)
        return run_code(cell_from("03_ste", "halves = torch.tensor"), lesson)[-1]

    assert verdict([-2, -2, 0, 0, 2, 2]).endswith("✓")
    assert verdict([-2, -1, 0, 1, 2, 3]).endswith("✗")


def _quick_question_2(second_entry) -> list[str]:
    """What quick question 2's run cell prints for the prediction ``second_entry``."""
    lesson = definitions("03_ste", compare=compare, written=written,
                         predicted_tau_limit=0.135, predicted_second_entry=second_entry)
    return [line for line in run_code(cell_from("03_ste", "near_tie = torch.tensor"), lesson)
            if line.startswith(("largest τ", "the second entry"))]


def test_quick_question_2_marks_the_right_words_right():
    assert _quick_question_2("0") == [
        "largest τ with a non-finite first entry: you said 0.135, PyTorch: 0.135  ✓",
        "the second entry there: you said '0', PyTorch: '0'  ✓"]
    assert _quick_question_2(0.0)[1].endswith("✓")  # the number for the word "0"
    assert _quick_question_2("nan")[1].endswith("✗")
    assert _quick_question_2(None)[1] == ("the second entry there: no prediction written: "
                                          "write yours, then run this again")  # not the answer


def test_quick_question_1_asks_about_a_spelling_exercise_2_does_not_use():
    """Does quick question 1 measure the closed form (|x + 1| - |x - 1|) / 2, never the learner's
    stand-in (most often torch.clamp, whose corners are Exercise 2's question 1), and withhold
    its slopes until a prediction is written?"""
    cell = cell_from("03_ste", "corners = torch.tensor")
    assert "stand_in_sign" not in cell and "clamp" not in cell

    def lines(predicted):
        return run_code(cell, {"torch": torch, "compare": compare, "written": written,
                               "predicted_corners": predicted})

    assert lines((0.5, 0.5))[-1].endswith("✓")
    assert lines((1.0, 1.0))[-1].endswith("✗")
    assert not any("[0.5, 0.5]" in line for line in lines(None))
