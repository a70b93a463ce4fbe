"""The instructor's workflow on nbgrader's own CLI: release, autograde, points given by hand
(manual), feedback, grades, and the class's mistakes at a glance (insight).

The course root (default ``instructor/``, or $COURSE_ROOT) uses nbgrader's layout:
source/ release/ submitted/<student>/<lesson>/ autograded/ feedback/ gradebook.db, plus
.autograder/ (the batch ledger). Autograding runs in parallel batches (``grader.batch``).
Run as ``python -m grader COMMAND`` (the Makefile's release, autograde, feedback, grades).
"""

import argparse
import hashlib
import json
import os
import re
from collections import Counter
from pathlib import Path

import nbformat

from nbgrader.api import Gradebook

from . import batch, releases
from .gradebook import db_url
from .grades_csv import export_grades, grades_summary, kept_rows
from .insight import class_insight, has_autograded
from .insight_parts import earlier_sections
from .insight_report import text_report, write_reports
from .ledger import STATE
from .lessons import ROOT, lesson_names, resolve_lessons, source_notebook
from .manual import FILE_COLUMNS, ManualGradeError, give, give_file
from .feedback_run import feedback  # noqa: F401 (python -m grader feedback)
from .nbgrader_cli import nbgrader, nbgrader_errors, nbgrader_streamed, prepare_course_root

DEFAULT_ROOT = ROOT / "instructor"
DESCRIPTION = " ".join(__doc__.split("\n\n")[0].split())  # --help: the first paragraph, whole


def course_root() -> Path:
    return Path(os.environ.get("COURSE_ROOT", DEFAULT_ROOT)).resolve()


SOURCES = f"{STATE}/sources.json"  # the hash of each source notebook `release` last wrote


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def release(root: Path, lessons: list[str], *, overwrite: bool = False,
            regrade: bool = False, workers: int | None = None) -> list[str]:
    """Write each lesson's source notebook from ``lessons/`` and release it with nbgrader
    generate_assignment; return the lessons that could not be released. A source notebook the
    instructor edited since (nbgrader's usual way to add a test or change points) is kept and
    released as edited, unless ``overwrite``; a lesson of the instructor's own (only in source/)
    is released as it is. nbgrader refuses to add or remove test or answer cells under existing
    submissions: such a lesson is left as it was, with the command that releases it anyway
    (``regrade``: every submission is graded again, hand-given marks kept)."""
    prepare_course_root(root)
    record_path = root / SOURCES
    written = json.loads(record_path.read_text()) if record_path.exists() else {}
    for lesson in lessons:
        target = root / "source" / lesson / f"{lesson}.ipynb"
        edited = target.exists() and written.get(lesson) != _digest(target)
        if lesson in lesson_names() and (overwrite or not edited):
            target.parent.mkdir(parents=True, exist_ok=True)
            nbformat.write(source_notebook(lesson), target)
            written[lesson] = _digest(target)
        elif edited and lesson in lesson_names():
            print(f"keeping your edited {target.relative_to(root)} (--overwrite-sources "
                  f"replaces it with lessons/{lesson}.py)")
        if target.exists() and (tagged := releases.tag_test_cells(target)):
            print(releases.tagged_line(lesson, tagged))
        record_path.parent.mkdir(parents=True, exist_ok=True)
        record_path.write_text(json.dumps(written, indent=1, sort_keys=True))
    if len(lessons) > 1 and _generate_all(root, lessons):
        return []
    refused = []
    for lesson in lessons:
        if not _generate(root, lesson, regrade=regrade, workers=workers):
            refused.append(lesson)
    return refused


_CONVERTING = re.compile(r"Converting notebook (\S+\.ipynb)")


def _generate_all(root: Path, lessons: list[str]) -> bool:
    """Release every lesson of the root in one nbgrader run (nbgrader globs the assignment id:
    one start-up, not one per lesson); False when ``lessons`` are not all of the root's or
    nbgrader refused one: each is then released alone."""
    if set(lessons) != {path.name for path in (root / "source").iterdir() if path.is_dir()}:
        return False
    print(f"releasing {len(lessons)} lessons in one nbgrader generate_assignment run "
          f"(a few seconds each):", flush=True)
    process = nbgrader_streamed("generate_assignment", "*", "--force", "--log-level=INFO",
                                root=root)
    started = 0
    for line in process.stdout:
        if found := _CONVERTING.search(line):
            started += 1
            print(f"  {Path(found[1]).parent.name} ({started}/{len(lessons)})", flush=True)
    if process.wait() != 0:
        print("nbgrader refused one of them: releasing each lesson alone", flush=True)
        return False
    for lesson in lessons:
        releases.record(root, lesson)
        print(f"released {lesson} -> {root / 'release' / lesson}")
    return True


