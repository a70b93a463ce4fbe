"""Read a submission before grading it: find its notebook, check it is one, put back the test
cells the learner changed, and set aside files that would shadow the grader's modules.

Everything here works on plain data (file names and bytes, a reference of the released cells), so
a batch can run it anywhere, and each problem becomes a :class:`~grader.faults.Fault`.
"""

import copy
import functools
import json
import pkgutil
import sys
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

import nbformat
from nbgrader.api import Gradebook
from nbgrader.nbgraderformat import MetadataValidator

from .adopt import adopt_cells, has_metadata
from .answers import answer_faults
from .faults import COPIED_BEFORE, STUB_PUT_IN, Fault
from .notebook_format import NBGRADER_SCHEMA, RESTORED, check_schema_once, grade_id
from .releases import RELEASE_STAMP, submitted_at

FILES_LIMIT_MB = 50
# Names that would take effect before or instead of the grader's own code, whatever module set.
SPECIAL_NAMES = {"sitecustomize", "usercustomize", ".ipython", ".jupyter", ".config", ".local",
                 "matplotlibrc", ".pythonrc.py", "ipython_config.py", "ipython_kernel_config.py",
                 "jupyter_config.py", ".pth"}
IGNORED = (".ipynb_checkpoints", "__pycache__", ".DS_Store")


@dataclass
class Intake:
    """A submission ready to run: the notebook (None if unusable), the other files to put beside
    it (relative name -> bytes), and what was wrong."""

    notebook: nbformat.NotebookNode | None
    files: dict[str, bytes] = field(default_factory=dict)
    faults: list[Fault] = field(default_factory=list)


@functools.cache
def importable_names() -> frozenset[str]:
    """Top-level modules this Python can import without the current folder: a file beside the
    notebook with one of these names would shadow a module that grading relies on."""
    from .sandbox import GRADER_PACKAGES

    paths = [path for path in sys.path if path not in ("", ".")]
    names = {module.name for module in pkgutil.iter_modules(paths)}
    return frozenset(names | set(sys.stdlib_module_names) | set(sys.builtin_module_names)
                     | set(GRADER_PACKAGES) | {"grader", "tools"})


def shadowing_name(relative: str) -> str | None:
    """The module a file at ``relative`` (beside the notebook) would shadow, if any."""
    top = PurePosixPath(relative).parts[0]
    stem = top.split(".")[0]
    if top in SPECIAL_NAMES or stem in SPECIAL_NAMES or top.endswith(".pth"):
        return top
    is_module = top == stem or top.endswith((".py", ".pyc", ".so", ".pyd")) or "." not in top
    if is_module and stem in importable_names():
        return stem
    return None


def shadowing_faults(shadowing: dict[str, list[str]]) -> list[Fault]:
    """One fault per shadowed name, from {name: [files left out because of it]}."""
    faults = []
    for name, files in sorted(shadowing.items()):
        what = (f"Python or IPython would load {name} before the grader"
                if name.split(".")[0] in SPECIAL_NAMES or name.endswith(".pth")
                else f"it has the name of the module {name}, which grading imports")
        faults.append(Fault("shadowing-file", f"left out {', '.join(sorted(files))}: {what}"))
    return faults


def _find_notebook(files: dict[str, bytes], expected: str) -> tuple[str | None, list[Fault]]:
    if expected in files:
        return expected, []
    others = sorted(name for name in files if name.endswith(".ipynb") and "/" not in name)
    if len(others) == 1:
        return others[0], [Fault("renamed-notebook",
                                 f"graded {others[0]} as {expected}, the lesson's notebook")]
    found = f"found {', '.join(others)}" if others else "found no notebook"
    return None, [Fault("missing-notebook", f"no {expected} in the submission ({found})")]


