"""Where a learner stands: the outcome of each exercise's last self-check, kept in a small file
beside the notebooks (``.autograd-progress.json``), and read back as one table.

nbgrader gives every lesson its own folder (``course/lesson/lesson.ipynb``), so the table also
reads the files of the folders beside the current one.
"""

import json
import os
import time
from datetime import datetime
from pathlib import Path

FILE_NAME = ".autograd-progress.json"
PASSED, FAILED, NOT_STARTED, NOT_TRIED = "passed", "failed", "not implemented yet", "not tried"


def notebook() -> str | None:
    """The running notebook's name without its suffix (``01_sigmoid``), where Jupyter says
    (``JPY_SESSION_NAME``); None in a terminal, a test or an older Jupyter."""
    session = os.environ.get("JPY_SESSION_NAME")
    return Path(session).stem if session else None


HINT_LENGTH = 300  # characters of a hint kept in the record


def _clipped(hint: str) -> str:
    """``hint`` as recorded: whole, or cut at a word with an ellipsis, so a cut shows."""
    if len(hint) <= HINT_LENGTH:
        return hint
    return hint[:HINT_LENGTH - 1].rsplit(" ", 1)[0].rstrip(" ,;:") + "…"


def record(exercise: str, lesson: str, outcome: str, hint: str = "", folder: Path | None = None
           ) -> None:
    """Remember the outcome of ``exercise``'s self-check; never fails the self-check itself.
    A self-check run in another notebook (a scratch one) does not replace what the lesson's own
    notebook recorded: the table follows the lesson."""
    path = Path(folder or os.getcwd()) / FILE_NAME
    here = notebook()
    try:
        entries = _read(path)
        kept = entries.get(exercise)
        if (here is not None and here != lesson and isinstance(kept, dict)
                and kept.get("notebook") == lesson):
            return
        entries[exercise] = {"lesson": lesson, "outcome": outcome, "hint": _clipped(hint),
                             "when": now(), "at": time.time(), "notebook": here}
        scratch = path.with_name(f"{FILE_NAME}.{os.getpid()}")
        scratch.write_text(json.dumps(entries, indent=1, sort_keys=True))
        scratch.replace(path)  # whole or not at all: a second kernel may be writing too
    except OSError:
        pass  # a read-only folder (a grading sandbox, a shared drive) costs the table, not the check


def now() -> str:
    """The local time with its offset from UTC, '2026-11-26 08:30 UTC+01:00': a table read on
    another machine, or after a change of clocks, still says when."""
    local = datetime.now().astimezone()
    offset = local.strftime("%z")  # '+0100'
    zone = f" UTC{offset[:3]}:{offset[3:]}" if len(offset) >= 5 else ""
    return local.strftime("%Y-%m-%d %H:%M") + zone


def _read(path: Path) -> dict:
    try:
        entries = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return entries if isinstance(entries, dict) else {}


def recorded(folder: Path | None = None) -> dict[str, dict]:
    """Every recorded outcome in ``folder`` and in the lesson folders beside it (nbgrader
    fetches each lesson into a folder named by its id; other folders beside it, a scratch
    folder or another project's, are not the course): per exercise, the newest its lesson's
    own notebook recorded, else the newest."""
    from .exercises import EXERCISES

    folder = Path(folder or os.getcwd())
    lessons = {exercise.lesson for exercise in EXERCISES.values()}
    beside = [path for path in sorted(folder.parent.glob(f"*/{FILE_NAME}"))
              if path.parent.name in lessons]
    found: dict[str, dict] = {}
    for path in [*beside, folder / FILE_NAME]:
        for exercise, entry in _read(path).items():
            if isinstance(entry, dict) and _rank(entry) >= _rank(found.get(exercise, {})):
                found[exercise] = entry
    return found


def _rank(entry: dict) -> tuple[bool, str]:
    """Recorded by the lesson's own notebook first, then the newest."""
    own = entry.get("notebook") is not None and entry.get("notebook") == entry.get("lesson")
    return own, entry.get("when", "")


def where_you_are(outcomes: dict[str, dict], lesson: str | None = None) -> str | None:
    """The lesson the learner is in: ``lesson`` where given (a lesson's last cell names its
    own), else the running notebook's where it is a lesson, else the lesson of the self-check
    run last; None before any."""
    from .exercises import EXERCISES

    lessons = {exercise.lesson for exercise in EXERCISES.values()}
    if lesson:
        return lesson
    if notebook() in lessons:
        return notebook()
    latest = max(outcomes.values(), default={},  # "at": seconds; older files have "when" only
                 key=lambda entry: (_seconds(entry), str(entry.get("when", ""))))
    return latest.get("lesson") if latest.get("lesson") in lessons else None


def _seconds(entry: dict) -> float:
    at = entry.get("at", 0.0)
    return float(at) if isinstance(at, (int, float)) else 0.0


