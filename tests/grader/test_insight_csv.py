"""insight.csv as ``grader.insight_report.csv_rows`` writes it: one meaning per column, sections
worded as the terminal and the page word them."""

import pytest

from grader.insight import class_insight
from grader.insight_report import csv_rows, lesson_html, text_report
from tests.grader.recorded import LESSON, failed, passed, record, release


@pytest.fixture
def root(tmp_path):
    release(tmp_path)
    record(tmp_path, "ana-ix", {"Shift": passed(), "Scale": passed()})
    record(tmp_path, "ben-ix", {"Shift": failed("Shift/forgets-offset", "Shift forgets b"),
                                "Scale": passed()})
    record(tmp_path, "cam-ix", {"Shift": failed("Shift/forgets-offset", "Shift forgets b"),
                                "Scale": failed("unproven:wrong-value", "Scale's output is "
                                                "wrong")})
    record(tmp_path, "dee-ix", {"Shift": failed("not-implemented"), "Scale": failed(
        "not-implemented")})
    return tmp_path


def test_the_csv_words_sections_as_the_page_and_every_named_mistake_is_taught_in(
        root, monkeypatch):
    """Does the CSV word an exercise's section as the terminal and page do ("✎ Exercise 2 ·
    `Scale` (transfer)", not the heading "✎ Transfer exercise · `Scale`"); do the terminal and
    the page give "taught in" for every named mistake (its exercise's own section, said so,
    where no other section is listed for it: issue 48 found it for 2 of 17), and none for a
    group without a name; does the terminal leave out the exercise's own section, which the
    exercise's line names in brackets (an instructor read it under 15 groups)?"""
    import grader.insight

    path = root / "release" / LESSON / f"{LESSON}.ipynb"
    path.write_text(path.read_text().replace("Exercise 2 · `Scale`",
                                             "Transfer exercise · `Scale`"))
    found, skipped = class_insight(root, [LESSON])
    label = "✎ Exercise 2 · `Scale` (transfer)"
    sections = {row["section"] for row in csv_rows(found) if row["exercise"] == "Scale"
                and row["result"] != "full-marks"}
    assert sections == {label} and f"[{label}]" in text_report(found, skipped)
    assert "taught in:" not in text_report(found, skipped)  # its own: on the exercise's line
    page = lesson_html(found[0], None)
    assert "<th>taught in</th>" in page
    assert page.count("<td>✎ Exercise 1 · <code>Shift</code> (the exercise&#x27;s own "
                      "section)</td>") == 1
    monkeypatch.setitem(grader.insight.SECTIONS, "Shift/forgets-offset", "Background 0")
    page = lesson_html(class_insight(root, [LESSON])[0][0], None)
    assert "<th>taught in</th>" in page and "own section" not in page
    assert page.count("<td>Background 0</td>") == 1 and page.count("<td></td>") == 3


def test_each_csv_column_has_one_meaning(root, monkeypatch):
    """Is `section` the exercise's own section on every row of it (full marks, failures,
    not handed in), so that the CSV can be grouped by it, and `taught_in` the section that
    teaches a named mistake's point, empty on every other row (issue 48: one column held
    both)?"""
    import grader.insight

    record(root, "eve-ix", {})  # handed nothing of the lesson in: not-submitted rows
    (root / "submitted" / "fay-ix").mkdir(parents=True)
    monkeypatch.setitem(grader.insight.SECTIONS, "Shift/forgets-offset", "Background 0")
    rows = [row for row in csv_rows(class_insight(root, [LESSON])[0]) if row["exercise"] ==
            "Shift"]
    assert {row["result"] for row in rows} >= {"full-marks", "failed", "not-submitted"}
    assert {row.get("section") for row in rows} == {"✎ Exercise 1 · `Shift`"}
    assert {row["student_id"]: row.get("taught_in", "") for row in rows if row.get(
        "taught_in")} == {"ben-ix": "Background 0", "cam-ix": "Background 0"}
