"""Points and comments given by hand, from the command line: what the formgrader's page does for
one exercise of one learner, written to the same gradebook fields (``manual_score`` on the
exercise's grade, ``manual_comment`` on its answer cell), so a regrade keeps them, `make grades`
counts them in their own column and `make feedback` shows them beside the hint."""

import difflib
from dataclasses import dataclass, field
from pathlib import Path

from nbgrader.api import Gradebook, MissingEntry

from .earlier_points import earlier_comments, forget_earlier
from .gradebook import db_url


class ManualGradeError(ValueError):
    """A manual grade that names something the gradebook does not have, or points out of range."""


def give(root: Path, lesson: str, student: str, exercise: str, *, points: float | None = None,
         comment: str | None = None, automatic: bool = False) -> str:
    """Set (or, with ``automatic``, clear) ``student``'s points for ``exercise`` of ``lesson``
    and/or the comment on its answer; returns the line to print: before -> after."""
    with Gradebook(db_url(root)) as gradebook:
        line = _give(root, gradebook, lesson, student, exercise, points, comment, automatic)
        gradebook.db.commit()
    _decided(root, student, lesson, exercise, points, automatic)
    return line


def _decided(root: Path, student: str, lesson: str, exercise: str, points: float | None,
             automatic: bool) -> None:
    """What ``give`` decided for the submission graded now: its points (POINTS= or
    AUTOMATIC=1) no longer "given for an earlier submission". A comment kept keeps its label
    "on an earlier submission"; a new one reads otherwise, so it has none
    (``earlier_points.earlier_comments``)."""
    if points is not None or automatic:
        forget_earlier(root, student, lesson, [exercise])


def _give(root: Path, gradebook: Gradebook, lesson: str, student: str, exercise: str,
          points: float | None, comment: str | None, automatic: bool) -> str:
    """``give`` within an open gradebook session, not committed."""
    if points is None and comment is None and not automatic:
        raise ManualGradeError("give --points, --comment or --automatic: nothing to change")
    if points is not None and automatic:
        raise ManualGradeError("--points and --automatic contradict each other: pick one")
    notebook = _notebook_of(gradebook, lesson, exercise)
    try:
        gradebook.find_submission(lesson, student)
    except MissingEntry:
        known = _learners(root, gradebook)
        if student not in known:
            raise ManualGradeError(_unknown(student, known)) from None
        handed_in = sorted(s.student.id for s in gradebook.find_assignment(lesson).submissions)
        raise ManualGradeError(
            f"{student} has no graded submission of {lesson} (graded: "
            f"{', '.join(handed_in) or 'nobody yet'}); run `make autograde` first") from None
    grade = gradebook.find_grade(exercise, notebook, lesson, student)
    before = _score(grade)
    if points is not None:
        if not 0 <= points <= grade.max_score:
            raise ManualGradeError(f"{exercise} is worth 0 to {_points(grade.max_score)}, "
                                   f"not {points:g}; nothing changed")
        grade.manual_score = points
    if automatic:
        grade.manual_score = None
    if points is not None or automatic:  # settled, as the formgrader's page settles it: a
        # regrade under points by hand set nbgrader's "needs manual grade" for a review
        grade.needs_manual_grade = grade.manual_score is None and grade.auto_score is None
    kept = _comment(gradebook, lesson, notebook, student, exercise)
    said = "; your comment kept (COMMENT= clears it)" if kept.manual_comment else ""
    if kept.manual_comment and kept.manual_comment == earlier_comments(
            root, student, lesson).get(exercise):
        said = ("; your comment kept, still shown as given on an earlier submission (COMMENT= "
                "replaces or clears it)")
    if comment is not None:
        said = ("; comment set" if comment else "; comment cleared" if kept.manual_comment
                else "; there was no comment to clear")
        kept.manual_comment = comment
    after = _score(grade)
    if after == before:  # a comment alone, or the points it had: nothing moved
        return f"{student} {lesson} {exercise}: {after} of {_points(grade.max_score)}, " \
               f"points unchanged{said}"
    return f"{student} {lesson} {exercise}: {before} -> {after} of " \
           f"{_points(grade.max_score)}{said}"


FILE_COLUMNS = ("student", "lesson", "exercise", "points", "comment")
AUTOMATIC = "automatic"  # a file's points cell that drops the points by hand


