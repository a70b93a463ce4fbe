"""The progress view: the learner's table, its next exercise, and a refresh that reads again."""

from autograder import progress
from widgets.progress import progress_html, progress_view


def _rows(tmp_path):
    lesson = tmp_path / "course" / "00_template"
    lesson.mkdir(parents=True)
    return lesson


def test_the_table_shows_outcomes_hints_and_the_next_exercise(tmp_path):
    """Does a failed check show its hint, a passed one a tick, and the next exercise stand out?"""
    folder = _rows(tmp_path)
    progress.record("Square", "00_template", progress.PASSED, folder=folder)
    progress.record("WeightedSum", "00_template", progress.FAILED,
                    "WeightedSum ignores grad_output <x>", folder=folder)
    html = progress_html(progress.table(folder))
    assert "1 of" in html and "✓ passed" in html
    assert "WeightedSum ignores grad_output &lt;x&gt;" in html  # escaped, never raw HTML
    assert html.index("← next") > html.index("WeightedSum")
    assert "Next: <code" in html and "in 00_template." in html


def test_refresh_reads_the_file_again(tmp_path):
    """After another self-check, does Refresh show it?"""
    folder = _rows(tmp_path)
    view = progress_view(folder)
    assert "0 of" in view.panes["table"].value
    progress.record("Square", "00_template", progress.PASSED, folder=folder)
    view.controls["refresh"].click()
    assert "1 of" in view.panes["table"].value
