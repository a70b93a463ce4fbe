"""Class insight written out: lines for the terminal, a CSV for spreadsheets (one row per
learner, exercise and mistake), and a self-contained HTML page (tables and figures embedded, no
server needed). The page and the figures show counts only; learner ids appear on the page only
when asked for (``names``), since pages get shared."""

import base64
import csv
import html
import re
import time
from pathlib import Path

from . import one_line
from .insight import BEFORE_ADDED, ExerciseInsight, LessonInsight
from .insight_figures import figure_bytes, lesson_figure
from .insight_parts import (earlier_rows, earlier_sections, earlier_skipped,
                            names_shown, section)
from .ledger import STATE

SHOWN = 12  # learners named per group on the terminal
# section: the exercise's own, on every row (group by it); taught_in: for a named mistake, the
# section that teaches the point it misses (the exercise's own unless mistake_sections names one)
CSV_COLUMNS = ["lesson", "exercise", "section", "student_id", "result", "fraction_of_points",
               "mistake", "named", "explanation", "taught_in", "hint", "also_fails"]


def lesson_summary(insight: LessonInsight, titled: bool = True, names: bool = False,
                   shown: int | None = None) -> str:
    """``00_template (its title): 13 graded`` and what is missing, in one line: the learners of
    the class who did not hand the lesson in are counted (and with ``names`` named, the first
    ``shown`` of them)."""
    parts = [f"{len(insight.graded)} learners graded"]
    if insight.not_submitted:
        who = _listed(insight.not_submitted, shown) if names else ""
        parts.append(f"not handed in: {len(insight.not_submitted)}" + (f" ({who})" if who
                                                                        else ""))
    if insight.not_graded:
        parts.append(f"{len(insight.not_graded)} submitted but not graded yet "
                     "(`make autograde`)")
    if insight.grader_failed:
        parts.append(f"the grader failed on {len(insight.grader_failed)} (`make autograde` "
                     f"retries them; {STATE}/errors.log says why)")
    if insight.unrecorded:
        parts.append(f"{len(insight.unrecorded)} graded before mistakes were recorded "
                     f"(`python -m grader autograde {insight.lesson} --force` records them)")
    if not insight.exercises:
        parts.append("no verdict to show yet")
    return (f"{insight.lesson} ({insight.title}): " if titled else "") + ", ".join(parts)


# How the per-lesson line of notebook-level faults names a fault kind where its id says too little
NOTEBOOK_FAULT_WORDS = {"unanswered": "unanswered (handed in unchanged)",
                        "cell-error": "cell-error (a cell of the learner's own raised)"}


def notebook_faults_line(insight: LessonInsight, names: bool = False,
                         shown: int | None = None) -> str:
    """One line for what went wrong with whole notebooks of the lesson, which no exercise's row
    shows: "notebook faults: 1 kernel-died, 1 cell-error (...), 1 unanswered (handed in
    unchanged), 1 deleted-test-cell; grades.csv's reason says each" (each kind's learners
    too with ``names``); "" when there are none."""
    if not insight.notebook_faults:
        return ""
    parts = []
    for kind, learners in insight.notebook_faults:
        who = f": {_listed(learners, shown)}" if names else ""
        parts.append(f"{len(learners)} {NOTEBOOK_FAULT_WORDS.get(kind, kind)}{who}")
    return ("notebook faults: " + "; ".join(parts)
            + " (grades.csv's reason says each, make grades lists them)")


def _listed(learners: tuple[str, ...], shown: int | None = None) -> str:
    more = len(learners) - (len(learners) if shown is None else shown)
    return ", ".join(learners[:len(learners) - more]) + (
        f" ... and {more} more (the CSV has all)" if more > 0 else "")


