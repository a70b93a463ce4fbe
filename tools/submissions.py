"""Make learner submissions from released notebooks: solved, untouched, or with a mistake
(the mistakes themselves live in tools/catalogue).

A known-good submission to try grading on, handed in now as learner ``known-good`` (the
released notebook with the source's solutions written into its answer cells):
``COURSE_ROOT=trial .venv/bin/python -m tools.submissions 05 [11 ...] [--student NAME]``, in
the course root ``COURSE_ROOT`` names (default ``instructor/``): a trial root, not the term's,
as it is graded and counted like a learner (it says so where other learners' submissions are)."""

import argparse
import copy
import sys
from datetime import datetime, timezone
from pathlib import Path

import nbformat

from grader.notebook_format import without_solution_markers


def _cell(notebook, grade_id: str):
    for cell in notebook.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == grade_id:
            return cell
    raise KeyError(f"no cell with grade_id {grade_id!r}")


def solved(released: nbformat.NotebookNode, source: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """The released notebook with every answer cell filled in from the source's solution."""
    notebook = copy.deepcopy(released)
    for cell in notebook.cells:
        metadata = cell.metadata.get("nbgrader", {})
        if metadata.get("solution"):
            answer = _cell(source, metadata["grade_id"]).source
            cell.source = without_solution_markers(answer)
    return notebook


def with_answer(notebook: nbformat.NotebookNode, grade_id: str, code: str) -> nbformat.NotebookNode:
    """A copy whose answer cell ``grade_id`` holds ``code``."""
    changed = copy.deepcopy(notebook)
    _cell(changed, grade_id).source = code
    return changed


def with_cell_before(notebook: nbformat.NotebookNode, grade_id: str,
                     code: str) -> nbformat.NotebookNode:
    """A copy with a new learner code cell placed just before cell ``grade_id``."""
    changed = copy.deepcopy(notebook)
    index = changed.cells.index(_cell(changed, grade_id))
    cell = nbformat.v4.new_code_cell(code)
    cell.id = f"learner-{index}"
    changed.cells.insert(index, cell)
    return changed


def write_solved(root: Path, lesson: str, student: str, replace: bool = False) -> list[Path]:
    """Hand in ``lesson`` as ``student`` now: each released notebook of the course root
    ``root`` with every answer cell holding the source notebook's solution (the course root's
    own source, with any test cell you added, else the lesson's), and a timestamp.txt, under
    submitted/<student>/<lesson>/. Raises FileExistsError where that folder exists (a learner's
    submission?) unless ``replace``, and FileNotFoundError where the lesson is not released."""
    from grader.lessons import source_notebook

    released = sorted((root / "release" / lesson).glob("*.ipynb"))
    if not released:
        raise FileNotFoundError(f"{lesson} is not released in {root}: `make release "
                                f"LESSONS={lesson}` first")
    folder = root / "submitted" / student / lesson
    if folder.exists() and not replace:
        raise FileExistsError(f"{folder} exists: --replace to write over it")
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for path in released:
        own = root / "source" / lesson / path.name
        source = (nbformat.read(own, as_version=4) if own.exists()
                  else source_notebook(lesson))
        nbformat.write(solved(nbformat.read(path, as_version=4), source), folder / path.name)
        written.append(folder / path.name)
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f UTC")  # nbgrader's
    (folder / "timestamp.txt").write_text(stamp + "\n")
    return written


def main(argv: list[str] | None = None) -> int:
    from grader.instructor import course_lessons, course_root
    from grader.lessons import resolve_lessons

    parser = argparse.ArgumentParser(prog="python -m tools.submissions", description=(
        "Hand in a known-good submission (the solutions in the released notebook) of each "
        "lesson named, to try grading on: `make autograde` should give it full marks."))
    parser.add_argument("lessons", nargs="+", help="lessons, as `make release LESSONS=` names "
                                                   "them (05, 05_checkpointing)")
    parser.add_argument("--student", default="known-good", help="the learner id (known-good)")
    parser.add_argument("--replace", action="store_true", help="write over an earlier one")
    args = parser.parse_args(argv)
    root = course_root()
    try:
        for lesson in resolve_lessons(args.lessons, course_lessons(root)):
            for path in write_solved(root, lesson, args.student, args.replace):
                print(f"wrote {path}")
    except (ValueError, OSError) as error:
        print(error, file=sys.stderr)
        return 1
    others = sorted(path.name for path in (root / "submitted").glob("*")
                    if path.is_dir() and path.name != args.student)
    if others:  # a term's root: the known-good learner is graded and counted among them
        print(f"note: {root} holds the submissions of {len(others)} other learner"
              f"{'s' if len(others) > 1 else ''} ({', '.join(others[:3])}"
              f"{', ...' if len(others) > 3 else ''}): {args.student} is graded and counted "
              "like a learner in its grades.csv and insight; a trial root keeps it apart "
              "(COURSE_ROOT=trial make release, then this command and make autograde there)",
              file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
