"""A lesson's release history and its safe re-release under existing grades.

``.autograder/releases.json`` keeps when each test cell was first released, so that a submission
handed in before a test cell existed is not blamed for deleting it. nbgrader will not add or remove
the test or answer cells of a lesson that has submissions in the gradebook; ``rerelease`` does it
the way an instructor would by hand, without losing anything: it copies the gradebook aside, keeps
the due date and every manual score, extra credit and comment, removes and releases the lesson
again, and hands it back to be regraded from the submitted folders.
"""

import json
import shutil
import time
import warnings
from collections import Counter
from pathlib import Path

import nbformat
from nbformat.warnings import MissingIDFieldWarning
from nbgrader.api import Gradebook, MissingEntry
from nbgrader.utils import parse_utc

from .ledger import STATE
from .lessons import RUN_ON
from .notebook_format import grade_id, is_test_cell

HISTORY = f"{STATE}/releases.json"
CHANGED_CELLS = "Cannot add or remove cells"
TIME_FORMAT = "%Y-%m-%d %H:%M:%S"
RELEASE_STAMP = "release"  # notebook metadata["autograder"][RELEASE_STAMP]: what the release held


def tag_test_cells(source: Path) -> list[str]:
    """Give each test cell of the source notebook at ``source`` that lacks it the tag every
    course test cell carries (``lessons.RUN_ON``, ``raises-exception``), so that a learner's Run
    All goes on past a test cell the instructor added while an exercise is unsolved; the
    cells tagged. A cell without the ``id`` nbformat 4.5 requires (cell metadata written by
    hand) is given one, as JupyterLab would, so that nbgrader does not warn of it (the notebook
    is rewritten only if a cell was tagged or given an id)."""
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always", MissingIDFieldWarning)
        notebook = nbformat.read(source, as_version=4)  # gives each cell without one an id
    without_id = any(issubclass(warning.category, MissingIDFieldWarning) for warning in said)
    tagged = []
    for cell in notebook.cells:
        tags = cell.metadata.get("tags", [])
        if is_test_cell(cell) and RUN_ON not in tags:
            cell.metadata["tags"] = [*tags, RUN_ON]
            tagged.append(grade_id(cell))
    if tagged or without_id:
        nbformat.write(notebook, source)
    return tagged


def tagged_line(lesson: str, tagged: list[str]) -> str:
    """What ``make release`` says of the test cells it tagged."""
    cells = ", ".join(tagged)
    many = len(tagged) > 1
    return (f"{lesson}: gave test cell{'s' if many else ''} {cells} the tag {RUN_ON}, as the "
            f"course's own test cells have it, so a learner's Run All goes on past "
            f"{'them' if many else 'it'} while an exercise is unsolved")


def db_url(root: Path) -> str:
    return f"sqlite:///{root / 'gradebook.db'}"


def now() -> str:
    return time.strftime(TIME_FORMAT, time.gmtime())


def stamp(path: Path, when: str) -> None:
    """Write into the released notebook at ``path`` which test cells this release holds
    (metadata ``autograder.release``), so that a learner's copy says which release it was made
    from: a copy of an earlier release that lacks a test cell added since never had it
    (``intake.never_had``), however late it is handed in."""
    released = nbformat.read(path, as_version=4)
    own = released.metadata.get("autograder")
    own = dict(own) if isinstance(own, dict) else {}
    own[RELEASE_STAMP] = {"released": when, "test_cells": [
        grade_id(cell) for cell in released.cells if is_test_cell(cell)]}
    released.metadata["autograder"] = own
    nbformat.write(released, path)


def record(root: Path, lesson: str) -> None:
    """Note the first release time of each test cell of ``lesson`` as released now, and stamp
    each released notebook with the test cells it holds."""
    path = root / HISTORY
    history = json.loads(path.read_text()) if path.exists() else {}
    cells = history.setdefault(lesson, {})
    when = now()
    for notebook in sorted((root / "release" / lesson).glob("*.ipynb")):
        stamp(notebook, when)
    released = nbformat.read(root / "release" / lesson / f"{lesson}.ipynb", as_version=4)
    for cell in released.cells:
        if is_test_cell(cell):
            cells.setdefault(grade_id(cell), when)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(history, indent=1, sort_keys=True))