def give_file(root: Path, path: Path, resolve=lambda lesson: lesson) -> list[str]:
    """Every row of the CSV file at ``path`` (columns ``FILE_COLUMNS``, a header first) given as
    ``give`` gives one, in one gradebook session: the lines to print. ``points`` empty keeps
    the points, ``automatic`` drops the points by hand; ``comment`` empty keeps the comment.
    ``resolve`` turns a lesson as written (``04``) into its id. Any bad row (a name the
    gradebook lacks, points out of range or not a number, nothing to change, a repeated
    exercise) refuses the whole file, each bad row named, and nothing changes."""
    import csv

    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as error:
        raise ManualGradeError(f"cannot read {path}: {error}") from None
    reader = csv.DictReader(text.splitlines())
    header = [name.strip().lower() for name in reader.fieldnames or []]
    missing = [name for name in FILE_COLUMNS[:3] if name not in header]
    if missing:
        raise ManualGradeError(f"{path}: the first row must name the columns "
                               f"{', '.join(FILE_COLUMNS)} (points and comment may be empty); "
                               f"missing: {', '.join(missing)}; nothing changed")
    reader.fieldnames = header
    rows, problems, seen = [], [], {}
    for number, row in enumerate(reader, start=2):
        cells = {name: (row.get(name) or "").strip() for name in FILE_COLUMNS}
        if not any(cells.values()):
            continue
        try:
            rows.append(_file_row(cells, resolve, seen, number))
        except ManualGradeError as error:
            problems.append(f"row {number}: {error}")
    lines = []
    if not problems:
        with Gradebook(db_url(root)) as gradebook:
            for number, (lesson, student, exercise, points, comment, automatic) in rows:
                try:
                    lines.append(_give(root, gradebook, lesson, student, exercise, points,
                                       comment, automatic))
                except ManualGradeError as error:
                    problems.append(f"row {number}: {error}")
            if problems:
                gradebook.db.rollback()
            else:
                gradebook.db.commit()
    if problems:
        raise ManualGradeError(
            f"{path}: {len(problems)} bad row{'s' if len(problems) > 1 else ''}, so nothing "
            "changed (fix them and run it again):\n  "
            + "\n  ".join(problem.replace("; nothing changed", "") for problem in problems))
    for _, (lesson, student, exercise, points, comment, automatic) in rows:
        _decided(root, student, lesson, exercise, points, automatic)
    return lines


def _file_row(cells: dict, resolve, seen: dict, number: int):
    """One row of a ``give_file`` CSV as ``_give``'s arguments, checked on its own."""
    for name in FILE_COLUMNS[:3]:
        if not cells[name]:
            raise ManualGradeError(f"no {name}")
    try:
        lesson = resolve(cells["lesson"])
    except ValueError as error:
        raise ManualGradeError(str(error)) from None
    key = (cells["student"], lesson, cells["exercise"])
    if key in seen:
        raise ManualGradeError(f"{' '.join(key)} again (first on row {seen[key]}): one row each")
    seen[key] = number
    points, automatic = None, cells["points"].lower() == AUTOMATIC
    if cells["points"] and not automatic:
        try:
            points = float(cells["points"])
        except ValueError:
            raise ManualGradeError(f"points {cells['points']!r} is not a number (or "
                                   f"{AUTOMATIC!r}, or empty to keep them)") from None
    comment = cells["comment"] or None
    if points is None and not automatic and comment is None:
        raise ManualGradeError("neither points nor a comment: nothing to change")
    return number, (lesson, cells["student"], cells["exercise"], points, comment, automatic)


def _points(worth: float) -> str:
    """'1 point', '2 points', '0.5 points'."""
    return f"{worth:g} point{'' if worth == 1 else 's'}"


def _learners(root: Path, gradebook: Gradebook) -> set[str]:
    """Every learner the course root knows: in the gradebook, or with a folder in submitted/."""
    submitted = root / "submitted"
    folders = {path.name for path in submitted.iterdir() if path.is_dir()} \
        if submitted.is_dir() else set()
    return {student.id for student in gradebook.students} | folders


def _unknown(student: str, known: set[str]) -> str:
    """What a refusal says of a learner id nobody has (a typo?): the close ids, else the ids."""
    close = difflib.get_close_matches(student, sorted(known), n=3, cutoff=0.6)
    if close:
        return (f"no learner {student!r} is known (not in the gradebook, no folder in "
                f"submitted/); close names: {', '.join(close)}")
    listed = sorted(known)
    shown = ", ".join(listed[:12]) + (f" and {len(listed) - 12} more" if len(listed) > 12 else "")
    return (f"no learner {student!r} is known (not in the gradebook, no folder in submitted/); "
            f"the learners: {shown or 'none yet'}")