def parse_notebook(name: str, data: bytes) -> tuple[nbformat.NotebookNode | None, list[Fault]]:
    """The notebook in ``data``, or None with an invalid-notebook fault saying why."""
    if not data.strip():
        return None, [Fault("invalid-notebook", f"{name} is empty")]
    try:
        text = data.decode("utf-8")
        json.loads(text)
    except UnicodeDecodeError as error:
        return None, [Fault("invalid-notebook", f"{name} is not UTF-8 text ({error.reason})")]
    except json.JSONDecodeError as error:
        return None, [Fault("invalid-notebook", f"{name} is not valid JSON: {error.msg} at line "
                                                f"{error.lineno}, column {error.colno}")]
    try:
        notebook = nbformat.reads(text, as_version=4)
        if not isinstance(notebook.get("cells"), list):
            raise ValueError("it has no list of cells")
        for cell in notebook.cells:
            if cell.get("cell_type") not in ("code", "markdown", "raw"):
                raise ValueError(f"a cell has type {cell.get('cell_type')!r}")
            if not isinstance(cell.get("source"), str):
                raise ValueError("a cell's source is not text")
            cell.setdefault("metadata", nbformat.NotebookNode())
    except Exception as error:  # nbformat raises many kinds on malformed input
        reason = str(error).splitlines()[0] if str(error) else type(error).__name__
        return None, [Fault("invalid-notebook", f"{name} is JSON but not a notebook: {reason}")]
    return notebook, []


def read_submission(files: dict[str, bytes], expected: str, reference: dict,
                    files_limit_mb: int = FILES_LIMIT_MB) -> Intake:
    """Turn a submission folder's files into an :class:`Intake` (see the module docstring)."""
    files = {name: data for name, data in files.items()
             if not any(part in IGNORED for part in PurePosixPath(name).parts)}
    name, faults = _find_notebook(files, expected)
    notebook = None
    if name is not None:
        notebook, problems = parse_notebook(name, files[name])
        faults += problems
    beside, problems = files_beside(files, files_limit_mb)
    faults += problems
    if notebook is not None:
        notebook, problems = restore_cells(notebook, reference, submitted_at(files))
        faults += problems + answer_faults(notebook, reference)
    return Intake(notebook, beside, _unique(faults))


def files_beside(files: dict[str, bytes], limit_mb: int = FILES_LIMIT_MB
                 ) -> tuple[dict[str, bytes], list[Fault]]:
    """The files to place beside the running notebook: no top-level notebook (the graded one
    holds the hidden tests), nothing that would shadow a module grading imports, and at most
    ``limit_mb`` in all, smallest first; with a fault for each file left out."""
    beside, budget, shadowing, faults = {}, limit_mb << 20, {}, []
    for relative, data in sorted(files.items(), key=lambda item: len(item[1])):
        if relative.endswith(".ipynb") and "/" not in relative:
            continue
        shadowed = shadowing_name(relative)
        if shadowed:
            shadowing.setdefault(shadowed, []).append(relative)
        elif len(data) > budget:
            faults.append(Fault("large-files", f"left out {relative} ({len(data) >> 20} MiB): "
                                               f"files beside the notebook may total "
                                               f"{limit_mb} MiB"))
        else:
            budget -= len(data)
            beside[relative] = data
    return beside, faults + shadowing_faults(shadowing)


def read_files(folder: Path) -> dict[str, bytes]:
    """Every regular file below ``folder``, by relative POSIX path (symlinks are not followed)."""
    files = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file() and not path.is_symlink():
            files[path.relative_to(folder).as_posix()] = path.read_bytes()
    return files


def _unique(faults: list[Fault]) -> list[Fault]:
    return list(dict.fromkeys(faults))


def _metadata(entry: dict) -> dict:
    metadata = {"grade": entry["grade"], "grade_id": entry["grade_id"], "locked": entry["locked"],
                "schema_version": NBGRADER_SCHEMA, "solution": entry["solution"],
                "checksum": entry["checksum"]}
    if entry["grade"]:
        metadata["points"] = entry["points"]
    return metadata


def _new_cell(entry: dict):
    """The reference cell ``entry`` as grading puts it back: a read-only or test cell whole, an
    answer cell as released (its stub, never the solution)."""
    maker = nbformat.v4.new_code_cell if entry["cell_type"] == "code" else \
        nbformat.v4.new_markdown_cell
    cell = maker(entry["source"] if entry["locked"] else entry["released_source"])
    cell.id = f"{RESTORED}{entry['grade_id']}"[:64]
    cell.metadata = {"nbgrader": _metadata(entry), "deletable": False,
                     "editable": not entry["locked"]}
    return cell


