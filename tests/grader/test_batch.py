"""Parallel, resumable batches: worker processes execute, this process alone writes the
gradebook, a rerun grades only new, changed or failed submissions, and the same jobs run on a
Dask cluster."""

import io
import json
import re
from pathlib import Path

import nbformat
import pytest
from nbgrader.api import Gradebook

from grader import batch
from grader.gradebook import db_url
from grader.ledger import LEDGER
from grader.manual import give
from grader.settings import Settings
from tools.catalogue import mistake
from tests.released import released_root
from grader.lessons import ROOT, source_notebook
from tools.submissions import solved, with_answer

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("batch")]

LESSON = "00_template"
SETTINGS = Settings(cell_timeout=30, notebook_timeout=120, memory_limit_mb=1024,
            sandbox="auto", output_limit_kb=1024, restart_limit=3)
TWO_GRADIENTS = mistake("WeightedSum", "two gradients for four inputs").answer_cell
FULL, WRONG, NONE = ({"Square": 1.0, "WeightedSum": 1.0, "Outer": 2.0},
                     {"Square": 1.0, "WeightedSum": 0.0, "Outer": 2.0},
                     {"Square": 0.0, "WeightedSum": 0.0, "Outer": 0.0})


def _submit(root: Path, student: str, notebook=None, raw: bytes | None = None) -> None:
    folder = root / "submitted" / student / LESSON
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{LESSON}.ipynb"
    path.write_bytes(raw if raw is not None else nbformat.writes(notebook).encode())


def _scores(root: Path) -> dict[str, dict[str, float]]:
    with Gradebook(db_url(root)) as gradebook:
        return {submission.student.id: {grade.name: grade.score
                                        for grade in submission.notebooks[0].grades}
                for submission in gradebook.find_assignment(LESSON).submissions}


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """A course root after a first two-worker batch of four; returns (root, notebooks, first
    summary, its progress output)."""
    root = tmp_path_factory.mktemp("batch")
    released_root(tmp_path_factory, root, [LESSON])
    released = nbformat.read(root / "release" / LESSON / f"{LESSON}.ipynb", as_version=4)
    good = solved(released, source_notebook(LESSON))
    wrong = with_answer(good, "answer_WeightedSum", TWO_GRADIENTS)
    _submit(root, "alice", good)
    _submit(root, "bob", good)
    _submit(root, "carol", wrong)
    _submit(root, "dave", raw=b"{ not a notebook")
    output = io.StringIO()
    summary = batch.autograde(root, [LESSON], workers=2, settings=SETTINGS, stream=output)
    return root, {"good": good, "wrong": wrong}, summary, output.getvalue()


def test_a_batch_grades_everyone_with_progress_and_eta(course):
    """Does one parallel batch grade all four, printing a line for each with its outcome and
    the ETA (the last one: done)?"""
    _, _, summary, output = course
    assert (summary.graded, summary.skipped, summary.failed) == (4, 0, 0)
    lines = [line for line in output.splitlines() if line.strip()]
    assert len(lines) == 4
    assert all(re.search(r"^\[\d/4\] \w+ 00_template: \d+/4 points(, [\w-]+)?; \d+ s  "
                         r"\((the rest: ETA \w+|all done)", line) for line in lines), lines
    assert lines[-1].endswith("(all done)")
    scores = dict(re.findall(r"(\w+) 00_template: (\d+/4 points(?:, [\w-]+)?)", output))
    assert scores == {"alice": "4/4 points", "bob": "4/4 points", "carol": "3/4 points",
                      "dave": "0/4 points, invalid-notebook"}


def test_the_single_writer_records_each_submission_once(course):
    """Does the gradebook hold exactly one graded submission per learner, with right scores?"""
    root = course[0]
    assert _scores(root) == {"alice": FULL, "bob": FULL, "carol": WRONG, "dave": NONE}
    assert all((root / "autograded" / s / LESSON / f"{LESSON}.ipynb").exists()
               for s in ("alice", "bob", "carol", "dave"))