def _notebook_of(gradebook: Gradebook, lesson: str, exercise: str) -> str:
    """The notebook of ``lesson`` whose graded cell is ``exercise``."""
    try:
        assignment = gradebook.find_assignment(lesson)
    except MissingEntry:
        known = sorted(assignment.name for assignment in gradebook.assignments)
        raise ManualGradeError(f"no released lesson {lesson!r} (released: "
                               f"{', '.join(known) or 'none'})") from None
    cells = {cell.name: notebook.name for notebook in assignment.notebooks
             for cell in notebook.grade_cells}
    if exercise not in cells:
        raise ManualGradeError(f"{lesson} has no graded cell {exercise!r}; its graded cells: "
                               f"{', '.join(sorted(cells))}")
    return cells[exercise]


def _comment(gradebook: Gradebook, lesson: str, notebook: str, student: str, exercise: str):
    """The comment on the exercise's answer cell (``answer_NAME``), where the formgrader puts
    it; the test cell's own where the exercise has no answer cell."""
    for cell in (f"answer_{exercise}", exercise):
        try:
            return gradebook.find_comment(cell, notebook, lesson, student)
        except MissingEntry:
            continue
    raise ManualGradeError(f"{exercise} of {lesson} has no cell that takes a comment")


def _score(grade) -> str:
    """'1.5 (by hand)' or '0 (automatic)': the points the gradebook counts and their origin."""
    if grade.manual_score is not None:
        return f"{grade.manual_score:g} (by hand)"
    return f"{grade.auto_score or 0:g} (automatic)"


@dataclass(frozen=True)
class HandMarks:
    """What the gradebook holds by hand for one submission: the points by hand (exercise ->
    (points by hand, automatic points)), the comments (exercise -> (its automatic points, the
    comment)), every mark ((kind, notebook, cell): kind "grade" for points by hand or
    extra credit, "comment"), and when the submission was handed in."""

    points: dict = field(default_factory=dict)
    comments: dict = field(default_factory=dict)
    given: frozenset = frozenset()
    timestamp: object = None


def hand_marks(root: Path, student: str, lesson: str) -> HandMarks:
    """``student``'s marks by hand on ``lesson`` (``HandMarks``); none before its first
    grading."""
    with Gradebook(db_url(root)) as gradebook:
        try:
            submission = gradebook.find_submission(lesson, student)
        except MissingEntry:
            return HandMarks()
        points, comments, given = {}, {}, set()
        for notebook in submission.notebooks:
            auto = {grade.name: grade.auto_score for grade in notebook.grades}
            for grade in notebook.grades:
                if grade.manual_score is not None:
                    points[grade.name] = (grade.manual_score, grade.auto_score)
                if grade.manual_score is not None or grade.extra_credit:
                    given.add(("grade", notebook.name, grade.name))
            for comment in notebook.comments:
                if comment.manual_comment:
                    exercise = comment.name.removeprefix("answer_")
                    comments[exercise] = (auto.get(exercise), comment.manual_comment)
                    given.add(("comment", notebook.name, comment.name))
        return HandMarks(points, comments, frozenset(given), submission.timestamp)


def by_hand(root: Path, student: str, lesson: str) -> dict[str, tuple[float, float | None]]:
    """Each exercise of ``student``'s ``lesson`` whose points were given by hand:
    exercise -> (points by hand, automatic points); empty before its first grading."""
    return hand_marks(root, student, lesson).points


def outvoted(student: str, lesson: str, before: dict, after: dict) -> list[str]:
    """A line for each grade given by hand that still counts although the regrade just changed
    the automatic points under it (a resubmission the hand-given points were not given for)."""
    return [f"{student} {lesson} {exercise}: your {points:g} by hand still counts, but the "
            f"automatic points changed from {before[exercise][1] or 0:g} to {auto or 0:g}; "
            f"keep it, or use the new ones: make manual LESSON={lesson} STUDENT={student} "
            f"EXERCISE={exercise} AUTOMATIC=1 (COMMENT= also clears your comment)"
            for exercise, (points, auto) in sorted(after.items())
            if exercise in before and before[exercise][1] != auto]

