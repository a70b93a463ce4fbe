"""The batch's memory: which files each submission had when it was graded and how it went, in
``.autograder/ledger.json`` in the course root. A rerun grades only new, changed or failed
(grader-error) submissions."""

import hashlib
import json
import os
from pathlib import Path

from .faults import RETRIED

STATE = ".autograder"
LEDGER = f"{STATE}/ledger.json"
FORMAT = 1  # bump when grading changes enough that old ledger entries must be regraded


def digest(files: dict[str, bytes], references: dict) -> str:
    """A hash of a submission's files and of the released cells it is graded against."""
    digest = hashlib.sha256(f"format {FORMAT}".encode())
    digest.update(json.dumps(references, sort_keys=True).encode())
    for name, data in sorted(files.items()):
        digest.update(name.encode() + b"\0" + hashlib.sha256(data).digest())
    return digest.hexdigest()


def release_of(references: dict) -> str:
    """A hash of the released cells a lesson's submissions are graded against: an entry graded
    under another one was graded before a test cell was edited or added."""
    return hashlib.sha256(json.dumps(references, sort_keys=True).encode()).hexdigest()


class Ledger:
    """What was graded, from which files, and how it went: one JSON file, written by this
    process only (atomically, after every submission)."""

    def __init__(self, root: Path):
        self.path = root / LEDGER
        try:
            self.entries = json.loads(self.path.read_text())
        except (OSError, ValueError):
            self.entries = {}

    @staticmethod
    def key(student: str, lesson: str) -> str:
        return f"{lesson}/{student}"

    def get(self, student: str, lesson: str) -> dict | None:
        return self.entries.get(self.key(student, lesson))

    def needs_grading(self, student: str, lesson: str, digest: str) -> bool:
        entry = self.get(student, lesson)
        return entry is None or entry["digest"] != digest or entry["status"] in RETRIED

    def record(self, student: str, lesson: str, entry: dict) -> None:
        self.entries[self.key(student, lesson)] = entry
        self.path.parent.mkdir(parents=True, exist_ok=True)
        scratch = self.path.with_suffix(".tmp")
        scratch.write_text(json.dumps(self.entries, indent=1, sort_keys=True))
        os.replace(scratch, self.path)
