"""grader.releases: what a regrade says of the manual grades and comments it kept, and the tag
a release gives the test cells an instructor added."""

import nbformat

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