def exercise_summary(exercise: ExerciseInsight) -> str:
    """"Outer: 6 graded, 2 with full marks, 1 failed"; for a test added after some notebooks
    were handed in, how many of them never had its answer cell (grading put the stub of an
    exercise added with it in: not failures of theirs) and how many of the graded handed in
    before it existed ("; all 6 handed in before the test was added")."""
    no_answer = sum(failure.mistake == BEFORE_ADDED for failure in exercise.failures)
    earlier = len(exercise.handed_in_before)
    return (f"{exercise.name}: {exercise.graded} graded, {len(exercise.passed)} with full marks, "
            f"{len(exercise.failures) - no_answer} failed"
            + (f", {no_answer} with no answer cell for it (its exercise came after they handed "
               "in)" if no_answer else "")
            + (f"; {'all ' if earlier == exercise.graded else ''}{earlier}"
               f"{'' if earlier == exercise.graded else f' of the {exercise.graded}'} handed "
               "in before the test was added" if earlier else ""))


def skipped_line(skipped: list[str]) -> str:
    """One line for the lessons nobody has handed in ("" when there are none)."""
    if not skipped:
        return ""
    lessons = "1 lesson" if len(skipped) == 1 else f"{len(skipped)} lessons"
    return f"not handed in by anyone yet, skipped ({lessons}): {', '.join(skipped)}"


def text_report(insights: list[LessonInsight], skipped: list[str]) -> str:
    """What the terminal shows: per lesson and exercise, the counts and each group, most
    frequent first, with its explanation, the section that teaches it and its learners; then
    one line for the lessons nobody handed in."""
    lines, shortened = [], False
    for insight in insights:
        lines.append(lesson_summary(insight, names=True, shown=SHOWN))
        if faults := notebook_faults_line(insight, names=True, shown=SHOWN):
            lines.append(f"  {faults}")
        for exercise in insight.exercises:
            lines.append(f"  {exercise_summary(exercise)}  [{insight.label(exercise.section)}]")
            for group in exercise.groups:
                learners = ", ".join(group.students[:SHOWN])
                if len(group.students) > SHOWN:
                    learners += f" ... and {len(group.students) - SHOWN} more (the CSV has all)"
                explanation = one_line.cut(group.explanation, 240)
                shortened |= explanation != group.explanation
                said = f"{group.mistake}: {explanation}" if group.named else explanation
                lines.append(f"    {len(group.students):4d}  {said}")  # a category in words
                if group.named and group.section != exercise.section:  # the exercise's own
                    # section is on its line, above: only another one is worth a line here
                    lines.append(f"          taught in: {taught_in(insight, exercise, group)}")
                lines.append(f"          {learners}")
                if group.also:
                    lines.append(f"          {also_line(group, names=True)}")
    if shortened:
        lines.append(CUT_NOTE)
    return "\n".join(lines + [skipped_line(skipped)]).strip("\n")


CUT_NOTE = ("(… marks a hint cut short to fit a line here: the page, insight.html, and insight.csv's "
            "explanation and hint columns have each one whole)")


def also_line(group, names: bool = False) -> str:
    """"also fails: gradients (2), flops (1)": each further check the group's learners failed
    beside the one that groups them, where grading knew it (an exercise scored by weighted
    parts; an all-or-nothing battery stops at its first failure), with how many, or who."""
    return "also fails: " + ", ".join(
        f"{check} ({', '.join(who) if names else len(who)})" for check, who in group.also)


def taught_in(insight: LessonInsight, exercise, group) -> str:
    """The section of the lesson that teaches the point a named mistake misses: one
    ``mistake_sections`` gives, else the exercise's own (its questions teach it), said so."""
    own = " (the exercise's own section)" if group.section == exercise.section else ""
    return insight.label(group.section) + own


