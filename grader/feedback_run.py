"""`make feedback`: nbgrader generate_feedback for the lessons named, the notebooks whose feedback
is already current left as they are, lessons side by side (``workers``).

Where the time went (``python -m tools.bench feedback``; a profile of one lesson): nbgrader's
start-up, 2 to 3 s of CPU a lesson (importing nbgrader imports its server extensions), then
per notebook nbconvert's HTML export: more than half of it a BeautifulSoup pass over the
finished page, most of the rest highlighting code and rendering markdown that every learner's
notebook shares (``grader.feedback.FeedbackHTMLExporter`` skips the one and does the other
once a lesson). Feedback is
current when the notebook's page was written from the same autograded notebook, the same
gradebook entries (scores, points by hand, comments, late penalty) and the same feedback code:
their digest is recorded in ``.autograder/feedback.json`` as each lesson's feedback is written.
"""

import hashlib
import json
import os
import re
import sqlite3
import threading
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing
from importlib.metadata import version
from pathlib import Path

from .ledger import STATE
from .earlier_points import earlier, earlier_comments
from .nbgrader_cli import nbgrader_errors, nbgrader_streamed
from .progress import Progress

RECORD = f"{STATE}/feedback.json"  # lesson/student -> the digest its feedback was written from
_CONVERTING = re.compile(r"Converting notebook (\S+\.ipynb)")
_ROWS = {  # a submission's gradebook entries that its feedback page shows
    "grade": "SELECT sa.student_id, g.cell_id, g.auto_score, g.manual_score, g.extra_credit, "
             "gc.max_score FROM grade g JOIN submitted_notebook sn ON g.notebook_id = sn.id "
             "JOIN submitted_assignment sa ON sn.assignment_id = sa.id JOIN assignment a ON "
             "sa.assignment_id = a.id LEFT JOIN grade_cells gc ON gc.id = g.cell_id "
             "WHERE a.name = ?",
    "comment": "SELECT sa.student_id, c.cell_id, c.auto_comment, c.manual_comment FROM comment c "
               "JOIN submitted_notebook sn ON c.notebook_id = sn.id JOIN submitted_assignment sa "
               "ON sn.assignment_id = sa.id JOIN assignment a ON sa.assignment_id = a.id "
               "WHERE a.name = ?",
    "notebook": "SELECT sa.student_id, sn.notebook_id, sn.late_submission_penalty, sa.timestamp, "
                "sa.extension FROM submitted_notebook sn JOIN submitted_assignment sa ON "
                "sn.assignment_id = sa.id JOIN assignment a ON sa.assignment_id = a.id "
                "WHERE a.name = ?",
}


def code_stamp(root: Path) -> str:
    """What every page also depends on: this course's feedback code, the course root's
    nbgrader_config.py, and the nbgrader and nbconvert versions."""
    here = Path(__file__).parent
    parts = [(here / name).read_bytes() for name in ("feedback.py", "course_config.py")]
    config = root / "nbgrader_config.py"
    parts.append(config.read_bytes() if config.exists() else b"")
    parts.append(f"{version('nbgrader')} {version('nbconvert')}".encode())
    return hashlib.sha256(b"\0".join(parts)).hexdigest()


def _gradebook_rows(root: Path, lesson: str) -> dict[str, list]:
    """Student -> every gradebook row of their ``lesson`` its feedback shows, in a fixed order."""
    rows: dict[str, list] = {}
    database = root / "gradebook.db"
    if not database.exists():
        return rows
    with closing(sqlite3.connect(f"file:{database}?mode=ro", uri=True)) as connection:
        for kind, query in _ROWS.items():
            for student, *values in connection.execute(query, (lesson,)):
                rows.setdefault(student, []).append([kind, *map(str, values)])
    return {student: sorted(found) for student, found in rows.items()}


def digests(root: Path, lesson: str, students: list[str]) -> dict[str, str]:
    """Student -> the digest of what their ``lesson`` feedback is written from."""
    stamp, rows = code_stamp(root), _gradebook_rows(root, lesson)
    found = {}
    for student in students:
        folder = root / "autograded" / student / lesson
        hashed = hashlib.sha256(stamp.encode())
        for path in sorted(folder.glob("*.ipynb")):
            hashed.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
        hashed.update(json.dumps(rows.get(student, [])).encode())
        hashed.update(json.dumps([sorted(earlier(root, student, lesson)),
                                  earlier_comments(root, student, lesson)], sort_keys=True
                                 ).encode())
        found[student] = hashed.hexdigest()
    return found


def _record(root: Path) -> dict[str, str]:
    try:
        return json.loads((root / RECORD).read_text())
    except (OSError, ValueError):
        return {}