def _set_type(cell, cell_type: str) -> None:
    cell.cell_type = cell_type
    if cell_type == "code":
        cell.outputs, cell.execution_count = [], None
    else:
        cell.pop("outputs", None)
        cell.pop("execution_count", None)


def restore_cells(notebook, reference: dict, submitted_at: str | None = None
                  ) -> tuple[nbformat.NotebookNode, list[Fault]]:
    """nbgrader's sanitizing (clear outputs, deduplicate ids, overwrite cells, add missing test
    cells) done against ``reference`` instead of a database, saying what had to be put back.
    A test cell first released after ``submitted_at`` (``reference["added"]``) was never the
    learner's to delete."""
    notebook = copy.deepcopy(notebook)
    held = released_tests(notebook)
    adopted = not has_metadata(notebook, reference)
    faults = adopt_cells(notebook, reference) if adopted else []
    entries = {entry["grade_id"]: entry for entry in reference["cells"]}
    is_test = {name: entry["grade"] and not entry["solution"] for name, entry in entries.items()}
    last = {}
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
        name = grade_id(cell)
        if name in entries:
            last[name] = index
    for index, cell in enumerate(notebook.cells):
        name = grade_id(cell)
        if "nbgrader" in cell.metadata and (name not in entries or last[name] != index):
            if name in entries and is_test[name]:
                faults.append(Fault("duplicated-test-cell", f"test cell {name} appears more "
                                    "than once: graded its last copy", name))
            del cell.metadata["nbgrader"]
    for index, cell in enumerate(notebook.cells):
        name = grade_id(cell)
        if name is None:
            continue
        entry = entries[name]
        if cell.cell_type != entry["cell_type"]:
            if is_test[name]:
                faults.append(Fault("markdown-test-cell" if cell.cell_type == "markdown" else
                                    "edited-test-cell", f"test cell {name} had been turned into "
                                    f"{cell.cell_type}: graded the original", name))
            _set_type(cell, entry["cell_type"])
        if entry["locked"] and cell.source != entry["released_source"] \
                and cell.source != entry["source"]:
            if is_test[name]:
                faults.append(Fault("edited-test-cell", f"test cell {name} had been edited: "
                                    "graded the original", name))
            elif entry["cell_type"] == "code":
                faults.append(Fault("edited-locked-cell", f"read-only cell {name} had been "
                                    "edited: ran the original", name))
        if entry["locked"]:
            cell.source = entry["source"]
        cell.metadata["nbgrader"] = _metadata(entry)
    present = {grade_id(cell) for cell in notebook.cells}
    order = [entry["grade_id"] for entry in reference["cells"]]
    stubs = _stubs_for_added(notebook, reference, submitted_at, held)
    for position, name in enumerate(order):
        entry = entries[name]
        if name in present or entry["cell_type"] != "code" or not (entry["locked"]
                                                                   or name in stubs):
            continue
        before = next((other for other in reversed(order[:position]) if other in present), None)
        at = 0 if before is None else 1 + next(
            i for i, cell in enumerate(notebook.cells) if grade_id(cell) == before)
        notebook.cells.insert(at, _new_cell(entry))
        present.add(name)
        if name in stubs:  # the answer of an exercise added later: its stub, nobody's answer
            continue
        added = reference.get("added", {}).get(name)
        if is_test[name] and never_had(name, reference, submitted_at, held):
            when = "this notebook was handed in" + (
                "" if submitted_at else " (no timestamp.txt: date unknown)")
            if submitted_at and submitted_at >= added:  # an older release's copy, handed in late
                when = (f"{COPIED_BEFORE.removeprefix('after ')} (it never held the cell; "
                        f"handed in on {submitted_at} UTC)")
            answers = [answer for answer, test in stubs.items() if test == name]
            put = (f"put it in {STUB_PUT_IN} ({', '.join(answers)}: not answered)"
                   if answers else "put it in after its answer")
            faults.append(Fault("added-test-cell", f"test cell {name} was added to the lesson "
                                f"on {added} UTC, after {when}: {put} and "
                                "graded it", name))
        elif adopted:
            continue  # the notebook never had nbgrader's cells: said once, by adopt_cells
        elif is_test[name]:
            faults.append(Fault("deleted-test-cell", f"test cell {name} had been deleted: put it "
                                "back after its answer and graded it", name))
        else:
            faults.append(Fault("edited-locked-cell", f"read-only cell {name} had been deleted: "
                                "put it back", name))
    notebook.metadata["kernelspec"] = reference.get("kernelspec") or notebook.metadata.get(
        "kernelspec", {"name": "python3", "display_name": "Python 3", "language": "python"})
    check_schema_once()
    MetadataValidator().validate_nb(notebook)
    return notebook, faults