def _generate(root: Path, lesson: str, *, regrade: bool, workers: int | None) -> bool:
    done = nbgrader("generate_assignment", lesson, "--force", "--log-level=ERROR", root=root,
                    check=False, capture=True)
    said = (done.stdout + done.stderr).strip()
    if done.returncode == 0:
        releases.record(root, lesson)
        print(f"released {lesson} -> {root / 'release' / lesson}")
        return True
    if releases.CHANGED_CELLS not in said:
        print(f"NOT released {lesson}: nbgrader generate_assignment failed:\n"
              f"{nbgrader_errors(said)}")
        return False
    count = releases.submission_count(root, lesson)
    if not regrade:
        print(f"NOT released {lesson}: its source adds or removes a test or answer cell, and "
              f"{count} submissions were graded against the old cells (nbgrader will not change "
              f"them under existing grades). To release it and grade every submission again, "
              f"keeping your manual grades and comments: make release LESSONS={lesson} "
              f"REGRADE=1 (python -m grader release {lesson} --regrade)")
        return False
    backup, marks = releases.remove_for_rerelease(root, lesson, nbgrader)
    nbgrader("generate_assignment", lesson, "--force", "--log-level=ERROR", root=root,
             capture=True)
    releases.record(root, lesson)
    print(f"released {lesson} again -> {root / 'release' / lesson}; regrading its {count} "
          f"submissions (the old gradebook is copied to {backup.relative_to(root)})", flush=True)
    kept = Counter()  # each submission's manual marks go back before its line gives its score

    def put_back(student: str, lesson: str) -> None:
        kept.update(releases.restore_marks(root, [mark for mark in marks
                                                  if mark[2][1:] == (lesson, student)]))

    autograde(root, [lesson], workers=workers, force=True, each=False, written=put_back)
    print(releases.kept_marks_line(kept, Counter(mark[0] for mark in marks)))
    return True


def refused_line(refused: list[str], asked: int = 0) -> str:
    """The last line of a release that left lessons out (of ``asked``): expected, not a crash,
    and why the status is not 0 (so that ``make release && make autograde`` stops until you
    choose)."""
    others = "; the other lessons were released" if asked > len(refused) else ""
    return (f"not released: {', '.join(refused)} (why: above{others}). "
            "Exit status 1, so that `make release && make autograde` stops here; make adds "
            "its own line, `make: *** [Makefile:..: release] Error 1`.")


def course_lessons(root: Path) -> list[str]:
    """The course's lessons and any the instructor added to this course root's source/."""
    own = {path.name for path in (root / "source").glob("*") if path.is_dir()}
    return sorted(set(lesson_names()) | own)


def released(root: Path) -> set[str]:
    """The lessons released in this course root (assignments in its gradebook)."""
    with Gradebook(db_url(root)) as gradebook:
        return {assignment.name for assignment in gradebook.assignments}


def autograde(root: Path, lessons: list[str], *, workers: int | None = None,
              scheduler: str | None = None, force: bool = False,
              students: list[str] | None = None, each: bool = True,
              expected: tuple[str, ...] = (), written=None) -> batch.Summary:
    """Autograde every new, changed or failed submission, in parallel (see ``grader.batch``):
    a line per submission as it finishes unless not ``each``, then the counts and the notebooks
    worth a look (those with a status in ``expected`` are counted only); ``written``: see
    ``batch.autograde``."""
    if not batch.submissions(root, lessons, students):
        print(f"nothing to grade: no {root / 'submitted'}/<student>/<lesson>/ folders")
        return batch.Summary()
    where = f"Dask scheduler {scheduler}" if scheduler else f"{workers or os.cpu_count()} workers"
    print(f"autograding {', '.join(lessons)} in {root} with {where}", flush=True)
    summary = batch.autograde(root, lessons, workers=workers, scheduler=scheduler, force=force,
                             students=students, each=each, written=written)
    print(summary.line())
    if summary.had_marks:  # a regrade of submissions with marks by hand: nbgrader keeps them
        print(f"marks given by hand on the regraded submissions: "
              f"{releases.kept_marks_line(summary.kept_marks, summary.had_marks, copied=False)}")
    if summary.report(expected=expected):
        print(summary.report(expected=expected))
    if summary.sandbox.startswith("NONE"):
        print(f"WARNING: learner code ran WITHOUT a sandbox: {summary.sandbox[4:].strip(' ()')}")
    elif summary.sandbox:
        print(f"sandbox: {summary.sandbox}")
    if summary.failed:
        print(f"grader errors are logged in {root / STATE / 'errors.log'}; "
              "rerun `make autograde` to retry them")
    return summary


