"""Course roots as ``make autograde`` leaves them, written directly (no grading): a released
lesson of two exercises, and for each learner a ledger entry and a verdict record. For the
insight tests, which read only what grading recorded."""

import json
from pathlib import Path

import nbformat

from grader import verdict_store
from grader.ledger import LEDGER

LESSON = "07_demo"
SECTIONS = {"Shift": "✎ Exercise 1 · `Shift`", "Scale": "✎ Exercise 2 · `Scale`"}


def release(root: Path, lesson: str = LESSON) -> None:
    """A released notebook: a title, a section per exercise, a test cell in each."""
    cells = [nbformat.v4.new_markdown_cell("# Lesson 07 · A demo lesson\n\nIntro.")]
    for number, (exercise, section) in enumerate(SECTIONS.items()):
        cells.append(nbformat.v4.new_markdown_cell(f"## Background {number}\n\nText."))
        cells.append(nbformat.v4.new_markdown_cell(f"## {section}\n\nWrite `{exercise}`."))
        test = nbformat.v4.new_code_cell(f'grade("{exercise}", {exercise})')
        test.metadata["nbgrader"] = {"grade": True, "solution": False, "grade_id": exercise,
                                     "points": 1, "locked": True, "schema_version": 3}
        cells.append(test)
    folder = root / "release" / lesson
    folder.mkdir(parents=True, exist_ok=True)
    nbformat.write(nbformat.v4.new_notebook(cells=cells), folder / f"{lesson}.ipynb")


def passed() -> dict:
    return {"passed": True}


def failed(mistake: str, hint: str = "a hint", score: float | None = None) -> dict:
    return {"passed": False, "score": score, "mistake": mistake, "hint": hint}


def record(root: Path, student: str, verdicts: dict[str, dict], *, lesson: str = LESSON,
           status: str = "ok", reason: str = "", submitted: bool = True,
           recorded: bool = True, faults: tuple[str, ...] = ()) -> None:
    """``student``'s graded ``lesson``: a ledger entry with the notebook's ``status`` and the
    kinds of its ``faults`` and, if ``recorded``, the verdicts grading recorded."""
    digest = f"digest-{student}"
    if submitted:
        (root / "submitted" / student / lesson).mkdir(parents=True, exist_ok=True)
    ledger_path = root / LEDGER
    ledger_path.parent.mkdir(parents=True, exist_ok=True)
    ledger = json.loads(ledger_path.read_text()) if ledger_path.exists() else {}
    ledger[f"{lesson}/{student}"] = {
        "digest": digest, "status": status, "seconds": 1.0, "graded_at": "",
        "notebooks": {lesson: {"status": status, "reason": reason, "faults": [
            {"kind": kind, "message": f"a {kind} fault", "cell": ""} for kind in faults]}}}
    ledger_path.write_text(json.dumps(ledger))
    if recorded:
        verdict_store.write(root, student, lesson, digest, {lesson: verdicts})
