"""grader.feedback's status cell as a learner reads it: one short line in a learner's words,
the instructor's account of how it was done left to the formgrader and the grades CSV."""

from nbformat.v4 import new_notebook

from grader.faults import STATUSES, Fault
from grader.feedback import FOR_LEARNERS, NOT_FOR_LEARNERS, LearnerStatus, status_cell

ADDED = Fault("added-test-cell", "test cell extra was added to the lesson on 2026-01-02 UTC, "
              "after this notebook was handed in (no timestamp.txt: date unknown): put it in "
              "after its answer and graded it", "extra")
PASTED = Fault("no-nbgrader-metadata", "the notebook had no nbgrader cell metadata (answers "
               "pasted into a new notebook, or a copy of the solutions?): matched 3 of 3 answer "
               "cells to the lesson's by their code, put back the read-only and test cells it "
               "lacked, and graded it")


def _learner_sees(*faults: Fault) -> str:
    notebook = new_notebook(cells=[status_cell(list(faults))])
    notebook, _ = LearnerStatus().preprocess(notebook, {})
    return "\n".join(cell.source for cell in notebook.cells)


def test_a_learner_reads_one_short_line_in_their_words():
    """Does the learner's feedback say in one line, once, what happened to their notebook,
    without the instructor's account (no timestamp, where the cell was put, what was
    matched)?"""
    added = _learner_sees(ADDED)  # a routine note: the status stays ok, as in grades.csv
    assert added == ("**Grading status: `ok`**: Graded normally.\n\n- A test was added to the "
                     "lesson after you fetched your copy of it: it was graded too (extra).")
    pasted = _learner_sees(PASTED)
    assert len(pasted.splitlines()) == 1 and "matched 3 of 3" not in pasted
    assert pasted.count("pasted into a new notebook") == 1


def test_each_kind_of_fault_is_a_line_of_its_own():
    """With several kinds of fault, is the most serious the status and each other kind one line
    more, the instructor-only ones left out?"""
    shown = _learner_sees(ADDED, Fault("timeout", "answer_Outer ran past the 60 s limit",
                                       "answer_Outer"),
                          Fault("suspicious-code", "line 3 reads the verdict key"))
    assert shown.splitlines()[0] == ("**Grading status: `timeout`**: your answer to Outer ran "
                                     "past the 60 s limit.")  # which cell, and the limit (issue 48)
    assert shown.splitlines()[-1] == ("- A test was added to the lesson after you fetched your "
                                      "copy of it: it was graded too (extra).")
    assert "verdict key" not in shown
    assert _learner_sees(Fault("suspicious-code", "line 3 reads the verdict key")) == ""


def test_a_line_that_ends_in_a_question_gets_no_full_stop_after_it():
    """Does the unanswered notebook's line end "...worked in?", not "...worked in?." (issue
    48), while the other lines still end with a full stop?"""
    shown = _learner_sees(Fault("unanswered", "every answer cell (4) is still the stub"))
    assert shown.endswith("did you hand in the notebook you worked in?")
    assert _learner_sees(ADDED).endswith("it was graded too (extra).")


def test_a_timeout_names_the_test_and_the_limit_to_the_learner():
    """Does a learner whose test ran past the limit read which one and the limit, as
    grades.csv's reason says it (issue 48: it said only "a cell ran past the time limit")?"""
    shown = _learner_sees(Fault("timeout", "ClipGradientNorm ran past the 30 s limit and was "
                                "interrupted (an endless loop?)", "ClipGradientNorm"))
    assert shown == ("**Grading status: `timeout`**: ClipGradientNorm ran past the 30 s limit "
                     "and was interrupted (an endless loop?).")


def test_every_status_a_learner_can_read_has_their_wording():
    """Has every status a learner's feedback can show a line written for learners?"""
    assert set(STATUSES) - set(FOR_LEARNERS) == {"ok"} | NOT_FOR_LEARNERS


def test_a_learner_is_told_which_answer_was_not_found():
    """A pasted notebook that lacked an answer: does the learner's line say that no answer was
    found for it and that its stub was graded (0 points), not only that the notebook was
    pasted?"""
    missing = Fault("no-nbgrader-metadata", PASTED.message + "; found no answer for "
                    "answer_SoftThreshold", "answer_SoftThreshold")
    shown = _learner_sees(missing)
    assert shown.endswith("found by their code and graded; no answer was found for "
                          "SoftThreshold, so the lesson's unanswered stub was graded in "
                          "its place (0 points).")
    assert "answer_" not in shown  # a grade id the learner never sees


