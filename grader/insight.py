"""Class insight: for each lesson and exercise, how many learners were graded, how many got full
marks, and the failures grouped by mistake, most frequent first.

A failure's group is the mistake its verdict recorded (``grader.verdict_store``): the stable id
of a mistake a probe proved, or a category of what is known (``autograder.mistakes``; a timeout,
a dead kernel or a missing notebook from the grader's own faults). Nothing is guessed, and
nothing is graded again: this reads what ``make autograde`` recorded, so it takes a moment for a
class of hundreds. Standard library only (``widgets.insight`` imports it in a notebook).
"""

import json
import os
import re
import sqlite3
from collections import Counter
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path

from autograder import mistakes
from . import verdict_store
from .faults import ADDED_LATER, BEFORE_ADDED, REASON_ORDER, RETRIED, STATUSES, put_in_answer
from .ledger import LEDGER
from .insight_layout import OWN_TEST, Layout, label, layout  # noqa: F401 (re-exported)
from .mistake_sections import SECTIONS

# Faults that leave a notebook without verdicts: every test of it fails for that reason.
UNREADABLE = ("grader-error", "invalid-notebook", "missing-notebook")
NO_VERDICT = "no-verdict"
SYNTAX_ERROR = "syntax-error"  # grades.csv's status, one vocabulary: not raised:SyntaxError
# A notebook handed in unchanged (every answer the stub): its exercises' not-implemented failures
# are this group, which says the notebook was untouched (not one exercise left undone)
UNANSWERED = "unanswered"
# Groups whose line quotes the hint most of their learners read: the error, the check, the cell
# and line that did not parse, the test that ran past the limit (and the limit)
QUOTED = (mistakes.UNNAMED_CHECK, mistakes.TIMEOUT, SYNTAX_ERROR)

CATEGORIES = {
    mistakes.NOT_IMPLEMENTED: "not answered: the stub still raises NotImplementedError",
    mistakes.WRONG_VALUE: "a wrong output or gradient, cause not proven (the hint says "
                          "only which one differs, and where)",
    mistakes.UNNAMED_CHECK: "failed a check that gives no mistake id",
    mistakes.TEST_FAILED: "an assert of the test cell failed",  # + its message (failed_assert)
    mistakes.TAMPERED: "replaced torch or the grading library while it was graded",
    mistakes.TIMEOUT: "a test ran past the cell time limit and was interrupted (an endless "
                      "loop?)",
    SYNTAX_ERROR: STATUSES[SYNTAX_ERROR],  # as grades.csv says it: none of the cell ran
    mistakes.UNKNOWN_EXERCISE: "the test cell names an exercise the grading library lacks",
    "notebook-timeout": "the notebook ran out of time before this test finished",
    "kernel-died": "the kernel died (os._exit, a crash) before or while this test ran",
    "memory-limit": "ran out of memory",
    NO_VERDICT: "no verdict: the test cell did not report one",
    BEFORE_ADDED: "handed in before this test was added: the notebook has no answer for it "
                  "(not a mistake of the learner's)",
    UNANSWERED: "not attempted: the whole notebook was handed in unchanged, every answer still "
                "the lesson's stub (the wrong file handed in?)",
} | {status: STATUSES[status] for status in UNREADABLE}


@dataclass(frozen=True)
class Failure:
    """One learner's failed exercise, as grading recorded it."""

    student: str
    mistake: str
    hint: str
    score: float | None = None
    also: tuple[str, ...] = ()  # the further checks that failed, where grading knew them


@dataclass(frozen=True)
class Group:
    """Learners who failed an exercise with the same mistake."""

    mistake: str
    explanation: str
    section: str
    students: tuple[str, ...]
    # each further check its learners also failed, with those learners, most frequent first
    also: tuple[tuple[str, tuple[str, ...]], ...] = ()

    @property
    def named(self) -> bool:
        return mistakes.is_mistake_id(self.mistake)


@dataclass(frozen=True)
class ExerciseInsight:
    name: str
    section: str
    passed: tuple[str, ...]  # full marks
    failures: tuple[Failure, ...]
    groups: tuple[Group, ...]  # most frequent first
    # the graded learners who handed in before this test was added (graded on it all the same)
    handed_in_before: tuple[str, ...] = ()

    @property
    def graded(self) -> int:
        return len(self.passed) + len(self.failures)


