"""Course roots with lessons already released, for the tests that grade: every lesson is
released once per test run (one nbgrader start-up), and each test gets a copy holding only the
lessons it asks for, as if ``grader.instructor.release(root, lessons)`` had made it."""

import json
import shutil
from pathlib import Path

from nbgrader.api import Gradebook

from grader.gradebook import db_url
from grader.instructor import SOURCES, release
from grader.lessons import lesson_names
from grader.releases import HISTORY
from tests.built_once import built_once


def every_lesson_released(tmp_path_factory) -> Path:
    """A course root in which every lesson is released: one per test run, never changed."""
    return built_once(tmp_path_factory, "released-course",
                      lambda folder: release(folder, lesson_names()))


def released_root(tmp_path_factory, target: Path, lessons: list[str]) -> Path:
    """``target``, a course root in which exactly ``lessons`` are released."""
    every = every_lesson_released(tmp_path_factory)
    others = set(lesson_names()) - set(lessons)
    shutil.copytree(every, target, dirs_exist_ok=True,
                    ignore=lambda folder, names: [name for name in names if name in others])
    with Gradebook(db_url(target)) as gradebook:
        for lesson in others:
            gradebook.remove_assignment(lesson)
    for record in (SOURCES, HISTORY):
        path = target / record
        kept = {lesson: value for lesson, value in json.loads(path.read_text()).items()
                if lesson in lessons}
        path.write_text(json.dumps(kept, indent=1, sort_keys=True))
    return target
