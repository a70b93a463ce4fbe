"""The grades CSV: nbgrader's export columns, one row per learner, lesson and notebook, with each
notebook's status and reason from the ledger."""

import csv
from pathlib import Path

from nbgrader.api import Gradebook, MissingEntry

from .gradebook import db_url
from .faults import SEVERITY
from .ledger import Ledger

CSV_COLUMNS = ["assignment", "notebook", "duedate", "timestamp", "student_id", "last_name",
               "first_name", "email", "raw_score", "late_submission_penalty", "score",
               "max_score", "status", "reason"]


def export_grades(root: Path, output: Path) -> list[dict]:
    """The grades CSV: nbgrader's export columns, one row per student, lesson and notebook,
    with each notebook's status and reason from the ledger. Returns the rows."""
    ledger = Ledger(root)
    rows = []
    with Gradebook(db_url(root)) as gradebook:
        known = {student.id: student for student in gradebook.students}
        assignments = sorted(gradebook.assignments, key=lambda a: a.name)
        # a learner who handed a lesson in but was never graded is not in the gradebook yet
        handed_in = {path.parent.name for assignment in assignments
                     for path in (root / "submitted").glob(f"*/{assignment.name}")
                     if path.is_dir()}
        for assignment in assignments:
            for student_id in sorted(set(known) | handed_in):
                student = known.get(student_id)
                entry = ledger.get(student_id, assignment.name) or {}
                submitted = (root / "submitted" / student_id / assignment.name).is_dir()
                try:
                    submission = gradebook.find_submission(assignment.name, student_id)
                except MissingEntry:
                    submission = None
                for notebook in sorted(assignment.notebooks, key=lambda n: n.name):
                    row = {"assignment": assignment.name, "notebook": notebook.name,
                           "duedate": assignment.duedate or "", "student_id": student_id,
                           "last_name": getattr(student, "last_name", None) or "",
                           "first_name": getattr(student, "first_name", None) or "",
                           "email": getattr(student, "email", None) or "",
                           "max_score": notebook.max_score}
                    noted = entry.get("notebooks", {}).get(notebook.name)
                    if submission is None:
                        status = (noted or {}).get("status") or (
                            "not-graded" if submitted else "not-submitted")
                        row.update(timestamp="", raw_score=0.0, late_submission_penalty=0.0,
                                   score=0.0, status=status, reason=(noted or {}).get(
                                       "reason", "submitted but not graded yet" if submitted
                                       else "nothing submitted"))
                    else:
                        graded = gradebook.find_submission_notebook(
                            notebook.name, assignment.name, student.id)
                        penalty = graded.late_submission_penalty or 0.0
                        row.update(timestamp=submission.timestamp or "", raw_score=graded.score,
                                   late_submission_penalty=penalty,
                                   score=max(0.0, graded.score - penalty),
                                   status=(noted or {}).get("status", "ok"),
                                   reason=(noted or {}).get(
                                       "reason", "" if noted else "graded outside `make "
                                       "autograde`: no fault record"))
                    rows.append(row)
    output.parent.mkdir(parents=True, exist_ok=True)
    with open(output, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=CSV_COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    return rows


QUIET = ("ok", "not-submitted")  # nothing to look at
SHOWN = 20


def status_report(rows: list[dict]) -> str:
    """How many notebooks have each status, then each one to look at (its status and reason)."""
    counts: dict[str, int] = {}
    for row in rows:
        counts[row["status"]] = counts.get(row["status"], 0) + 1
    order = sorted(counts, key=lambda status: SEVERITY.get(status, len(SEVERITY)))
    lines = ["statuses: " + ", ".join(f"{counts[status]} {status}" for status in order)]
    flagged = sorted((row for row in rows if row["status"] not in QUIET),
                     key=lambda row: SEVERITY.get(row["status"], -1))
    for row in flagged[:SHOWN]:
        lines.append(f"  {row['student_id']} {row['assignment']}/{row['notebook']}: "
                     f"{row['status']}: {_short(row['reason'])}")
    if len(flagged) > SHOWN:
        lines.append(f"  ... and {len(flagged) - SHOWN} more: see the status and reason columns")
    return "\n".join(lines)


def _short(text: str, width: int = 200) -> str:
    return text if len(text) <= width else text[:width - 1] + "…"