def csv_rows(insights: list[LessonInsight]) -> list[dict]:
    """One row per learner and exercise: full marks, the failure with its mistake, or
    ``not-submitted`` (in the class, the lesson not handed in: as in ``make grades``);
    ``fraction_of_points`` is the fraction of the test's points the autograder gave (1, 0, or nbgrader's partial
    credit; marks given by hand in the formgrader are not read); ``section`` is the exercise's
    own on every row and ``taught_in`` the section that teaches a named mistake's point, both
    worded as the terminal and the page word them (``LessonInsight.label``); ``also_fails``
    the further checks a failed answer failed, where grading knew them. Exercises in the
    lesson's order, each one's learners in alphabetical order."""
    rows = []
    for insight in insights:
        for exercise in insight.exercises:
            base = {"lesson": insight.lesson, "exercise": exercise.name,
                    "section": insight.label(exercise.section)}
            learners = [base | {"student_id": student, "result": "full-marks",
                                 "fraction_of_points": "1"}
                        for student in exercise.passed]
            learners += [base | {"student_id": student, "result": "not-submitted",
                                 "fraction_of_points": "0"}
                         for student in insight.not_submitted]
            for group in exercise.groups:
                hints = {f.student: f for f in exercise.failures if f.mistake == group.mistake}
                for student in group.students:
                    failure = hints[student]
                    learners.append(base | {
                        "student_id": student,
                        "result": ("handed-in-before" if group.mistake == BEFORE_ADDED
                                   else "partial" if failure.score else "failed"),
                        "fraction_of_points": f"{failure.score or 0:.4g}",
                        "mistake": group.mistake, "named": "yes" if group.named else "no",
                        "explanation": group.explanation,
                        "taught_in": insight.label(group.section) if group.named else "",
                        "hint": failure.hint, "also_fails": "; ".join(failure.also)})
            rows += sorted(learners, key=lambda row: row["student_id"])
    return rows


STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 60em; color: #222; }
h1 { font-size: 1.5em; } h2 { margin-top: 2em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; width: 100%; }
th, td { border: 1px solid #ddd; padding: 0.3em 0.5em; text-align: left; vertical-align: top; }
th { background: #f4f4f4; } td.count { text-align: right; width: 3em; }
tr.exercise td { background: #fafafa; font-weight: 600; }
code { font-size: 0.92em; } td code { font-size: 0.85em; color: #0b5394; }
td code.unnamed { color: #666; }
img { max-width: 100%; } .note { color: #555; } .section { font-weight: normal; color: #555; }
.also { color: #555; font-size: 0.92em; }
"""


def _inline(text: str) -> str:
    """``text`` as HTML, its `code spans` (as the lessons' headings write them) as code."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(text))



def lesson_table(insight: LessonInsight, names: bool = False) -> str:
    """An HTML table: each exercise's counts, then its groups (learner ids only if ``names``).
    Each named group's "taught in" is shown (``taught_in``); the column is left out when no
    group of the lesson is named (a group without a name proves no point it misses)."""
    elsewhere = any(group.named for exercise in insight.exercises
                    for group in exercise.groups)
    head = ["learners", "what went wrong (the mistake's id below)"] + (
        ["taught in"] if elsewhere else []) + (["who"] if names else [])
    rows = ["<tr>" + "".join(f"<th>{h}</th>" for h in head) + "</tr>"]
    for exercise in insight.exercises:
        rows.append(f'<tr class="exercise"><td colspan="{len(head)}">'
                    f"{html.escape(exercise_summary(exercise))} "
                    f'<span class="section">· {_inline(insight.label(exercise.section))}</span>'
                    "</td></tr>")
        for group in exercise.groups:
            kind = "" if group.named else ' class="unnamed"'
            cells = [f'<td class="count">{len(group.students)}</td>',
                     f"<td>{html.escape(group.explanation)}<br>"
                     f"<code{kind}>{html.escape(group.mistake)}</code>"
                     + (f'<br><span class="also">{html.escape(also_line(group, names))}</span>'
                        if group.also else "") + "</td>"]
            if elsewhere:
                cells.append("<td>" + (_inline(taught_in(insight, exercise, group))
                                       if group.named else "") + "</td>")
            if names:
                cells.append(f"<td>{html.escape(', '.join(group.students))}</td>")
            rows.append("<tr>" + "".join(cells) + "</tr>")
    return "<table>\n" + "\n".join(rows) + "\n</table>"


def lesson_html(insight: LessonInsight, figure_png: bytes | None, names: bool = False) -> str:
    """The lesson's heading, its summary, its figure (if it has one) and its table."""
    picture = "" if figure_png is None else (
        f'<img alt="{html.escape(insight.lesson)}: full marks and mistakes per exercise" '
        f'src="data:image/png;base64,{base64.b64encode(figure_png).decode()}">\n')
    faults = notebook_faults_line(insight, names)
    return (f'<h2 id="{html.escape(insight.lesson)}">{_inline(insight.title)}</h2>\n'
            f'<p class="note">{html.escape(lesson_summary(insight, False, names))}</p>\n'
            + (f'<p class="note notebook-faults">{html.escape(faults[:1].upper() + faults[1:])}'
               "</p>\n" if faults else "")
            + picture + (lesson_table(insight, names) if insight.exercises else ""))


def html_page(sections: dict[str, str], skipped: list[str]) -> str:
    """The whole page, self-contained: each lesson's section (``insight_parts.section``) in
    course order, then one line for the lessons nobody handed in."""
    shown = names_shown(sections)
    privacy = (f"Learner ids are shown for {', '.join(shown)} (NAMES=1, --names): share this "
               "page with care." if shown else
               "Counts only: learner ids are in insight.csv (or on this page with "
               "`make insight NAMES=1`, --names).")
    line = skipped_line(skipped)
    notes = (f'<p class="note" data-skipped="{html.escape(" ".join(skipped))}">'
             f"{html.escape(line[:1].upper() + line[1:])}.</p>" if skipped else "")
    body = "\n".join(sections[lesson] for lesson in sorted(sections))
    return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>Class insight</title><style>{STYLE}</style></head><body>\n"
            f"<h1>Class insight: what the class got wrong</h1>\n"
            f'<p class="note">From what <code>make autograde</code> recorded; each lesson says '
            f"when it was read. A named mistake was proven by a probe; the others are grouped "
            f"by what is known. {privacy}</p>\n{body}\n{notes}\n</body></html>\n")


def write_reports(insights: list[LessonInsight], skipped: list[str], folder: Path,
                  names: bool = False, partial: bool = False) -> dict[str, Path]:
    """The page, the CSV and one PNG per lesson with a verdict, in ``folder``; returns what was
    written. A ``partial`` run (some lessons only) replaces those lessons' parts of the page and
    the CSV and keeps the other lessons' parts as an earlier run wrote them; a full run
    replaces everything. A lesson without a figure now loses the one an earlier run drew."""
    folder.mkdir(parents=True, exist_ok=True)
    page, table = folder / "insight.html", folder / "insight.csv"
    ran = {insight.lesson for insight in insights} | set(skipped)
    sections = {lesson: part for lesson, part in earlier_sections(page).items()
                if lesson not in ran} if partial else {}
    written, read = {}, time.strftime("%Y-%m-%d %H:%M")
    for insight in insights:
        figure, path = None, folder / f"{insight.lesson}.png"
        if insight.exercises:
            figure = figure_bytes(lesson_figure(insight))
            path.write_bytes(figure)
            written[insight.lesson] = path
        else:
            path.unlink(missing_ok=True)
        sections[insight.lesson] = section(insight.lesson, lesson_html(insight, figure, names),
                                           read, names)
    for lesson in skipped:
        (folder / f"{lesson}.png").unlink(missing_ok=True)
    everyone_skipped = sorted(set(skipped) | (set(earlier_skipped(page)) - ran - set(sections)
                                              if partial else set()))
    rows = [row for row in earlier_rows(table) if row["lesson"] not in ran] if partial else []
    rows = sorted(rows + csv_rows(insights), key=lambda row: row["lesson"])
    with open(table, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=CSV_COLUMNS, restval="", extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    page.write_text(html_page(sections, everyone_skipped))
    return written | {"csv": table, "html": page}