def added_later(root: Path, lesson: str) -> dict[str, str]:
    """{test cell: when it was released} for the test cells added after the lesson's first
    release (UTC, ``TIME_FORMAT``)."""
    path = root / HISTORY
    cells = json.loads(path.read_text()).get(lesson, {}) if path.exists() else {}
    first = min(cells.values(), default="")
    return {name: when for name, when in cells.items() if when > first}


def submitted_at(files: dict[str, bytes]) -> str | None:
    """When a submission was handed in, from nbgrader's timestamp.txt (UTC), if it has one."""
    try:
        return parse_utc(files["timestamp.txt"].decode().strip()).strftime(TIME_FORMAT)
    except (KeyError, ValueError, UnicodeDecodeError, TypeError):
        return None


def submission_count(root: Path, lesson: str) -> int:
    with Gradebook(db_url(root)) as gradebook:
        try:
            return len(gradebook.find_assignment(lesson).submissions)
        except MissingEntry:
            return 0


def _marks(root: Path, lesson: str) -> tuple[object, list[tuple]]:
    """The lesson's due date and every mark an instructor gave by hand."""
    marks = []
    with Gradebook(db_url(root)) as gradebook:
        assignment = gradebook.find_assignment(lesson)
        for submission in assignment.submissions:
            for notebook in submission.notebooks:
                key = (notebook.name, lesson, submission.student.id)
                marks += [("grade", grade.name, key, {"manual_score": grade.manual_score,
                                                        "extra_credit": grade.extra_credit})
                          for grade in notebook.grades
                          if grade.manual_score is not None or grade.extra_credit]
                marks += [("comment", comment.name, key,
                           {"manual_comment": comment.manual_comment})
                          for comment in notebook.comments if comment.manual_comment]
        return assignment.duedate, marks


def restore_marks(root: Path, marks: list[tuple]) -> Counter:
    """Put the hand-given marks back where their cell still exists; how many of each kind
    ("grade", "comment") were."""
    kept: Counter = Counter()
    with Gradebook(db_url(root)) as gradebook:
        for kind, name, key, values in marks:
            finder = gradebook.find_grade if kind == "grade" else gradebook.find_comment
            try:
                item = finder(name, *key)
            except MissingEntry:
                continue
            for attribute, value in values.items():
                setattr(item, attribute, value)
            kept[kind] += 1
        gradebook.db.commit()
    return kept


def _counted(counts: Counter) -> str:
    """'2 manual grades and 1 comment': each kind that has any, in words."""
    words = [f"{counts[kind]} {noun}{'' if counts[kind] == 1 else 's'}"
             for kind, noun in (("grade", "manual grade"), ("comment", "comment")) if counts[kind]]
    return " and ".join(words)


def kept_marks_line(kept: Counter, total: Counter) -> str:
    """What a regrade says of the manual grades and comments it put back, each kind counted."""
    if not sum(total.values()):
        return "no manual grades or comments to keep"
    if kept == total:
        return f"kept {'all ' if sum(total.values()) > 1 else ''}{_counted(total)}"
    lost = sum(total.values()) - sum(kept.values())
    return (f"kept {sum(kept.values())} of {sum(total.values())} ({_counted(total)}); {lost} "
            f"{'was' if lost == 1 else 'were'} on cells the lesson no longer has (the gradebook "
            f"copy above still holds {'it' if lost == 1 else 'them'})")


def remove_for_rerelease(root: Path, lesson: str, nbgrader) -> tuple[Path, list[tuple]]:
    """Copy the gradebook aside, remove ``lesson`` from it (its due date kept); return the copy
    and the hand-given marks to put back once it is regraded."""
    backup = root / STATE / f"gradebook-before-rerelease-{lesson}-{time.strftime('%Y%m%d-%H%M%S')}.db"
    backup.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(root / "gradebook.db", backup)
    duedate, marks = _marks(root, lesson)
    nbgrader("db", "assignment", "remove", lesson, "--force", "--log-level=ERROR", root=root,
             capture=True)
    with Gradebook(db_url(root)) as gradebook:
        gradebook.update_or_create_assignment(lesson, duedate=duedate)
    return backup, marks
