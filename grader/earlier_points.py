"""Points by hand given for an earlier submission: a regrade (a resubmission) changed the
automatic points under them, and the instructor has not decided since (``make manual`` POINTS=
or AUTOMATIC=1 for the exercise). `make autograde` says so to the instructor
(``manual.outvoted``); the record here lets the learner's feedback page say that those points
were given for an earlier submission, beside the new result. Kept in
``.autograder/earlier_hand_points.json``: "lesson/student" -> exercises.

A comment is about the submission it was given on: one given before a resubmission (a new
hand-in time, or automatic points a regrade changed under it) is recorded, with its text, in
``.autograder/earlier_comments.json`` ("lesson/student" -> exercise -> comment), and the
feedback page and grades.csv label it "on an earlier submission" while it reads the same: a new
comment (``make manual`` COMMENT=, or the formgrader) is about the submission graded now.
Deciding the points (POINTS= or AUTOMATIC=1) keeps the comment, and its label."""

import json
from pathlib import Path

from .ledger import STATE

EARLIER = f"{STATE}/earlier_hand_points.json"
EARLIER_COMMENTS = f"{STATE}/earlier_comments.json"


def _earlier_record(root: Path, kept: str = EARLIER) -> dict[str, list[str]]:
    try:
        found = json.loads((root / kept).read_text())
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def _write_earlier(root: Path, record: dict) -> None:
    path = root / EARLIER
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({key: sorted(set(names)) for key, names in sorted(record.items())
                                if names}, indent=1))


def earlier(root: Path, student: str, lesson: str) -> set[str]:
    """The exercises of ``student``'s ``lesson`` whose points by hand were given for an earlier
    submission (a regrade since changed the automatic points under them)."""
    return set(_earlier_record(root).get(f"{lesson}/{student}", []))


def note_earlier(root: Path, student: str, lesson: str, before: dict, after: dict) -> None:
    """Record the exercises ``outvoted`` names (points by hand over automatic points a regrade
    just changed), until the instructor decides again for them."""
    changed = [exercise for exercise, (_, auto) in after.items()
               if exercise in before and before[exercise][1] != auto]
    if changed:
        record = _earlier_record(root)
        key = f"{lesson}/{student}"
        record[key] = [*record.get(key, []), *changed]
        _write_earlier(root, record)


def forget_earlier(root: Path, student: str, lesson: str, exercises) -> None:
    """The instructor decided the points of ``exercises`` for the submission graded now."""
    record = _earlier_record(root)
    key = f"{lesson}/{student}"
    if set(record.get(key, [])) & set(exercises):
        record[key] = [name for name in record[key] if name not in set(exercises)]
        _write_earlier(root, record)


def earlier_comments(root: Path, student: str, lesson: str) -> dict[str, str]:
    """The comments of ``student``'s ``lesson`` given on an earlier submission
    (``note_earlier_comments``): exercise -> the comment as it was then. A comment is labelled
    so while it reads the same: one changed since (``make manual`` COMMENT=, or the formgrader)
    is about the submission graded now."""
    found = _earlier_record(root, EARLIER_COMMENTS).get(f"{lesson}/{student}", {})
    return {exercise: text for exercise, text in found.items() if isinstance(text, str)} \
        if isinstance(found, dict) else {}


def note_earlier_comments(root: Path, student: str, lesson: str, before, after) -> None:
    """Record the comments (in ``before`` and ``after``, ``manual.HandMarks`` read around a
    regrade) given on an earlier submission: the regrade graded a new hand-in (another time),
    or changed the automatic points under the comment."""
    resubmitted = before.timestamp != after.timestamp
    changed = {exercise: text for exercise, (auto, text) in after.comments.items()
               if exercise in before.comments and (resubmitted
                                                   or before.comments[exercise][0] != auto)}
    if changed:
        record = _earlier_record(root, EARLIER_COMMENTS)
        key = f"{lesson}/{student}"
        record[key] = {**(record.get(key) if isinstance(record.get(key), dict) else {}),
                       **changed}
        path = root / EARLIER_COMMENTS
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(record, indent=1, sort_keys=True))