@dataclass(frozen=True)
class LessonInsight:
    lesson: str
    title: str
    graded: tuple[str, ...]
    not_graded: tuple[str, ...]  # submitted, not graded yet
    grader_failed: tuple[str, ...]  # the grader itself failed on it (`make autograde` retries)
    unrecorded: tuple[str, ...]  # graded before verdicts were recorded
    exercises: tuple[ExerciseInsight, ...]  # none when no learner has a verdict to read
    not_submitted: tuple[str, ...] = ()  # in the class, handed this lesson in not at all
    # heading -> how the page and terminal name it (``label``): one style for every exercise
    labels: dict = field(default_factory=dict, compare=False, hash=False)
    # what went wrong with whole notebooks (a dead kernel, a cell error, handed in unchanged, a
    # deleted test cell...): (fault kind, its learners), most serious first; not the routine
    # added-test-cell note
    notebook_faults: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def label(self, section: str) -> str:
        return self.labels.get(section, section)


def explanation(mistake: str, hints: list[str]) -> str:
    """One line for a group: a category's own words, or a named mistake's hint as most of its
    learners read it (without the inputs it failed for); for checks without an id, errors the
    learner's code raised, answer cells that did not parse and tests stopped at the time limit,
    the hint (the error, the cell and line, the test and the limit) most of them read, and
    whether others read other hints."""
    counted = Counter(without_case(hint) for hint in hints if hint)
    if (mistake in QUOTED or mistake.startswith(mistakes.RAISED)) and counted:
        common, others = counted.most_common(1)[0][0], len(counted) - 1
        kind = ("check" if mistake == mistakes.UNNAMED_CHECK else "hint" if mistake in QUOTED
                else "error")
        return common if not others else (f"{common} (and {others} other "
                                          f"{kind}{'s' if others > 1 else ''}: the CSV has each "
                                          "hint)")
    if mistake in CATEGORIES:
        return CATEGORIES[mistake]
    if mistake.endswith(INHERITED) and counted:
        return inherited(mistake, counted)
    if mistake.startswith(mistakes.RAISED):
        return f"the learner's code raised {mistake.removeprefix(mistakes.RAISED)}"
    return counted.most_common(1)[0][0] if counted else mistake


# ``autograder.dependencies``: the answer calls another exercise of the lesson that fails its own
# check, so the answer's failure is that exercise's (its hint names it)
INHERITED = "/uses-failing-exercise"
_CALLED = re.compile(r" calls your (\w+), which fails its own check")


def inherited(mistake: str, counted: Counter) -> str:
    """A uses-failing-exercise group's line: inherited from the exercise(s) its hints name."""
    called = sorted({found[1] for hint in counted if (found := _CALLED.search(hint))})
    if not called:
        return counted.most_common(1)[0][0]
    names = " or ".join(called)
    return (f"inherited from {names}: it calls the learner's {names}, which fails its own check "
            f"(that exercise's row has the mistake), so no probe of this answer can be trusted")


def without_case(hint: str) -> str:
    """``hint`` without the trailing " (with <inputs>)" that names the inputs it failed for."""
    if not hint.endswith(")"):
        return hint
    depth = 0
    for index in range(len(hint) - 1, -1, -1):
        depth += {")": 1, "(": -1}.get(hint[index], 0)
        if depth == 0:
            return hint[:index].rstrip() if hint[index:].startswith("(with ") else hint
    return hint


def _groups(failures: list[Failure], exercise_section: str, headings: frozenset
            ) -> tuple[Group, ...]:
    by_mistake: dict[tuple[str, str], list[Failure]] = {}
    for failure in failures:  # an instructor's failed asserts apart, by their messages
        said = failed_assert(failure.hint) if failure.mistake == mistakes.TEST_FAILED else ""
        by_mistake.setdefault((failure.mistake, said), []).append(failure)
    groups = []
    for (mistake, said), members in by_mistake.items():
        section = SECTIONS.get(mistake, exercise_section)
        groups.append(Group(mistake, f"{CATEGORIES[mistake]}: {said}" if said else
                            explanation(mistake, [m.hint for m in members]),
                            section if section in headings else exercise_section,
                            tuple(sorted(m.student for m in members)), _also(members)))
    return tuple(sorted(groups, key=lambda g: (-len(g.students), not g.named, g.mistake,
                                               g.explanation)))


