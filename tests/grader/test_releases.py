"""grader.releases: what a regrade says of the manual grades and comments it kept, and the tag
a release gives the test cells an instructor added."""

import nbformat
import pytest

from grader.releases import kept_marks_line, tag_test_cells


def test_the_kept_marks_are_counted_in_words_that_fit():
    """Does a regrade say it kept every mark where none was lost, how many were lost where
    some were (and where they still are), and that there were none where there were none?"""
    assert kept_marks_line(2, 2) == "kept all 2 manual grades and comments"
    assert kept_marks_line(1, 1) == "kept the one manual grade or comment"
    assert kept_marks_line(0, 0) == "no manual grades or comments to keep"
    assert kept_marks_line(2, 3) == ("kept 2 of 3 manual grades and comments; 1 was on cells the "
                                     "lesson no longer has (the gradebook copy above still holds "
                                     "it)")


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


def test_the_readme_says_what_the_shell_sees_when_a_release_is_held_back(tmp_path):
    """`python -m grader release` exits 1 when it held a lesson back (tests/grader/test_term.py);
    does the shell see make's 2 after `make release` (here a stand-in that exits 1), as the
    README says, rather than the 1 it used to promise?"""
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
    readme = " ".join((ROOT / "README.md").read_text().split())
    assert "the shell sees make's own status, 2" in readme


@pytest.mark.parametrize("written", ["2026-11-27 03:50:00.000000 UTC", "2026-11-27 03:50:00 UTC",
                                     "2026-11-27 03:50:00", "2026-11-27T04:50:00+01:00"])
def test_the_timestamp_formats_the_readme_gives_are_read(written):
    """Is a timestamp.txt in nbgrader's format, or any of the forms the README says will do,
    read as the same UTC hand-in time; and one that cannot be read as none?"""
    from grader.releases import submitted_at

    assert submitted_at({"timestamp.txt": f"{written}\n".encode()}) == "2026-11-27 03:50:00"
    assert submitted_at({"timestamp.txt": b"yesterday"}) is None
