"""Lesson 13's live checkers: one Jacobian entry and a design answer per exercise, the worked
answers passing and each slip answered with a question."""

from autograder.exercises.lesson13_kernels.steps import (check_rms_steps, check_silu_design,
                                                         check_silu_steps)
from tests.tools.shown.lesson_code import cell_from, definitions, run_code


def test_design_answers_worked_pass_and_two_exponentials_fail():
    """Do the worked answers to Exercise 1's live cell get ✓ (question 1, a free expression,
    in any of sigmoid's spellings), and 2 exponentials (or another shared quantity) a ✗,
    exp(-a) told it is one step short and an expression the cell cannot evaluate told so?"""
    checker = cell_from("13_kernels", "check_silu_steps(my_dy_da")
    worked = definitions("13_kernels", "my_dy_da", "my_shared", "my_exps_per_element",
                         check_silu_steps=check_silu_steps)
    lines = run_code(checker, dict(worked))
    assert len(lines) == 3 and all("✓" in line for line in lines), lines
    lines = run_code(checker, {**worked, "my_shared": "g * b", "my_exps_per_element": 2})
    assert "✗" in lines[-2] and "✗" in lines[-1], lines
    for spelling in (" Sigmoid(A) ", "sigmoid", "σ(a)", "torch.sigmoid( a )", "1/(1+exp(-a))",
                     "silu(a) / a + 0 * b"):
        lines = run_code(checker, {**worked, "my_shared": spelling})
        assert "✓" in lines[-2], (spelling, lines)
    for factor in ("g * sigmoid(a)", "sigmoid(a) * g"):  # a true factor of both (issue 68)
        lines = run_code(checker, {**worked, "my_shared": factor})
        assert "✓ a factor of both gradients" in lines[-2], (factor, lines)
    lines = run_code(checker, {**worked, "my_shared": "silu(a)*b"})
    assert "✗ is that a factor of both?" in lines[-2], lines
    lines = run_code(checker, {**worked, "my_shared": "exp(-a)"})
    assert "✗ closer" in lines[-2], lines
    lines = run_code(checker, {**worked, "my_shared": "a * b + g"})
    assert "✗ not a factor of both" in lines[-2], lines
    lines = run_code(checker, {**worked, "my_shared": "sigmoid(a"})
    assert "✗ 'sigmoid(a' is no expression" in lines[-2], lines


def test_silu_checker_asks_one_jacobian_entry_and_names_each_slip_with_a_question():
    """Does Exercise 1's live cell check a number (dy/da at a = -2, b = 3), not a formula, and
    answer the product rule's missing term, b left out, a sign and silu itself each with a
    question, a non-number in one line with both questions still answered?"""
    checker = cell_from("13_kernels", "check_silu_steps(my_dy_da")
    worked = definitions("13_kernels", "my_dy_da", "my_shared", "my_exps_per_element",
                         check_silu_steps=check_silu_steps)
    for slip, phrase in ((0.3576, "what does σ'(a) add?"), (-0.0908, "what does b = 3 do"),
                         (0.9876, "a sign"), (-0.2384, "that is dy/db"),
                         (0.5, "Which factors of y move with a?")):
        lines = run_code(checker, {**worked, "my_dy_da": slip})
        assert lines[0].startswith("dy/da at a = -2, b = 3: ✗") and phrase in lines[0], lines
    lines = run_code(checker, {**worked, "my_dy_da": "-0.27 or so"})
    assert lines[0] == "dy/da at a = -2, b = 3: ✗ '-0.27 or so' is not a number", lines
    assert len(lines) == 3, lines
    assert "✓" in lines[1] and "✓" in lines[2], lines


def test_rms_checker_asks_one_jacobian_entry_and_the_learner_s_own_layout():
    """Does Exercise 2's live cell give ✓ to the worked entry and a buffer that stays the same
    size, ask about r's sum when the entry is 0 (the direct path only) and about the 1/D when
    the mean is dropped, size the learner's own buffer against x at 1,000 rows and a million
    (one partial row per row and one program in all told they are graded as right, with a
    question), and give a ✗ to a count that is no whole number of rows?"""
    checker = cell_from("13_kernels", "check_rms_steps(my_dy0_dx1")
    worked = definitions("13_kernels", "my_dy0_dx1", "my_partials_1k", "my_partials_1m",
                         "my_rms_saved", check_rms_steps=check_rms_steps)
    lines = run_code(checker, dict(worked))
    assert "✓" in lines[0] and "✓" in lines[-1] and len(lines) == 5, lines
    assert lines[1].startswith("saved: ✓ within the bound"), lines
    assert "1,000 rows of D = 4096" in lines[2] and "x itself: 15.6 MiB" in lines[2], lines
    for kept, said in (({"x": "input", "weight": "input", "y": "rows * D"}, "saved: ✗ 4,096,000"),
                       ({"y": "input"}, "saved: ✗ 'y' marked"),
                       (None, "saved: answer in my_rms_saved")):
        lines = run_code(checker, {**worked, "my_rms_saved": kept})
        assert lines[1].startswith(said), (kept, lines)
    lines = run_code(checker, {**worked, "my_dy0_dx1": 0})
    assert "✗" in lines[0] and "Which sum is r made of?" in lines[0], lines
    lines = run_code(checker, {**worked, "my_dy0_dx1": -0.1984})
    assert "✗" in lines[0] and "no 1/D" in lines[0], lines
    for layout, phrase in (((1000, 1_000_000), "grows with the batch"),
                           ((100, 1000), "at a million rows it is 0.1% of x"),  # not 0%
                           ((1, 1), "one program then does every row")):
        lines = run_code(checker, {**worked, "my_partials_1k": layout[0],
                                   "my_partials_1m": layout[1]})
        assert lines[-1].startswith("layout: graded as right") and phrase in lines[-1], lines
    for slip in ({"my_partials_1k": 2.5}, {"my_partials_1m": 0}, {"my_partials_1k": 2000}):
        lines = run_code(checker, {**worked, **slip})
        assert "✓" in lines[0] and lines[2].startswith("layout: ✗"), (slip, lines)


def test_backward_design_checker_judges_saved_tensors_and_launch_site():
    """Is Exercise 1's design cell two answer lines and one call (issue 68, review 79: no
    backward operator presupposed), and does it give ✓ to the worked saved tensors and launch
    site, a ✗ to a y saved alone and to a kernel launched in the registered backward, and a ✓
    to any launch behind an operator of its own, whatever its words?"""
    checker = cell_from("13_kernels", "check_silu_design(my_saved")
    worked = definitions("13_kernels", "my_saved", "my_backward_launch",
                         check_silu_design=check_silu_design)
    assert [line for line in checker.splitlines() if line.strip()
            and not line.startswith("#")] == ["check_silu_design(my_saved, my_backward_launch)"
                                             "  # what you save; where the kernel can launch"]
    lines = run_code(checker, worked)
    assert len(lines) == 2 and "✓" in lines[0] and lines[1].startswith("launch: ✓"), lines
    lines = run_code(checker, {**worked, "my_saved": ("y",),
                               "my_backward_launch": "directly in the registered backward"})
    assert lines[0].startswith("saved: ✗ a and b missing"), lines
    assert lines[1].startswith("launch: ✗") and "FunctionalTensor" in lines[1], lines
    for words in ("its own custom_op", "a second op", "silu_mul_backward, another operator"):
        lines = run_code(checker, {**worked, "my_backward_launch": words})
        assert lines[1].startswith("launch: ✓"), (words, lines)
    lines = run_code(checker, {**worked, "my_backward_launch": None})
    assert lines[1] == "launch: answer in my_backward_launch", lines