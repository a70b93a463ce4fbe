"""Points by hand given for an earlier submission: a regrade (a resubmission) changed the
automatic points under them, and the instructor has not decided since (``make manual`` POINTS=
or AUTOMATIC=1 for the exercise). `make autograde` says so to the instructor
(``manual.outvoted``); the record here lets the learner's feedback page say that those points
were given for an earlier submission, beside the new result. Kept in
``.autograder/earlier_hand_points.json``: "lesson/student" -> exercises.

A comment is about the submission it was given on: one given before a resubmission (a new
hand-in time, or automatic points a regrade changed under it) is recorded in
``.autograder/earlier_comments.json``, the same way, and the feedback page and grades.csv label
it "on an earlier submission" until the instructor gives a new comment (COMMENT=, which sets or
clears it). Deciding the points (POINTS= or AUTOMATIC=1) keeps the comment, and its label."""

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


def _write_earlier(root: Path, record: dict, kept: str = EARLIER) -> None:
    path = root / kept
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


def forget_earlier(root: Path, student: str, lesson: str, exercises,
                   kept: str = EARLIER) -> None:
    """The instructor decided the points of ``exercises`` for the submission graded now (with
    ``kept=EARLIER_COMMENTS``: gave them a new comment)."""
    record = _earlier_record(root, kept)
    key = f"{lesson}/{student}"
    if set(record.get(key, [])) & set(exercises):
        record[key] = [name for name in record[key] if name not in set(exercises)]
        _write_earlier(root, record, kept)


def earlier_comments(root: Path, student: str, lesson: str) -> set[str]:
    """The exercises of ``student``'s ``lesson`` whose comment was given on an earlier
    submission (``note_earlier_comments``) and not given again since."""
    return set(_earlier_record(root, EARLIER_COMMENTS).get(f"{lesson}/{student}", []))


def note_earlier_comments(root: Path, student: str, lesson: str, before, after) -> None:
    """Record the exercises whose comment (in ``before`` and ``after``, ``manual.HandMarks``
    read around a regrade) was given on an earlier submission: the regrade graded a new hand-in
    (another time), or changed the automatic points under the comment."""
    resubmitted = before.timestamp != after.timestamp
    changed = [exercise for exercise, auto in after.comments.items()
               if exercise in before.comments and (resubmitted
                                                   or before.comments[exercise] != auto)]
    if changed:
        record = _earlier_record(root, EARLIER_COMMENTS)
        key = f"{lesson}/{student}"
        record[key] = [*record.get(key, []), *changed]
        _write_earlier(root, record, EARLIER_COMMENTS)
