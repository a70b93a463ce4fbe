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


def test_the_view_and_the_summary_name_the_same_next_exercise(tmp_path, monkeypatch):
    """Issue 48: after lesson 12 is done, with lessons 01-11 not begun, does progress_view()
    (no lesson named) point where the lesson's last cell, show_progress('12_surgery'), does:
    on from the lesson the learner worked in last, not back to the course's first exercise?"""
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    folder = tmp_path / "course" / "12_surgery"
    folder.mkdir(parents=True)
    for name in ("Square", "WeightedSum", "Outer"):
        progress.record(name, "00_template", progress.PASSED, folder=folder)
    for row in progress.table(folder):
        if row["lesson"] == "12_surgery":
            progress.record(row["exercise"], "12_surgery", progress.PASSED, folder=folder)
    named = [row["exercise"] for row in progress.table(folder, "12_surgery") if row["next"]]
    assert [row["exercise"] for row in progress.table(folder) if row["next"]] == named
    upcoming, = named
    assert f"Next: {upcoming} in 13_kernels." in progress.summary(folder, "12_surgery")
    status = progress_view(folder).panes["table"].value.rpartition("Next: ")[2]
    assert status.endswith(f">{upcoming}</code> in 13_kernels.</div>")


def test_the_time_zone_is_said_once_in_the_heading(tmp_path, monkeypatch):
    """Issue 48 (learner 57): every time read '09:40 UTC+00:00'. Is the zone said once, in the
    'when' heading ('UTC' for an offset of 0), and each time given without it; and where the
    times' zones differ, does each time keep its own?"""
    folder = _rows(tmp_path)
    monkeypatch.setenv("TZ", "UTC")
    import time
    time.tzset()
    try:
        progress.record("Square", "00_template", progress.PASSED, folder=folder)
        progress.record("Outer", "00_template", progress.FAILED, "wrong", folder=folder)
    finally:
        monkeypatch.undo()
        time.tzset()
    html = progress_html(progress.table(folder))
    assert "when (UTC)" in html and html.count("UTC") == 1, html
    rows = progress.table(folder)
    for row in rows:
        if row["exercise"] == "Outer":
            row["when"] = "2026-11-27 10:40 UTC+01:00"
    html = progress_html(rows)
    assert "when (" not in html and "10:40 UTC+01:00" in html and "UTC+00:00" in html


def test_the_view_points_to_a_lesson_skipped_at_the_course_s_start(tmp_path, monkeypatch):
    """Learner trial 82: with 01 and 02 done and 00 never opened, progress_view('02_linear')
    said 'Next: SignSTE in 03_ste'. Does it name 00's first exercise, as the summary does?"""
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    folder = tmp_path / "course" / "02_linear"
    folder.mkdir(parents=True)
    for row in progress.table(folder):
        if row["lesson"][:2] in ("01", "02"):
            progress.record(row["exercise"], row["lesson"], progress.PASSED, folder=folder)
    status = progress_view(folder, "02_linear").panes["table"].value.rpartition("Next: ")[2]
    assert status.endswith(">Square</code> in 00_template.</div>")
    assert "Next: Square in 00_template" in progress.summary(folder, "02_linear")
