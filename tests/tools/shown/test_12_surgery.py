"""Lesson 12's predict-then-run cells and live checkers as a learner meets them."""

from tests.tools.shown.lesson_code import definitions, printed


def test_the_slopes_checker_on_an_untouched_answer_warns_of_nothing(recwarn):
    """Issue 48: on Run All of the untouched lesson, does the my_soft_threshold_slopes checker
    say only that the derivatives are not written, without matplotlib's "No artists with
    labels found to put in legend" (a legend only where lines with labels were drawn)?"""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    import torch

    from tests.tools.shown.lesson_code import code_cells, run_code

    cell = next(cell for cell in code_cells("12_surgery", learner=True)
                if "def my_soft_threshold_slopes(" in cell)
    lines = run_code(cell, {"torch": torch, "plt": plt})
    plt.close("all")
    assert lines == ["write your two derivatives into my_soft_threshold_slopes first"], lines
    assert not [w for w in recwarn if "No artists" in str(w.message)]