def test_a_rerun_grades_only_new_changed_or_failed_submissions(course):
    """Does a second run skip everything, and a third grade only a new learner, a changed
    submission and one whose grading had failed; do points given by hand before the change
    still count, does the summary line give the statuses the skipped keep (the whole class, not
    only those graded again), and does the report say the automatic points moved under them?"""
    root, notebooks, _, _ = course
    again = batch.autograde(root, [LESSON], workers=2, settings=SETTINGS, stream=io.StringIO())
    assert (again.graded, again.skipped) == (0, 4)

    _submit(root, "erin", notebooks["good"])                 # new
    give(root, LESSON, "bob", "WeightedSum", points=0.5)
    _submit(root, "bob", notebooks["wrong"])                  # changed
    ledger = json.loads((root / LEDGER).read_text())    # failed last time
    ledger[f"{LESSON}/alice"]["status"] = "grader-error"
    (root / LEDGER).write_text(json.dumps(ledger))
    output = io.StringIO()
    third = batch.autograde(root, [LESSON], workers=2, settings=SETTINGS, stream=output)
    assert (third.graded, third.skipped) == (3, 2)
    assert ("skipped 2 unchanged (1 invalid-notebook, 1 ok: as graded before; `make grades` lists "
            "them)") in third.line()  # dave handed in no notebook nbgrader can read
    assert sorted(re.findall(r"(\w+) 00_template:", output.getvalue())) == ["alice", "bob", "erin"]
    assert _scores(root) == {"alice": FULL, "bob": {**WRONG, "WeightedSum": 0.5},
                             "carol": WRONG, "dave": NONE, "erin": FULL}
    assert third.outvoted == [
        "bob 00_template WeightedSum: your 0.5 by hand still counts, but the automatic points "
        "changed from 1 to 0; keep it, or use the new ones: make manual LESSON=00_template "
        "STUDENT=bob EXERCISE=WeightedSum AUTOMATIC=1 (COMMENT= also clears your comment)"]
    assert third.outvoted[0] in third.report()
    from grader.earlier_points import earlier  # what bob's feedback page says (issue 68)

    assert earlier(root, "bob", LESSON) == {"WeightedSum"}
    assert earlier(root, "carol", LESSON) == set()


@pytest.mark.exhaustive  # a local cluster's start-up: half a minute of CI's 15; make test-all
def test_the_same_jobs_run_on_a_dask_cluster(course, tmp_path):
    """Do the per-submission jobs, sent to a local Dask cluster, grade as the local workers do?"""
    pytest.importorskip("distributed")
    root = course[0]
    summary = batch.autograde(root, [LESSON], scheduler="local", workers=2, force=True,
                              settings=SETTINGS, stream=io.StringIO())
    assert summary.failed == 0 and summary.graded == len(_scores(root))
    assert _scores(root)["carol"] == WRONG and _scores(root)["dave"] == NONE


def test_make_autograde_passes_workers():
    """Does `make autograde WORKERS=N` hand N to the batch?"""
    makefile = (ROOT / "Makefile").read_text()
    recipe = makefile.split("\nautograde:", 1)[1].split("\n\n", 1)[0]
    assert "--workers $(WORKERS)" in recipe


def test_a_report_can_leave_out_an_expected_status():
    """Does the report after a batch list each notebook worth a look, but none whose status the
    caller expected (every notebook of a regrade after a test cell was added)?"""
    from grader.batch import Summary

    summary = Summary(flagged=[("ana", "00_template", "00_template", "added-test-cell", "added"),
                               ("ben", "00_template", "00_template", "timeout", "a loop")])
    assert summary.report().count("\n") == 1
    assert summary.report(expected=("added-test-cell",)) == (
        "  ben 00_template/00_template: timeout: a loop")
    pasted = ("the notebook had no nbgrader cell metadata (answers pasted into a new notebook, or "
              "a copy of the solutions?): matched 3 of 3 answer cells to the lesson's by their "
              "code, put back the read-only and test cells it lacked, and graded it")
    summary.flagged[1] = ("ben", "00_template", "00_template", "no-nbgrader-metadata", pasted)
    assert summary.report(expected=("added-test-cell",)).endswith(
        "and graded it")  # a long reason keeps what happened (its end), its middle cut


def test_a_test_cell_added_later_is_a_note_not_a_status():
    """Is a notebook handed in before a test cell was added "ok" (or its own faults' status),
    never listed as worth a look for it, and the note said once per lesson, as `make grades`
    says it?"""
    from grader.batch import Summary, _own_status
    from grader.faults import Fault

    added = Fault("added-test-cell", "test cell extra was added ...", "extra")
    assert _own_status([added]) == "ok"
    assert _own_status([added, Fault("timeout", "a loop", "answer_Square")]) == "timeout"
    summary = Summary(noted=[("ana", "00_template", "00_template", "added-test-cell", "extra"),
                             ("ben", "00_template", "00_template", "added-test-cell", "extra")],
                      flagged=[("ben", "00_template", "00_template", "timeout", "a loop")])
    assert summary.report().splitlines() == [
        "00_template: test cell extra added and graded in 2 notebooks handed in before it (a "
        "note in their reason; their status is their own)",
        "  ben 00_template/00_template: timeout: a loop"]


