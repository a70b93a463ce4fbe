"""The grades CSV: nbgrader's export columns, one row per learner, lesson and notebook, with the
points of its score given by hand (manual grades and extra credit; empty where none were), each
exercise's points, the instructor's comments (each exercise's, on one line), and each
notebook's status and reason from the ledger. A routine note (``faults.NOTES``: a test cell the
instructor added after the notebook was handed in) leaves the status as its other faults make
it, "ok" when there are none, and is counted per lesson on screen, not listed per notebook."""

import csv
from pathlib import Path

from nbgrader.api import Gradebook, MissingEntry

from . import one_line
from .gradebook import db_url
from .faults import (ADDED_LATER, CELL_ERROR, NOTES, SEVERITY, added_note_line, copied_before,
                     from_dicts, own_status, reason_of)
from .earlier_points import earlier_comments
from .ledger import Ledger

CSV_COLUMNS = ["assignment", "notebook", "duedate", "timestamp", "student_id", "last_name",
               "first_name", "email", "raw_score", "late_submission_penalty", "score",
               "by_hand", "max_score", "exercises", "comments", "status", "reason"]


def export_grades(root: Path, output: Path, lessons: list[str] | None = None) -> list[dict]:
    """The grades CSV: nbgrader's export columns, one row per student, lesson and notebook,
    with each notebook's status and reason from the ledger. With ``lessons``, only their rows
    are replaced: the CSV's rows of every other lesson are kept as they were (``kept_rows``).
    Returns the rows it made (``lessons``' only when they are given)."""
    ledger = Ledger(root)
    rows = []
    with Gradebook(db_url(root)) as gradebook:
        known = {student.id: student for student in gradebook.students}
        assignments = sorted((assignment for assignment in gradebook.assignments
                              if not lessons or assignment.name in lessons),
                             key=lambda a: a.name)
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
                        row.update(by_hand=_by_hand(graded), exercises=_exercises(graded),
                                   comments=_comments(graded, earlier_comments(
                                       root, student_id, assignment.name)))
                        row.update(timestamp=submission.timestamp or "", raw_score=graded.score,
                                   late_submission_penalty=penalty,
                                   score=max(0.0, graded.score - penalty),
                                   status=_status(noted),
                                   reason=(noted or {}).get(
                                       "reason", "" if noted else "graded outside `make "
                                       "autograde`: no fault record"))
                    faults = from_dicts((noted or {}).get("faults", []))
                    row[NOTED] = [(fault.kind, fault.cell, copied_before(fault))
                                  for fault in faults if fault.kind in NOTES]
                    row[CELL_NOTES] = [fault.message for fault in faults
                                       if fault.kind == CELL_ERROR]
                    if row[NOTED]:  # the summary's line of a notebook leaves them to theirs
                        row[FAULTS_SAID] = reason_of([fault for fault in faults
                                                      if fault.kind not in NOTES])
                    row["reason"] = one_line.without_paths(row["reason"])
                    rows.append(row)
    kept = kept_rows(output, lessons) if lessons else []
    output.parent.mkdir(parents=True, exist_ok=True)
    with open(output, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=CSV_COLUMNS, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(sorted(kept + rows, key=lambda row: row["assignment"]))  # stable
    return rows


def _by_hand(notebook) -> float | str:
    """The points of ``notebook``'s score an instructor gave by hand (a manual grade replaces
    the automatic one; extra credit adds to it), or "" where none were given."""
    given = [grade for grade in notebook.grades
             if grade.manual_score is not None or grade.extra_credit]
    return sum((grade.manual_score or 0) + (grade.extra_credit or 0) for grade in given
               ) if given else ""


def _exercises(notebook) -> str:
    """Each graded exercise's points, in the notebook's order: "Square 1/1; Outer 0.5/2 (by
    hand)"."""
    order = {cell.name: index for index, cell in enumerate(notebook.notebook.grade_cells)}
    return "; ".join(
        f"{grade.name} {grade.score:g}/{grade.max_score:g}"
        + (" (by hand)" if grade.manual_score is not None or grade.extra_credit else "")
        for grade in sorted(notebook.grades, key=lambda grade: order.get(grade.name, 0)))


def _comments(notebook, earlier: dict[str, str] | None = None) -> str:
    """The instructor's comment on each exercise that has one, in the notebook's order, each on
    one line: "Square: right idea; Outer (on an earlier submission): see the hint on shapes"
    (``earlier``: the comments given on an earlier submission, ``earlier_comments``)."""
    order = {cell.name: index for index, cell in enumerate(notebook.notebook.grade_cells)}
    said = {comment.name.removeprefix("answer_"): comment.manual_comment
            for comment in notebook.comments if comment.manual_comment}
    earlier = earlier or {}
    return "; ".join(
        f"{exercise}{' (on an earlier submission)' if earlier.get(exercise) == text else ''}: "
        f"{' '.join(text.split())}" for exercise, text in sorted(
            said.items(), key=lambda item: order.get(item[0], len(order))))


def kept_rows(output: Path, lessons: list[str]) -> list[dict]:
    """The rows of the grades CSV at ``output`` that a run for ``lessons`` keeps: those of every
    other lesson, a lesson no longer in the course included (none if there is no CSV yet)."""
    if not output.exists():
        return []
    with open(output, newline="") as handle:
        return [row for row in csv.DictReader(handle) if row.get("assignment") not in lessons]


NOTED = "_notes"  # a row's routine notes, (kind, cell, copied_before): not a column of the CSV
FAULTS_SAID = "_faults"  # its reason less those notes, where it has any: not a column either
CELL_NOTES = "_cell_notes"  # its cell-error notes' messages, each said on a line of its own


def _status(noted: dict | None) -> str:
    """A graded notebook's status: its most serious fault but the routine notes."""
    if not noted:
        return "ok"
    if "faults" not in noted:  # recorded by an older version
        return noted.get("status", "ok")
    return own_status(from_dicts(noted["faults"]))


QUIET = ("ok", "not-submitted")  # nothing to look at
SHOWN = 20


def grades_summary(rows: list[dict], output: Path, lessons: list[str] | None, kept: int) -> str:
    """What `make grades` prints: where the CSV is and how many rows a run over ``lessons``
    (None: every lesson) updated; the lessons named that nobody has handed in, plainly (as
    `make insight` says it); then ``status_report`` of the rest, saying which lessons it
    covers."""
    if not lessons:
        return (f"grades written to {output} ({len(rows)} rows; every lesson)\n"
                + status_report(rows))
    handed_in = {row["assignment"] for row in rows if row["status"] != "not-submitted"}
    nobody = [lesson for lesson in lessons if lesson not in handed_in]
    if not handed_in:
        return (f"nothing to update for {', '.join(nobody)}: nobody has handed "
                f"{'it' if len(nobody) == 1 else 'them'} in yet; {output} keeps its other "
                f"{kept} rows as the last run left them")
    shown = [lesson for lesson in lessons if lesson in handed_in]
    lines = [f"grades written to {output} ({len(rows) + kept} rows; updated for "
             f"{', '.join(lessons)}: {len(rows)} rows, the other {kept} as the last run left "
             "them)"]
    if nobody:
        lines.append(f"nobody has handed in {', '.join(nobody)} yet")
    return "\n".join(lines + [status_report([row for row in rows if row["assignment"] in shown],
                                            only=shown)])


def status_report(rows: list[dict], only: list[str] | None = None) -> str:
    """How many notebooks have each status (of the lessons ``only``, where given, and saying
    so), one line per lesson and routine note (a test cell added and graded in so many
    notebooks), then each notebook to look at (its status and reason)."""
    counts: dict[str, int] = {}
    for row in rows:
        counts[row["status"]] = counts.get(row["status"], 0) + 1
    order = sorted(counts, key=lambda status: SEVERITY.get(status, len(SEVERITY)))
    scope = f" of {', '.join(only)} only ({len(rows)} notebooks)" if only else ""
    lines = [f"statuses{scope}: " + (", ".join(f"{counts[status]} {status}" for status in order)
                                     or "no notebooks")]
    notes: dict[tuple[str, str], set] = {}
    for row in rows:
        for kind, cell, *late in row.get(NOTED, ()):
            if kind == CELL_ERROR:  # a line per notebook, below
                continue
            notes.setdefault((row["assignment"], kind), set()).add(
                (cell, row["student_id"], row["notebook"], any(late)))
    for (lesson, kind), where in sorted(notes.items()):
        cells = sorted({cell for cell, *_ in where})
        count = len({(student, notebook) for _, student, notebook, _ in where})
        late = len({(student, notebook) for _, student, notebook, copied in where if copied})
        lines.append(added_note_line(lesson, cells, count, late) if kind == ADDED_LATER
                     else f"{lesson}: {kind} in {count} notebooks")
    flagged = sorted((row for row in rows if row["status"] not in QUIET),
                     key=lambda row: SEVERITY.get(row["status"], -1))
    for row in flagged[:SHOWN]:
        said = row.get(FAULTS_SAID, row["reason"])  # its notes have their line above
        lines.append(f"  {row['student_id']} {row['assignment']}/{row['notebook']}: "
                     f"{row['status']}: {one_line.reason(said)}")
    if len(flagged) > SHOWN:
        lines.append(f"  ... and {len(flagged) - SHOWN} more: see the status and reason columns "
                     "of grades.csv")
    said = [f"  {row['student_id']} {row['assignment']}/{row['notebook']}: "
            f"{one_line.reason(message)}" for row in rows for message in row.get(CELL_NOTES, ())]
    lines += said[:SHOWN] + ([f"  ... and {len(said) - SHOWN} more notes: see the reason column "
                              "of grades.csv"] if len(said) > SHOWN else [])
    return "\n".join(lines)