def _also(members: list[Failure]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Each further check the group's learners failed (``Failure.also``), with who failed it,
    the most frequent first."""
    who: dict[str, list[str]] = {}
    for failure in members:
        for check in dict.fromkeys(failure.also):
            who.setdefault(check, []).append(failure.student)
    return tuple(sorted(((check, tuple(sorted(students))) for check, students in who.items()),
                        key=lambda item: (-len(item[1]), item[0])))


_FAILED_ASSERT = re.compile(r"^a test failed(?: \((?P<where>[^)]*)\))?(?::\s*(?P<said>.*)|;.*)$")


def failed_assert(hint: str) -> str:
    """What a failed assert of an instructor's test cell said, and where: "y is not 3 (line
    2)", "no message (line 1)" (``autograder.test_cells`` words the hint); the hint itself
    where it is worded otherwise (a score below the points)."""
    found = _FAILED_ASSERT.match(without_case(hint))
    if not found:
        return hint
    where = (found["where"] or "").replace(" of the test cell", "")
    return f"{found['said'] or 'no message'}" + (f" ({where})" if where else "")


def lesson_insight(root: Path, lesson: str, ledger: dict | None = None,
                   learners: set[str] | None = None) -> LessonInsight | None:
    """What the class got wrong in ``lesson``; None when nobody has handed it in. ``learners``:
    the class (``roster``), of whom those without this lesson are counted as not handed in."""
    entries = _ledger(root) if ledger is None else ledger
    submitted = {path.parent.name for path in (root / "submitted").glob(f"*/{lesson}")
                 if path.is_dir()}
    graded = {key.partition("/")[2]: entry for key, entry in entries.items()
              if key.partition("/")[0] == lesson}
    if not submitted and not graded:
        return None
    shape, records = layout(root, lesson), verdict_store.read_lesson(root, lesson)
    outcomes: dict[str, dict[str, dict | None]] = {}  # grade_id -> student -> record
    before: dict[str, set[str]] = {}  # grade_id -> who handed in before it was added
    not_graded = set(submitted) - set(graded)
    grader_failed, unrecorded = set(), set()
    faulted: dict[str, set[str]] = {}  # a notebook-level fault's kind -> its learners
    for student, entry in graded.items():
        record = records.get(student)
        if entry["status"] in RETRIED:
            grader_failed.add(student)
            continue
        for noted in entry.get("notebooks", {}).values():
            for fault in noted.get("faults", ()):
                if fault.get("kind") and fault.get("kind") != ADDED_LATER:
                    faulted.setdefault(fault["kind"], set()).add(student)
        if record is None or record["digest"] != entry["digest"]:
            unrecorded.add(student)
            continue
        for name, noted in entry.get("notebooks", {}).items():
            verdicts = record["notebooks"].get(name, {})
            later = {fault.get("cell"): put_in_answer(fault) for fault in
                     noted.get("faults", ()) if fault.get("kind") == ADDED_LATER}
            for grade_id in {**dict.fromkeys(shape.tests.get(name, ())), **verdicts}:
                found = verdicts.get(grade_id)
                if found is None and noted["status"] in UNREADABLE:
                    found = {"passed": False, "mistake": noted["status"], "hint": noted["reason"]}
                if grade_id in later:
                    before.setdefault(grade_id, set()).add(student)
                    if _unanswered(found, later[grade_id]):
                        found = {**found, "mistake": BEFORE_ADDED}
                if student in faulted.get(UNANSWERED, ()) and found and not found["passed"] \
                        and found.get("mistake") in (mistakes.NOT_IMPLEMENTED, NO_VERDICT):
                    found = {**found, "mistake": UNANSWERED}
                outcomes.setdefault(grade_id, {})[student] = found
    exercises = []
    for grade_id, by_student in outcomes.items():
        section = shape.sections.get(grade_id, "")
        passed = tuple(sorted(s for s, found in by_student.items() if found and found["passed"]))
        failures = [Failure(student, mistake_of(found),
                            (found or {}).get("hint", ""), (found or {}).get("score"),
                            tuple((found or {}).get("also", ())))
                    for student, found in sorted(by_student.items())
                    if not (found and found["passed"])]
        exercises.append(ExerciseInsight(grade_id, section, passed, tuple(failures),
                                         _groups(failures, section, shape.headings),
                                         tuple(sorted(before.get(grade_id, ())))))
    order = list(shape.sections)
    exercises.sort(key=lambda e: (order.index(e.name) if e.name in order else len(order), e.name))
    everyone = roster(root, entries) if learners is None else learners
    return LessonInsight(lesson, shape.title,
                         tuple(sorted(set(graded) - not_graded - grader_failed - unrecorded)),
                         tuple(sorted(not_graded)), tuple(sorted(grader_failed)),
                         tuple(sorted(unrecorded)), tuple(exercises),
                         tuple(sorted(everyone - submitted - set(graded))), shape.labels,
                         tuple((kind, tuple(sorted(students))) for kind, students in sorted(
                             faulted.items(),
                             key=lambda item: (REASON_ORDER.get(item[0], -1), item[0]))))


def _unanswered(found: dict | None, put_in: bool) -> bool:
    """A failure of a test added after the notebook was handed in, whose answer cell the
    notebook never had: the name it tests undefined (``NameError``: graded before grading put
    stubs in), or, where grading had to put its answer cell in (``put_in``: the note says so),
    that stub unanswered (``not-implemented``) or no verdict at all. A test added later that
    meets the learner's own stub is ``not-implemented``, as for any other exercise."""
    if not found or found["passed"]:
        return False
    mistake = found.get("mistake")
    return mistake == f"{mistakes.RAISED}NameError" or (
        put_in and mistake in (mistakes.NOT_IMPLEMENTED, NO_VERDICT, None))