def grades(root: Path, output: Path, lessons: list[str] | None = None) -> None:
    """The grades CSV: scores per student, lesson and notebook, with a status and a reason; and
    on screen, how many notebooks have each status and the ones to look at. With ``lessons``,
    only their rows are replaced and shown; the CSV keeps the other lessons' rows as the last run
    left them, and the line says so (as ``insight`` with lessons named)."""
    kept = len(kept_rows(output, lessons)) if lessons else 0
    print(grades_summary(export_grades(root, output, lessons), output, lessons, kept))


def insight(root: Path, lessons: list[str], folder: Path, *, names: bool = False,
            partial: bool = False) -> None:
    """What the class got wrong, per lesson and exercise (``grader.insight``), from what
    autograde recorded: on screen, and as a page, a CSV and figures in ``folder``; a
    ``partial`` run (lessons named) replaces only those lessons' parts of them."""
    found, skipped = class_insight(root, lessons)
    page = folder / "insight.html"
    if not found and not (partial and set(earlier_sections(page)) & set(skipped)):
        kept = f"; the page is unchanged: {page}" if partial and page.exists() else ""
        print(f"nothing to show for {', '.join(skipped)}: nobody has handed "
              f"{'it' if len(skipped) == 1 else 'them'} in yet{kept}" if partial else
              "nothing to show: nobody has handed in any lesson yet")
        return
    print(text_report(found, skipped))
    written = write_reports(found, skipped, folder, names=names, partial=partial)
    shown = ("with learner ids" if names else
             "counts only; `make insight NAMES=1` (--names) adds learner ids")
    figures = sum(insight.lesson in written for insight in found)
    scope = (f"updated for {', '.join(lessons)}, the other lessons as their last run left "
             "them" if partial else "every lesson")
    print(f"page: {written['html']} ({shown}; {scope}); one row per learner and exercise: "
          f"{written['csv']}; {figures} figure{'' if figures == 1 else 's'} in {folder}")


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m grader", description=DESCRIPTION)
    parser.add_argument("command", choices=["release", "autograde", "manual", "feedback",
                                            "grades", "insight", "add-test"])
    parser.add_argument("lessons", nargs="*",
                        help="lessons, by name, number (07) or a prefix of the name (default: "
                             "all)")
    parser.add_argument("--output", default=None,
                        help="grades: the CSV (default: ROOT/grades.csv); insight: the folder "
                             "of its page, CSV and figures (default: ROOT/insight)")
    parser.add_argument("--names", action="store_true",
                        help="insight: show learner ids on the HTML page too (the CSV always "
                             "has them)")
    parser.add_argument("--workers", type=int, default=None,
                        help="parallel grading processes; feedback: lessons written at once "
                             "(default: the number of cores)")
    parser.add_argument("--scheduler", default=None,
                        help="grade on a Dask cluster: its scheduler address, or 'local'")
    parser.add_argument("--force", action="store_true",
                        help="autograde: regrade every submission, not only new, changed or "
                             "failed ones; feedback: write every page, current ones too")
    parser.add_argument("--student", action="append", dest="students", metavar="ID",
                        help="autograde: only this student (repeat for several); manual: the "
                             "learner")
    parser.add_argument("--exercise", default=None,
                        help="manual: the exercise (its graded cell, e.g. MyLinearFunction)")
    parser.add_argument("--points", type=float, default=None,
                        help="manual: the points given by hand (replacing the automatic ones)")
    parser.add_argument("--comment", default=None,
                        help="manual: the comment on the learner's answer ('' clears it)")
    parser.add_argument("--file", default=None,
                        help="manual: many grades at once from a CSV file with the columns "
                             f"{', '.join(FILE_COLUMNS)} (a header row first); any bad row "
                             "changes nothing")
    parser.add_argument("--name", default=None,
                        help="add-test: the new test cell's name (its grade_id)")
    parser.add_argument("--after", default=None,
                        help="add-test: the test cell it follows (default: the last one)")
    parser.add_argument("--automatic", action="store_true",
                        help="manual: drop the points given by hand, back to the automatic ones")
    parser.add_argument("--overwrite-sources", action="store_true",
                        help="release: replace source notebooks you edited with lessons/*.py")
    parser.add_argument("--regrade", action="store_true",
                        help="release: a lesson whose test or answer cells changed under "
                             "existing submissions is released anyway and every submission "
                             "graded again (manual grades and comments kept)")
    args = parser.parse_args()
    root = course_root()
    try:  # a lesson's number or a prefix of its name will do: 07, 07_out
        named = resolve_lessons(args.lessons, course_lessons(root))
    except ValueError as error:
        parser.error(f"unknown lessons: {error}")
    lessons = named or course_lessons(root)
    if args.command not in ("release", "add-test") and not (root / "gradebook.db").exists():
        parser.error(f"{root} has no gradebook yet: run `make release` first")
    if args.command == "insight" and not has_autograded(root):
        parser.error(f"{root} has no autograde run yet: run `make autograde` first")
    prepare_course_root(root)
    if args.command == "add-test":
        if len(named) != 1 or not args.name or not args.file or args.points is None:
            parser.error("add-test takes one lesson, --name, --points and --file (the test's "
                         "code), e.g. python -m grader add-test 03 --name scale_positive "
                         "--points 1 --file my_test.py [--after FakeQuantize]")
        from .added_tests import add_test_cell

        try:
            print(add_test_cell(root, named[0], args.name, Path(args.file).read_text(),
                                args.points, args.after))
        except (ValueError, OSError) as error:
            raise SystemExit(f"add-test: {error}") from None
        return
    if args.command == "manual" and args.file:
        if named or args.students or args.exercise or args.points is not None \
                or args.comment is not None or args.automatic:
            parser.error("manual --file takes everything from the file: no lesson, --student, "
                         "--exercise, --points, --comment or --automatic beside it")
        known = course_lessons(root)
        try:
            lines = give_file(root, Path(args.file),
                              lambda lesson: resolve_lessons([lesson], known)[0])
        except ManualGradeError as error:
            raise SystemExit(f"manual: {error}") from None
        print("\n".join(lines + [f"{len(lines)} row{'' if len(lines) == 1 else 's'} given; run "
                                 "`make grades` and `make feedback` to show them"]))
        return
    if args.command == "manual":
        if len(named) != 1 or not args.students or len(args.students) != 1 or not args.exercise:
            parser.error("manual takes one lesson, one --student and one --exercise, e.g. "
                         "python -m grader manual 02 --student alice --exercise "
                         "MyLinearFunction --points 1.5 --comment 'right idea'")
        try:
            print(give(root, named[0], args.students[0], args.exercise, points=args.points,
                       comment=args.comment, automatic=args.automatic))
        except ManualGradeError as error:
            raise SystemExit(f"manual: {error}") from None
        print("run `make grades` and `make feedback` to show it")
        return
    if args.command in ("autograde", "feedback"):
        lessons = [lesson for lesson in lessons if lesson in released(root)]
    if args.command == "release":
        if refused := release(root, lessons, overwrite=args.overwrite_sources,
                              regrade=args.regrade, workers=args.workers):
            raise SystemExit(refused_line(refused, len(lessons)))
    elif args.command == "autograde":
        try:
            autograde(root, lessons, workers=args.workers, scheduler=args.scheduler,
                      force=args.force, students=args.students)
        except KeyboardInterrupt:
            raise SystemExit("interrupted: run `make autograde` again to grade the rest") from None
    elif args.command == "feedback":
        if not feedback(root, lessons, workers=args.workers, force=args.force):
            raise SystemExit(1)
    elif args.command == "insight":
        insight(root, lessons, Path(args.output) if args.output else root / "insight",
                names=args.names, partial=bool(named))
    else:
        grades(root, Path(args.output) if args.output else root / "grades.csv", named)


if __name__ == "__main__":
    main()
