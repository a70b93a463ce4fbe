"""Lesson 12's live checker of the clipping factor: the worked answer passes at two max_norms,
a factor that ignores max_norm fails at the second."""

from tests.tools.shown.lesson_code import cell_from, definitions, run_code


def test_clip_factor_worked_passes_and_a_factor_ignoring_max_norm_fails():
    """Does the worked my_clip_factor pass at max_norm 1 and 0.25, and min(1, 1 / n), right at
    max_norm 1 only, fail at 0.25?"""
    checker = cell_from("12_surgery", "for max_norm in (1.0, 0.25):")
    worked = definitions("12_surgery", "my_clip_factor")
    rows = [line for line in run_code(checker, worked) if "row norm" in line]
    assert len(rows) == 14 and all(line.endswith("✓") for line in rows), rows
    ignoring = {**worked, "my_clip_factor": lambda norms, max_norm: (1 / norms).clamp(max=1)}
    lines = run_code(checker, ignoring)
    at_1, at_quarter = lines[1:8], lines[9:]
    assert all(line.endswith("✓") for line in at_1), lines
    assert any(line.endswith("✗") for line in at_quarter), lines
