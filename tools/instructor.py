"""The instructor's workflow on nbgrader's own CLI: release, autograde, feedback, grades.

The course root (default ``instructor/``, or $COURSE_ROOT) uses nbgrader's layout:
source/ release/ submitted/<student>/<lesson>/ autograded/ feedback/ gradebook.db.
"""

import argparse
import os
import time
from pathlib import Path

import nbformat

from autograder.nbgrader_cli import nbgrader, prepare_course_root
from tools.notebooks import ROOT, lesson_names, source_notebook

DEFAULT_ROOT = ROOT / "instructor"


def course_root() -> Path:
    return Path(os.environ.get("COURSE_ROOT", DEFAULT_ROOT)).resolve()


def release(root: Path, lessons: list[str]) -> None:
    """Write each lesson's source notebook and release it with nbgrader generate_assignment."""
    prepare_course_root(root)
    for lesson in lessons:
        folder = root / "source" / lesson
        folder.mkdir(parents=True, exist_ok=True)
        nbformat.write(source_notebook(lesson), folder / f"{lesson}.ipynb")
        nbgrader("generate_assignment", lesson, "--force", "--log-level=WARN", root=root)
        print(f"released {lesson} -> {root / 'release' / lesson}")


def submissions(root: Path, lessons: list[str]) -> list[tuple[str, str]]:
    """(student, lesson) for every submitted folder of a released lesson."""
    submitted = root / "submitted"
    return sorted((student.name, lesson)
                  for student in submitted.glob("*") if student.is_dir()
                  for lesson in lessons if (student / lesson).is_dir())


def autograde(root: Path, lessons: list[str]) -> None:
    """Autograde every submission, one nbgrader run each, with progress."""
    todo = submissions(root, lessons)
    if not todo:
        print(f"nothing to grade: no {root / 'submitted'}/<student>/<lesson>/ folders")
        return
    start = time.monotonic()
    for done, (student, lesson) in enumerate(todo, 1):
        began = time.monotonic()
        result = nbgrader("autograde", lesson, "--student", student, "--force",
                          "--log-level=WARN", root=root, check=False, capture=True)
        status = "ok" if result.returncode == 0 else f"FAILED (exit {result.returncode})"
        elapsed = time.monotonic() - start
        eta = elapsed / done * (len(todo) - done)
        print(f"[{done}/{len(todo)}] {student} {lesson}: {status} "
              f"({time.monotonic() - began:.1f} s, ETA {eta:.0f} s)", flush=True)
        if result.returncode:
            print(result.stderr[-2000:])


def feedback(root: Path, lessons: list[str]) -> None:
    for lesson in lessons:
        nbgrader("generate_feedback", lesson, "--force", "--log-level=WARN", root=root)
    print(f"feedback in {root / 'feedback'}")


def grades(root: Path, output: Path) -> None:
    nbgrader("export", f"--to={output}", "--log-level=WARN", root=root)
    print(f"grades written to {output}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["release", "autograde", "feedback", "grades"])
    parser.add_argument("lessons", nargs="*", help="lesson names (default: all)")
    parser.add_argument("--output", default=None, help="grades CSV (default: ROOT/grades.csv)")
    args = parser.parse_args()
    unknown = sorted(set(args.lessons) - set(lesson_names()))
    if unknown:
        parser.error(f"unknown lessons {unknown}; known: {lesson_names()}")
    lessons, root = args.lessons or lesson_names(), course_root()
    if args.command != "release" and not (root / "gradebook.db").exists():
        parser.error(f"{root} has no gradebook yet: run `make release` first")
    if args.command == "release":
        release(root, lessons)
    elif args.command == "autograde":
        autograde(root, lessons)
    elif args.command == "feedback":
        feedback(root, lessons)
    else:
        grades(root, Path(args.output) if args.output else root / "grades.csv")


if __name__ == "__main__":
    main()
