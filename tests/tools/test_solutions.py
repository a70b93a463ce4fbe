"""tools.solutions: the lessons' answer cells, parsed once per version of the lesson file."""

import shutil

from tools import solutions


def test_a_lesson_is_parsed_again_once_its_file_changes(tmp_path, monkeypatch):
    """Does ``cells`` give a lesson's cells from its file as it is now: the same list while
    the file is unchanged (parsed once), the edited cells after an edit?"""
    shutil.copy(solutions.LESSONS / "00_template.py", tmp_path / "00_template.py")
    monkeypatch.setattr(solutions, "LESSONS", tmp_path)
    first = solutions.cells("00_template")
    assert solutions.cells("00_template") == first
    lesson = tmp_path / "00_template.py"
    lesson.write_text(lesson.read_text().replace("class Square(", "class Square2("))
    assert any("class Square2(" in cell for cell in solutions.cells("00_template"))
