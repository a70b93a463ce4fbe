"""grader.releases: what a regrade says of the manual grades and comments it kept, and the tag
a release gives the test cells an instructor added."""

from collections import Counter

import nbformat
import pytest

from grader.releases import kept_marks_line, tag_test_cells


def test_the_kept_marks_are_counted_in_words_that_fit():
    """Does a regrade say it kept every mark where none was lost, how many were lost where
    some were (and where they still are), and that there were none where there were none?"""
    one_each = Counter(grade=1, comment=1)
    # trial 82: "kept all 1 manual grade and 1 comment"
    assert kept_marks_line(one_each, one_each) == "kept the 1 manual grade and 1 comment"
    assert kept_marks_line(Counter(grade=1), Counter(grade=1)) == "kept the 1 manual grade"
    assert kept_marks_line(Counter(grade=3), Counter(grade=3)) == "kept all 3 manual grades"
    assert kept_marks_line(Counter(grade=2, comment=1), Counter(grade=2, comment=1)) == (
        "kept all 3: 2 manual grades and 1 comment")
    assert kept_marks_line(Counter(), Counter()) == "no manual grades or comments to keep"
    assert kept_marks_line(Counter(grade=2), Counter(grade=2, comment=1)) == (
        "kept 2 of 3 (2 manual grades and 1 comment); 1 was on cells the lesson no longer has "
        "(the gradebook copy above still holds it)")
    assert kept_marks_line(Counter(grade=2), Counter(grade=2, comment=1), copied=False) == (
        "kept 2 of 3 (2 manual grades and 1 comment); 1 was not found after the regrade")


def test_a_release_tags_only_the_test_cells_that_lack_the_tag(tmp_path):
    """Does the release tag an added test cell raises-exception (keeping its other tags), leave
    answer cells and tagged test cells alone, and leave an untouched notebook unwritten?"""
    def cell(grade_id, solution, tags):
        made = nbformat.v4.new_code_cell("pass")
        made.metadata = {"nbgrader": {"grade": not solution, "grade_id": grade_id,
                                      "solution": solution, "locked": not solution,
                                      "points": 1, "schema_version": 3}}
        if tags is not None:
            made.metadata["tags"] = tags
        return made

    path = tmp_path / "lesson.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[
        cell("answer_A", True, None), cell("A", False, ["raises-exception"]),
        cell("mine", False, None), cell("other", False, ["keep"])]), path)
    assert tag_test_cells(path) == ["mine", "other"]
    tags = [cell.metadata.get("tags") for cell in nbformat.read(path, as_version=4).cells]
    assert tags == [None, ["raises-exception"], ["raises-exception"], ["keep", "raises-exception"]]
    written = path.stat().st_mtime_ns
    assert tag_test_cells(path) == []
    assert path.stat().st_mtime_ns == written


def test_a_test_cell_written_by_hand_without_an_id_gets_one_and_no_warning(tmp_path):
    """A test cell whose metadata the instructor wrote by hand, without the cell `id` nbformat
    4.5 requires: does the release give it one, so that nbgrader reads the notebook without a
    MissingIDFieldWarning (issue 48), and leave the other cells' ids as they were?"""
    import json
    import warnings

    from nbformat.warnings import MissingIDFieldWarning

    answer = nbformat.v4.new_code_cell("pass")
    path = tmp_path / "lesson.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[answer]), path)
    saved = json.loads(path.read_text())
    saved["cells"].append({"cell_type": "code", "execution_count": None, "outputs": [],
                           "source": "assert True", "metadata": {"nbgrader": {
                               "grade": True, "solution": False, "locked": True,
                               "grade_id": "mine", "points": 1, "schema_version": 3}}})
    path.write_text(json.dumps(saved))
    assert tag_test_cells(path) == ["mine"]
    with warnings.catch_warnings():
        warnings.simplefilter("error", MissingIDFieldWarning)
        cells = nbformat.read(path, as_version=4).cells
    assert cells[0].id == answer.id and cells[1].id
    saved = json.loads(path.read_text())  # a tagged cell with no id: given one all the same
    del saved["cells"][1]["id"]
    path.write_text(json.dumps(saved))
    assert tag_test_cells(path) == [] and "id" in json.loads(path.read_text())["cells"][1]


