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


def test_clip_factor_checker_shows_pythons_min_in_one_line_per_max_norm():
    """Does min(1, max_norm / norms), which raises on a tensor, get one ✗ line per max_norm
    asking for an entrywise op, instead of stopping Run All with a traceback?"""
    checker = cell_from("12_surgery", "for max_norm in (1.0, 0.25):")
    worked = definitions("12_surgery", "my_clip_factor")
    lines = run_code(checker, {**worked, "my_clip_factor":
                               lambda norms, max_norm: min(1, max_norm / norms)})
    assert len(lines) == 2 and all("✗ raises RuntimeError" in line and "entry by entry" in line
                                   for line in lines), lines


def test_sample_norms_checker_passes_the_worked_answer_and_shows_a_shape_slip_in_one_line():
    """Does the worked my_sample_norms get ✓ for all six samples, and norms of shape (N, 1) one
    ✗ line naming the error?"""
    checker = cell_from("12_surgery", "def sample_loss")
    worked = definitions("12_surgery", "my_sample_norms")
    lines = run_code(checker, dict(worked))
    assert len(lines) == 6 and all(line.endswith("✓") for line in lines), lines
    column = lambda x, g: (g.norm(dim=1) * x.norm(dim=1))[:, None]  # noqa: E731
    lines = run_code(checker, {**worked, "my_sample_norms": column})
    assert len(lines) == 1 and lines[0].startswith("✗ raises RuntimeError"), lines