def mistake_of(found: dict | None) -> str:
    """A failure's group: the mistake its verdict recorded; ``syntax-error`` for an answer cell
    that did not parse, also as notebooks graded before that name recorded it
    (``raised:SyntaxError``, though none of the cell ran)."""
    mistake = (found or {}).get("mistake") or NO_VERDICT
    if mistake == f"{mistakes.RAISED}SyntaxError" and "does not parse" in found.get("hint", ""):
        return SYNTAX_ERROR
    return mistake


def roster(root: Path, ledger: dict | None = None) -> set[str]:
    """The class: every learner in the gradebook (``nbgrader db student add``), every one who
    handed anything in, every one graded; as ``make grades`` counts them (its not-submitted
    rows). The gradebook is read with sqlite3 (no nbgrader here)."""
    learners = {path.name for path in (root / "submitted").glob("*") if path.is_dir()
                and not path.name.startswith(".")}  # not .ipynb_checkpoints
    learners |= {key.partition("/")[2] for key in (_ledger(root) if ledger is None else ledger)}
    database = root / "gradebook.db"
    if database.exists():
        try:
            with closing(sqlite3.connect(f"file:{database}?mode=ro", uri=True)) as connection:
                learners |= {row[0] for row in connection.execute("SELECT id FROM student")}
        except sqlite3.Error:
            pass  # not a gradebook (yet): the learners who handed something in
    return learners


def _ledger(root: Path) -> dict:
    try:
        return json.loads((root / LEDGER).read_text())
    except (OSError, ValueError):
        return {}


def class_insight(root: Path, lessons: list[str]) -> tuple[list[LessonInsight], list[str]]:
    """Insight for each of ``lessons`` someone handed in, and the lessons nobody did."""
    entries = _ledger(root)
    learners = roster(root, entries)
    found, skipped = [], []
    for lesson in lessons:
        insight = lesson_insight(root, lesson, entries, learners)
        (found.append(insight) if insight else skipped.append(lesson))
    return found, skipped


def has_autograded(root: Path) -> bool:
    """Has ``make autograde`` recorded anything in this course root?"""
    return (root / LEDGER).exists()


def default_root() -> Path:
    """The course root a notebook's insight reads: $COURSE_ROOT, else the notebook's folder."""
    return Path(os.environ.get("COURSE_ROOT", ".")).resolve()
