"""grader.lessons: the course's lessons, by the ids the commands take."""

import re

from grader.lessons import ROOT, lesson_names


def test_the_readme_table_gives_each_lesson_id_that_lessons_takes():
    """Does the README's table of lessons give, in order, every id `LESSONS=` accepts?"""
    table = re.findall(r"^\| `(\d\d_\w+)` \|", (ROOT / "README.md").read_text(), re.MULTILINE)
    assert table == sorted(lesson_names())