def table(folder: Path | None = None, lesson: str | None = None) -> list[dict]:
    """One row per exercise of the course, in course order: lesson, exercise, outcome, hint,
    when, and whether it is the next one to do: the first not passed in the lesson the learner
    is in (``where_you_are``: ``lesson``, else the notebook's, else the last self-check's);
    then the first in a lesson skipped at the course's start: one before the first lesson
    begun, where the learner has begun another lesson besides this one (learner trial 82: 00
    never opened was skipped for 03 after 01 and 02, where the README says to start at 00);
    else the first in the lessons after it, else anywhere. A learner who began only this
    lesson (or a solution notebook run on its own) started here on purpose, and lessons left
    between two begun are skips the still-open line and the counts show. The summary and the
    progress view both read it, so they name the same next exercise."""
    from .exercises import EXERCISES

    outcomes = recorded(folder)
    lesson = where_you_are(outcomes, lesson)
    rows = []
    for name, exercise in sorted(EXERCISES.items(), key=lambda item: item[1].lesson):
        entry = outcomes.get(name, {})
        rows.append({"lesson": exercise.lesson, "exercise": name,
                     "outcome": entry.get("outcome", NOT_TRIED), "hint": entry.get("hint", ""),
                     "when": entry.get("when", ""), "next": False})
    open_rows = [row for row in rows if row["outcome"] != PASSED]
    begun = sorted({row["lesson"] for row in rows if row["outcome"] != NOT_TRIED} | (
        {lesson} if lesson else set()))
    skipped_at_start = [row for row in open_rows if len(begun) > 1 and row["lesson"] < begun[0]]
    upcoming = (next((row for row in open_rows if row["lesson"] == lesson), None)
                or next(iter(skipped_at_start), None)
                or next((row for row in open_rows if lesson and row["lesson"] > lesson), None)
                or next(iter(open_rows), None))
    if upcoming:
        upcoming["next"] = True
    return rows


SYMBOLS = {PASSED: "✓", FAILED: "✗", NOT_STARTED: "…", NOT_TRIED: "·"}
LESSONS_PER_LINE = 5
STILL_OPEN = "Still open in lessons you began before this one"


def summary(folder: Path | None = None, lesson: str | None = None) -> str:
    """Where you stand, in a few lines: this lesson's exercises one a line (a failure with its
    hint), every lesson's count on one line, the next exercise to do, and what is still open
    in the lessons begun before this one (a lesson not begun shows in the counts alone)."""
    rows = table(folder, lesson)
    here = [row for row in rows if row["lesson"] == lesson]
    lines = [f"This lesson ({lesson}):"] if here else []
    width = max((len(row["exercise"]) for row in here), default=0)
    for row in here:
        detail = f": {row['hint']}" if row["outcome"] == FAILED and row["hint"] else ""
        lines.append(f"  {SYMBOLS[row['outcome']]} {row['exercise']:<{width}}  "
                     f"{row['outcome']}{detail}")
    counts: dict[str, list[int]] = {}
    for row in rows:
        count = counts.setdefault(row["lesson"], [0, 0])
        count[0] += row["outcome"] == PASSED
        count[1] += 1
    done = sum(passed for passed, _ in counts.values())
    lines.append(f"Course: {done} of {len(rows)} exercises pass their self-check.")
    lessons = [f"{name.split('_')[0]} {passed}/{total}" + (" ✓" if passed == total else "")
               for name, (passed, total) in counts.items()]
    # five lessons a line: a notebook's output wraps a longer one anywhere, even inside "12"
    for start in range(0, len(lessons), LESSONS_PER_LINE):
        lines.append(("By lesson: " if start == 0 else " " * len("By lesson: "))
                     + " · ".join(lessons[start:start + LESSONS_PER_LINE]))
    upcoming = next((row for row in rows if row["next"]), None)
    if upcoming is None:
        lines.append("All done.")
    elif here and upcoming["lesson"] < lesson:
        lines.append(f"This lesson is done. Next: {upcoming['exercise']} in "
                     f"{upcoming['lesson']}, where the course starts.")
    elif here and upcoming["lesson"] != lesson:
        lines.append(f"This lesson is done. Next: {upcoming['exercise']} in "
                     f"{upcoming['lesson']}.")
    else:
        lines.append(f"Next: {upcoming['exercise']} in {upcoming['lesson']}.")
    # one rule in every lesson, said in the line itself: what is open in the lessons begun
    # before this one; a lesson not begun is in the counts above, never listed here
    still_open = _still_open([row for row in rows if lesson and row["lesson"] < lesson])
    if still_open:
        lines.append(f"{STILL_OPEN}: {still_open}.")
    return "\n".join(lines)


def _still_open(rows: list[dict]) -> str:
    """The open exercises of ``rows`` in the lessons begun, by name or count ('Softplus in 01;
    2 exercises in 03'); a lesson whose every exercise is untried is left out."""
    by_lesson: dict[str, list[dict]] = {}
    for row in rows:
        by_lesson.setdefault(row["lesson"], []).append(row)
    begun = []
    for name, lesson_rows in by_lesson.items():
        number = name.split("_")[0]
        open_rows = [row["exercise"] for row in lesson_rows if row["outcome"] != PASSED]
        if open_rows and not all(row["outcome"] == NOT_TRIED for row in lesson_rows):
            begun.append(f"{open_rows[0]} in {number}" if len(open_rows) == 1
                         else f"{len(open_rows)} exercises in {number}")
    return "; ".join(begun)


def show_progress(lesson: str | None = None, folder: Path | None = None) -> None:
    """Print where you stand: this lesson's exercises, every lesson's count, and what is next."""
    print(summary(folder, lesson))
