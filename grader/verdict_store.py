"""What grading recorded of each test cell's verdict, per submission: passed or not, and for a
failure its mistake (a proven id or a category) and hint, in
``.autograder/verdicts/<lesson>/<student>.json`` of the course root.

The batch writes a submission's record as it records the submission in the ledger (a file of its
own, so that the ledger, rewritten after every submission, stays small); ``grader.insight``
reads them and never grades.
"""

import json
import os
from pathlib import Path

from .ledger import STATE

VERDICTS = f"{STATE}/verdicts"


def write(root: Path, student: str, lesson: str, digest: str,
          notebooks: dict[str, dict[str, dict]]) -> None:
    """Record ``notebooks`` (notebook name -> grade_id -> ``grader.verdicts.record``) as what
    grading said of ``student``'s ``lesson``, graded from files of hash ``digest``."""
    path = root / VERDICTS / lesson / f"{student}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    scratch = path.with_suffix(".tmp")
    scratch.write_text(json.dumps({"digest": digest, "notebooks": notebooks}, sort_keys=True))
    os.replace(scratch, path)


def read_lesson(root: Path, lesson: str) -> dict[str, dict]:
    """Student -> {"digest", "notebooks"}: every record of ``lesson``."""
    folder = root / VERDICTS / lesson
    if not folder.is_dir():
        return {}
    records = {}
    for path in folder.glob("*.json"):
        try:
            records[path.stem] = json.loads(path.read_text())
        except ValueError:  # a record cut short: as if the submission had none
            continue
    return records