def current(root: Path, lesson: str, student: str, digest: str, record: dict) -> bool:
    """Is the feedback of ``student``'s ``lesson`` written from what it would be written from
    now, every page of it still there?"""
    pages = [root / "feedback" / student / lesson / f"{path.stem}.html"
             for path in (root / "autograded" / student / lesson).glob("*.ipynb")]
    return record.get(f"{lesson}/{student}") == digest and all(map(Path.exists, pages))


def feedback(root: Path, lessons: list[str], *, workers: int | None = None,
             force: bool = False) -> bool:
    """nbgrader generate_feedback for every lesson that has autograded submissions, those whose
    feedback is current left out (all written with ``force``), ``workers`` lessons at a time; a
    line per notebook as its feedback is written; False if nbgrader failed on a lesson (the
    others are still done)."""
    students, waiting = {}, []
    for lesson in lessons:
        students[lesson] = sorted(path.parent.name for path in
                                  (root / "autograded").glob(f"*/{lesson}") if path.is_dir())
        if not students[lesson]:
            waiting.append(lesson)
    record, lock = _record(root), threading.Lock()
    wanted, kept = {}, {}
    for lesson in lessons:
        found = digests(root, lesson, students[lesson])
        fresh = [s for s in students[lesson]
                 if not force and current(root, lesson, s, found[s], record)]
        kept[lesson] = fresh
        wanted[lesson] = {s: found[s] for s in students[lesson] if s not in fresh}
    total = sum(len(list((root / "autograded" / student / lesson).glob("*.ipynb")))
                for lesson in lessons for student in wanted[lesson])
    todo = [lesson for lesson in lessons if wanted[lesson]]
    workers = max(1, min(workers or os.cpu_count() or 1, len(todo) or 1))
    # feedback runs no cell: no time-limit hint when its estimate runs out
    progress = Progress(total, done_word="fed back", stall_hint="",  # one nbgrader a lesson
                        groups=-(-len(todo) // workers)) if total else None
    if workers > 1 and len(todo) > 1:
        print(f"feedback for {len(todo)} lessons, {workers} at a time", flush=True)

    def one(lesson: str) -> bool:
        if progress and workers == 1:
            progress.start_group()
        code, said = _generate_feedback(root, lesson, progress, exclude=kept[lesson])
        left = f" ({len(kept[lesson])} current, kept)" if kept[lesson] else ""
        (progress.note if progress else print)(
            f"{lesson}: nbgrader generate_feedback failed:\n{nbgrader_errors(said)}" if code else
            f"{lesson}: feedback for {len(wanted[lesson])} "
            f"student{'' if len(wanted[lesson]) == 1 else 's'}{left} in "
            f"{root / 'feedback'}/<student>/{lesson}/")
        if not code:
            with lock:
                record.update({f"{lesson}/{s}": digest for s, digest in wanted[lesson].items()})
                _write_record(root, record)
        return not code

    if progress and workers > 1:
        progress.start_group()
    with ThreadPoolExecutor(workers) as pool:
        succeeded = all(list(pool.map(one, todo)))
    if progress:
        progress.close()
    unchanged = [lesson for lesson in lessons if students[lesson] and not wanted[lesson]]
    if unchanged:
        print(f"feedback current, not written again ({len(unchanged)} lesson"
              f"{'s' if len(unchanged) > 1 else ''}; FORCE=1 writes it all): "
              f"{', '.join(unchanged)}")
    if waiting:
        print(f"nothing autograded yet, no feedback ({len(waiting)} "
              f"lesson{'s' if len(waiting) > 1 else ''}): {', '.join(waiting)}")
    return succeeded


def _write_record(root: Path, record: dict) -> None:
    path = root / RECORD
    path.parent.mkdir(parents=True, exist_ok=True)
    scratch = path.with_suffix(".tmp")
    scratch.write_text(json.dumps(record, indent=1, sort_keys=True))
    os.replace(scratch, path)


def _generate_feedback(root: Path, lesson: str, progress: Progress | None,
                       exclude: list[str] = ()) -> tuple[int, str]:
    """``nbgrader generate_feedback`` of ``lesson`` but for the learners in ``exclude``,
    ``progress`` told of each notebook once it is written (nbgrader logs each one as it starts
    it); its exit status and what it said."""
    options = [f"--CourseDirectory.student_id_exclude={','.join(exclude)}"] if exclude else []
    process = nbgrader_streamed("generate_feedback", lesson, "--force", "--log-level=INFO",
                                *options, root=root)
    said, current_path = [], None

    def written(path: str) -> None:
        student, name = Path(path).parent.parent.name, Path(path).stem
        if progress:
            progress.update(f"{student} {lesson}" + (f"/{name}" if name != lesson else "")
                            + ": feedback written")

    for line in process.stdout:
        said.append(line)
        found = _CONVERTING.search(line)
        if found:
            if current_path:
                written(current_path)
            current_path = found[1]
    code = process.wait()
    if current_path and not code:
        written(current_path)
    return code, "".join(said)
