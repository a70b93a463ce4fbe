"""A notebook whose cells lost their nbgrader metadata (answers pasted into a new notebook, a
``solutions/`` copy handed in) has its cells matched to the lesson's by their code, so that it is
graded like any other: each read-only cell by its text, each answer cell by the classes and
functions it defines (or, failing that, by where it stands between the read-only cells)."""

import re

import nbformat

from .faults import Fault
from .notebook_format import grade_id, without_hidden_tests

DEFINED = re.compile(r"^(?:class|def)\s+(\w+)", re.MULTILINE)


def has_metadata(notebook, reference: dict) -> bool:
    """Whether any cell still carries the nbgrader name of one of the lesson's cells."""
    names = {entry["grade_id"] for entry in reference["cells"]}
    return any(grade_id(cell) in names for cell in notebook.cells)


def _text(source: str) -> str:
    return without_hidden_tests(source).strip()


def _stamp(cell, entry: dict) -> None:
    cell.metadata["nbgrader"] = {"grade_id": entry["grade_id"], "grade": entry["grade"],
                                 "solution": entry["solution"], "locked": entry["locked"]}


def adopt_cells(notebook, reference: dict) -> list[Fault]:
    """Give ``notebook``'s cells the nbgrader names of the reference cells they match (in
    place); one fault says what was found."""
    free = [cell for cell in notebook.cells if cell.cell_type == "code"]
    positions = {id(cell): index for index, cell in enumerate(notebook.cells)}
    matched: dict[str, object] = {}
    for entry in reference["cells"]:  # read-only cells: same text, in order
        if not entry["locked"]:
            continue
        wanted = {_text(entry["released_source"]), _text(entry["source"])}
        for cell in list(free) if entry["cell_type"] == "code" else []:
            if _text(cell.source) in wanted:
                matched[entry["grade_id"]] = cell
                free.remove(cell)
                break
    answers = [entry for entry in reference["cells"] if entry["solution"]
               and entry["cell_type"] == "code"]
    missing = []
    for position, entry in enumerate(reference["cells"]):
        if entry not in answers:
            continue
        names = set(DEFINED.findall(entry["source"]))
        found = next((cell for cell in free if names & set(DEFINED.findall(cell.source))), None)
        if found is None:
            found = _between(free, positions, matched, reference["cells"], position)
        if found is None:
            missing.append(entry["grade_id"])
            continue
        matched[entry["grade_id"]] = found
        free.remove(found)
    for name, cell in matched.items():
        entry = next(e for e in reference["cells"] if e["grade_id"] == name)
        _stamp(cell, entry)
        if entry["locked"]:
            cell.source = entry["released_source"]
    for name in missing:
        _put_stub(notebook, reference["cells"], name)
    found_answers = len(answers) - len(missing)
    message = (f"the notebook had no nbgrader cell metadata (answers pasted into a new "
               f"notebook, or a copy of the solutions?): matched {found_answers} of "
               f"{len(answers)} answer cells to the lesson's by their code, put back the "
               "read-only and test cells it lacked, and graded it")
    graded = {entry["grade_id"] for entry in reference["cells"]
              if entry["grade"] and entry["points"] > 0}
    practice = [name for name in missing if name.removeprefix("answer_") not in graded]
    lost = [name for name in missing if name not in practice]
    # one message, no "; ": a summary line cut to fit keeps this end, the news
    if practice:
        message += (f", found no answer for the practice cell{'s' if len(practice) > 1 else ''} "
                    f"{', '.join(practice)} (worth no points)")
    if lost:
        message += (f", {'and none' if practice else 'but found no answer'} for "
                    f"{', '.join(lost)} (its stub graded instead: 0 points)")
    return [Fault("no-nbgrader-metadata", message, ", ".join(missing))]


def _put_stub(notebook, entries: list[dict], name: str) -> None:
    """Put the lesson's released stub in for answer ``name``, which the notebook lacks, after
    the cell of the nearest lesson cell before it that the notebook has: its tests then see an
    unanswered exercise (not-implemented), not a name that was never defined."""
    position = next(i for i, entry in enumerate(entries) if entry["grade_id"] == name)
    stub = nbformat.v4.new_code_cell(entries[position]["released_source"])
    stub.id = f"not-found-{name}"[:64]
    _stamp(stub, entries[position])
    at = 0
    for earlier in reversed(entries[:position]):
        found = [i for i, cell in enumerate(notebook.cells) if grade_id(cell) ==
                 earlier["grade_id"]]
        if found:
            at = found[-1] + 1
            break
    notebook.cells.insert(at, stub)


def _between(free: list, positions: dict, matched: dict, entries: list, position: int):
    """The only unmatched code cell between the read-only cells matched before and after
    reference cell ``position`` (one side at least), if there is exactly one."""
    def anchors(side):
        return [positions[id(matched[e["grade_id"]])] for e in side
                if e["locked"] and e["grade_id"] in matched]

    before, after = anchors(entries[:position]), anchors(entries[position + 1:])
    if not before and not after:
        return None
    low, high = max(before, default=-1), min(after, default=len(positions))
    inside = [cell for cell in free if low < positions[id(cell)] < high]
    return inside[0] if len(inside) == 1 else None