def test_a_held_back_release_ends_with_a_line_that_says_it_is_expected():
    """Does a release that held a lesson back end with a line saying which, that the reason is
    above, and why the exit status is 1 and make adds its own Error line, so that make's
    `make: *** ... Error 1` reads as expected, not as a crash (issue 48)?"""
    from grader.instructor import refused_line

    said = refused_line(["12_surgery"])
    assert said.startswith("not released: 12_surgery (why: above). ")
    assert "(why: above; the other lessons were released)" in refused_line(["12_surgery"], 3)
    assert "Exit status 1, so that `make release && make autograde` stops here" in said
    assert "make: *** [Makefile:..: release] Error 1" in said


def test_the_readme_says_what_the_shell_sees_when_a_release_is_held_back(tmp_path):
    """`python -m grader release` exits 1 when it held a lesson back (tests/grader/test_term.py);
    does the shell see make's 2 after `make release` (here a stand-in that exits 1), as the
    instructors' guide says, rather than the 1 it used to promise?"""
    import shutil
    import subprocess

    from grader.lessons import ROOT

    if shutil.which("make") is None:
        pytest.skip("no make here")
    installed = tmp_path / "installed"  # newer than requirements.txt: make builds nothing
    installed.touch()
    done = subprocess.run(["make", "--no-print-directory", "release", "PYTHON=false",
                           f"INSTALLED={installed}", f"COURSE_ROOT={tmp_path}"], cwd=ROOT,
                          capture_output=True, text=True)
    assert done.returncode == 2 and "release] Error 1" in done.stderr
    guide = " ".join((ROOT / "docs" / "instructors.md").read_text().split())
    assert "the shell sees make's own status, 2" in guide


@pytest.mark.parametrize("written", ["2026-11-27 03:50:00.000000 UTC", "2026-11-27 03:50:00 UTC",
                                     "2026-11-27 03:50:00", "2026-11-27T04:50:00+01:00"])
def test_the_timestamp_formats_the_readme_gives_are_read(written):
    """Is a timestamp.txt in nbgrader's format, or any of the forms the README says will do,
    read as the same UTC hand-in time; and one that cannot be read as none?"""
    from grader.releases import submitted_at

    assert submitted_at({"timestamp.txt": f"{written}\n".encode()}) == "2026-11-27 03:50:00"
    assert submitted_at({"timestamp.txt": b"yesterday"}) is None


def test_the_score_line_says_how_many_points_were_given_by_hand(tmp_path, monkeypatch):
    """After a regrade that kept a manual grade, does the score line say how many of the points
    are manual ("5/9" gave no sign of it: issue 48), and say nothing more without one?"""
    import os
    import sys
    from pathlib import Path

    from nbgrader.api import Gradebook

    from grader.gradebook import score_line
    from grader.releases import db_url

    monkeypatch.setenv("PATH", os.pathsep.join([str(Path(sys.executable).parent),
                                                os.environ.get("PATH", "")]))  # alembic
    with Gradebook(db_url(tmp_path)) as gradebook:
        gradebook.add_assignment("L")
        gradebook.add_notebook("L", "L")
        for cell in ("A", "B"):
            gradebook.add_grade_cell(cell, "L", "L", max_score=2, cell_type="code")
        gradebook.add_student("bob")
        gradebook.add_submission("L", "bob")
        gradebook.find_grade("A", "L", "L", "bob").auto_score = 2
        gradebook.db.commit()
    assert score_line(tmp_path, "bob", "L") == "2/4 points"
    with Gradebook(db_url(tmp_path)) as gradebook:
        gradebook.find_grade("B", "L", "L", "bob").manual_score = 1
        gradebook.db.commit()
    assert score_line(tmp_path, "bob", "L") == "3/4 points (1 by hand)"


def test_the_tagged_line_reads_as_a_sentence():
    """Does `make release` say which cells it gave the tag, the tag named as a tag, and "them"
    for several cells (issue 68: "tagged test cells MyTanh, reversal_sanity raises-exception")?"""
    from grader.releases import tagged_line

    assert tagged_line("12_surgery", ["MyTanh", "reversal_sanity"]) == (
        "12_surgery: gave test cells MyTanh, reversal_sanity the tag raises-exception, as the "
        "course's own test cells have it, so a learner's Run All goes on past them while an "
        "exercise is unsolved")
    assert tagged_line("12_surgery", ["MyTanh"]).startswith(
        "12_surgery: gave test cell MyTanh the tag raises-exception")