def released_tests(notebook) -> set[str] | None:
    """The test cells of the release this notebook was made from, as ``releases.stamp`` wrote
    them into the released notebook's metadata (a learner's copy keeps it); None for a notebook
    without the stamp (released before it existed, or pasted into a new notebook)."""
    own = notebook.metadata.get("autograder")
    stamp = own.get(RELEASE_STAMP) if isinstance(own, dict) else None
    cells = stamp.get("test_cells") if isinstance(stamp, dict) else None
    if not isinstance(cells, list) or not all(isinstance(cell, str) for cell in cells):
        return None
    return set(cells)


def never_had(name: str, reference: dict, submitted_at: str | None,
              held: set[str] | None) -> bool:
    """Was test cell ``name``, which the notebook lacks, never in it? Only a cell added to the
    lesson after its first release can be. The release the notebook was made from decides
    where the notebook says which it was (its stamp): a copy fetched before the cell was added
    never had it, however late it was handed in, while a copy whose release held it lost it.
    A notebook without the stamp is judged by when it was handed in."""
    added = reference.get("added", {}).get(name)
    if not added:
        return False
    if held is not None:
        return name not in held
    return submitted_at is None or submitted_at < added


def _stubs_for_added(notebook, reference: dict, submitted_at: str | None,
                     held: set[str] | None = None) -> dict[str, str]:
    """{answer cell: its test cell} for each answer cell the notebook lacks whose test (the
    next test cell after it in the lesson) was added after the notebook's copy was made
    (``never_had``): a new exercise, whose answer cell the learner never had. Its stub goes in
    (as for a pasted notebook's missing answer), so its test finds an unanswered exercise, not
    a name never defined."""
    added = reference.get("added", {})
    late = {name for name in added if never_had(name, reference, submitted_at, held)}
    present = {grade_id(cell) for cell in notebook.cells}
    stubs, waiting = {}, []
    for entry in reference["cells"]:
        if entry["solution"] and entry["cell_type"] == "code" and not entry["locked"]:
            if entry["grade_id"] not in present:
                waiting.append(entry["grade_id"])
        elif entry["grade"] and not entry["solution"]:  # a test cell: the answers before it
            if entry["grade_id"] in late and entry["grade_id"] not in present:
                stubs.update(dict.fromkeys(waiting, entry["grade_id"]))
            waiting = []
    return stubs


def reference_cells(db_url: str, lesson: str, notebook_name: str, released) -> dict:
    """What ``restore_cells`` checks against: every nbgrader cell of a released notebook, in
    order, with its released source and the full source (hidden tests included) from the
    gradebook."""
    with Gradebook(db_url) as gradebook:
        notebook = gradebook.find_notebook(notebook_name, lesson)
        source = {cell.name: cell for cell in notebook.source_cells}
        points = {cell.name: cell.max_score for cell in notebook.grade_cells}
        solutions = {cell.name for cell in notebook.solution_cells}
        kernelspec = json.loads(notebook.kernelspec) if notebook.kernelspec else None
        cells = []
        for cell in released.cells:
            name = grade_id(cell)
            if name is None or name not in source:
                continue
            stored = source[name]
            cells.append({
                "grade_id": name, "cell_type": stored.cell_type, "source": stored.source,
                "released_source": cell.source, "locked": bool(stored.locked),
                "checksum": stored.checksum, "grade": name in points,
                "solution": name in solutions, "points": float(points.get(name, 0.0)),
            })
    return {"notebook": notebook_name, "cells": cells, "kernelspec": kernelspec}
