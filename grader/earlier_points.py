"""Points by hand given for an earlier submission: a regrade (a resubmission) changed the
automatic points under them, and the instructor has not decided since (``make manual`` POINTS=
or AUTOMATIC=1 for the exercise). `make autograde` says so to the instructor
(``manual.outvoted``); the record here lets the learner's feedback page say that those points
were given for an earlier submission, beside the new result. Kept in
``.autograder/earlier_hand_points.json``: "lesson/student" -> exercises."""

import json
from pathlib import Path

from .ledger import STATE

EARLIER = f"{STATE}/earlier_hand_points.json"


def _earlier_record(root: Path) -> dict[str, list[str]]:
    try:
        found = json.loads((root / EARLIER).read_text())
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