def test_the_added_cells_note_counts_a_late_copy_apart_from_those_handed_in_before():
    """Trial 82: a resubmission handed in after the cell was added, from a copy fetched before,
    was counted among the notebooks "handed in before it". Do `make autograde` and `make
    grades` say how many were handed in before and how many after from an earlier copy, as
    each notebook's reason does?"""
    from grader.batch import Summary
    from grader.faults import Fault, copied_before
    from grader.grades_csv import NOTED, status_report

    late = Fault("added-test-cell", "test cell extra was added to the lesson on 2026-01-05 "
                 "09:00:00 UTC, after the release this notebook was made from (it never held "
                 "the cell; handed in on 2026-01-06 09:00:00 UTC): put it in after its answer "
                 "and graded it", "extra")
    early = Fault("added-test-cell", "test cell extra was added to the lesson on 2026-01-05 "
                  "09:00:00 UTC, after this notebook was handed in: put it in after its answer "
                  "and graded it", "extra")
    assert copied_before(late) and not copied_before(early)
    students = {"ana": early, "ben": early, "erin": late}
    said = ("00_template: test cell extra added and graded in 3 notebooks that never held it: "
            "2 handed in before it, 1 after it was added, from a copy fetched before (a note in "
            "their reason; their status is their own)")
    assert Summary(noted=[(student, "00_template", "00_template", fault.kind, fault.cell,
                           copied_before(fault))
                          for student, fault in students.items()]).report() == said
    rows = [{"assignment": "00_template", "student_id": student, "notebook": "00_template",
             "status": "ok", "reason": "", NOTED: [(fault.kind, fault.cell, copied_before(fault))]}
            for student, fault in students.items()]
    assert status_report(rows).splitlines()[1] == said
    assert status_report(rows[2:]).splitlines()[1] == (
        "00_template: test cell extra added and graded in 1 notebook handed in after it was "
        "added, from a copy fetched before (a note in their reason; their status is their own)")


def test_autograde_and_grades_say_the_added_cells_note_in_one_wording():
    """Do `make autograde` (a regrade) and `make grades` word the note on test cells added after
    hand-in alike, "before them" for several cells (issue 68: one said "before it")?"""
    from grader.batch import Summary
    from grader.grades_csv import NOTED, status_report

    noted = [(student, "12_surgery", "12_surgery", "added-test-cell", cell)
             for student in ("carol", "dave") for cell in ("MyTanh", "reversal_sanity")]
    said = ("12_surgery: test cells MyTanh, reversal_sanity added and graded in 2 notebooks "
            "handed in before them (a note in their reason; their status is their own)")
    assert Summary(noted=noted).report() == said
    rows = [{"assignment": "12_surgery", "student_id": student, "notebook": "12_surgery",
             "status": "ok", "reason": "", NOTED: [("added-test-cell", "MyTanh"),
                                                   ("added-test-cell", "reversal_sanity")]}
            for student in ("carol", "dave")]
    assert status_report(rows).splitlines()[1] == said


def test_a_changed_release_is_said_once_before_its_submissions_are_regraded(tmp_path, monkeypatch):
    """Instructor trial 2: after a test cell was edited, `make autograde` regraded every
    submission of the lesson without saying why. Does it say, in one line, which lessons'
    release changed since their submissions were graded; and nothing where it did not?"""
    import contextlib

    from grader.ledger import Ledger, release_of

    for student in ("alice", "bob"):
        folder = tmp_path / "submitted" / student / "03_ste"
        folder.mkdir(parents=True)
        (folder / "03_ste.ipynb").write_text("{}")
    ledger = Ledger(tmp_path)
    for student in ("alice", "bob"):
        ledger.record(student, "03_ste", {"digest": "old", "status": "ok",
                                          "release": release_of({"cells": "before"})})
    monkeypatch.setattr(batch, "_kernel_factory", lambda settings: contextlib.nullcontext())
    monkeypatch.setattr(batch, "lesson_references", lambda root, lesson: {"cells": "after"})
    monkeypatch.setattr(batch, "GradebookWriter", lambda root: None)
    monkeypatch.setattr(batch, "_grade", lambda *args, **kwargs: None)
    said = io.StringIO()
    summary = batch.autograde(tmp_path, ["03_ste"], workers=1, stream=said, each=False)
    assert summary.released_again == ["03_ste"]
    assert said.getvalue().count("\n") == 1 and said.getvalue().startswith(
        "the release of 03_ste changed since its submissions were graded (a test cell edited or "
        "added): every submission of it is regraded")
    monkeypatch.setattr(batch, "lesson_references", lambda root, lesson: {"cells": "before"})
    quiet = io.StringIO()
    assert batch.autograde(tmp_path, ["03_ste"], workers=1, stream=quiet,
                           each=False).released_again == []
    assert "release" not in quiet.getvalue()