def test_every_status_is_named_in_the_readme():
    """Does the docs' account of grades.csv name every status a notebook can have (the
    answer cells' syntax-error and unanswered too)?"""
    from grader.lessons import ROOT

    grading = (ROOT / "docs" / "grading.md").read_text()
    assert [status for status in STATUSES if f"`{status}`" not in grading] == []


def test_the_status_cell_is_headed_by_the_status_grades_csv_gives():
    """After a regrade that added a test cell, is the formgrader's status cell headed by the
    notebook's own status (as in grades.csv), the note listed after its faults?"""
    alone = status_cell([ADDED]).source
    assert alone.startswith("**Grading status: `ok`**: graded normally.")
    assert alone.splitlines()[-1].startswith("- test cell extra was added")
    looped = Fault("timeout", "checkpoint_sequential ran past the 60 s limit and was interrupted "
                   "(an endless loop?)", "checkpoint_sequential")
    out_of_time = Fault("notebook-timeout", "the notebook used up its 240 s before cell 57",
                        'cell 57 "x = 1"')
    items = status_cell([ADDED, out_of_time, looped]).source.splitlines()
    assert items[0].startswith("**Grading status: `notebook-timeout`**")
    assert [item.replace("\\_", "_")[:24] for item in items[2:]] == ["- checkpoint_sequential ",
                                                  "- the notebook used up i",
                                                  "- test cell extra was ad"]


def test_feedback_pages_show_no_run_counts():
    """Does a feedback page number no cell ("In [1]" where grading ran a cell, "In [ ]" where it
    did not): the same look on every page, whichever cells grading needed?"""
    from pathlib import Path

    import nbgrader
    from nbconvert.exporters import HTMLExporter
    from nbformat.v4 import new_code_cell, new_output
    from traitlets.config import Config

    from grader.course_config import configure

    config = Config()
    configure(config)
    formgrader = Path(nbgrader.__file__).parent / "server_extensions" / "formgrader"
    config.HTMLExporter.template_name = "feedback"  # as nbgrader's GenerateFeedback sets it
    config.HTMLExporter.extra_template_basedirs = [str(formgrader / "templates")]
    config.HTMLExporter.extra_template_paths = [
        str(formgrader / "static" / "node_modules" / "bootstrap" / "dist" / "css")]
    ran = new_code_cell("1 + 1", execution_count=3, outputs=[new_output(
        "execute_result", data={"text/plain": "2"}, execution_count=3)])
    page, _ = HTMLExporter(config=config).from_notebook_node(
        new_notebook(cells=[ran, new_code_cell("x = 1")]),
        resources={"nbgrader": {"notebook": "00_demo", "score": 1, "max_score": 1,
                               "late_penalty": 0}})
    assert page.count('<div class="input">') == 2  # both cells shown, neither numbered:
    assert not any(prompt in page for prompt in ("In\xa0[", "In&nbsp;[", "Out["))


def test_the_readme_tables_the_statuses_most_serious_first():
    """Does the docs' table of grades.csv's statuses give every status, one row each, most
    serious first as a notebook's status is chosen (a table, not the one long sentence issue 48
    found slow to search)?"""
    import re

    from grader.lessons import ROOT

    grading = (ROOT / "docs" / "grading.md").read_text()
    section = grading[grading.index("`grades.csv` has nbgrader's export columns"):]
    rows = re.findall(r"^\| `([a-z-]+)` \| ", section.split("\n\n\n")[0].split("\n\nA fault")[0],
                      re.MULTILINE)
    table = [status for status in rows if status in STATUSES]
    assert table == list(STATUSES)


def test_a_clean_notebook_reads_the_same_status_line_as_an_ok_one_with_a_note():
    """Issue 68: a clean `ok` page showed no status line while an `ok` page with a note showed
    "Grading status: ok: Graded normally.". Does a graded notebook without a status cell, and
    one whose only fault is for the instructor, read that same line (the learner cannot tell
    them apart), and one with a note that line and the note?"""
    from nbformat.v4 import new_code_cell

    test = new_code_cell("self_check('Outer', Outer)", metadata={"nbgrader": {
        "grade_id": "Outer", "grade": True, "solution": False, "locked": True, "points": 1}})
    line = "**Grading status: `ok`**: Graded normally."
    for cells in ([test], [status_cell([Fault("suspicious-code", "line 3 reads the key")]), test]):
        notebook, _ = LearnerStatus().preprocess(new_notebook(cells=cells), {})
        assert [cell.source for cell in notebook.cells][0] == line
        assert "key" not in notebook.cells[0].source
    notebook, _ = LearnerStatus().preprocess(new_notebook(cells=[status_cell([ADDED]), test]), {})
    assert notebook.cells[0].source.startswith(line + "\n\n- A test was added")
