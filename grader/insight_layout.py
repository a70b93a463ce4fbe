"""A released lesson as insight reads it (``grader.insight``): its title, its headings, each
notebook's test cells and the section of the exercise each grades, every exercise heading worded
in one style. Read as JSON: standard library only."""

import json
import re
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class Layout:
    """A released lesson as insight reads it: its title, its headings, each notebook's test
    cells (grade_ids, in order) and the section each stands in."""

    title: str
    headings: frozenset
    tests: dict  # notebook name -> grade_ids
    sections: dict  # grade_id -> section title
    labels: dict = field(default_factory=dict)  # exercise heading -> ``label``


_HEADING = re.compile(r"^(#{1,3})\s+(.+?)\s*$", re.MULTILINE)
# An exercise's heading as the lessons write it: "✎ Exercise 4 · `AbsInPlace` (transfer)",
# "✎ Exercise 6 (transfer) · `CumMax`", "✎ Transfer exercise · `Outer`", "✎ Exercise 3 ·
# `FakeQuantize`: a quantiser that learns its step"
_EXERCISE = re.compile(r"^(?P<mark>✎\s*)?(?:Exercise\s+(?P<number>\d+)|(?P<transfer>Transfer)"
                       r"\s+exercise)(?P<between>[^·]*)·\s*(?P<rest>.+)$", re.IGNORECASE)


def label(heading: str, previous: int = 0) -> tuple[str, int]:
    """An exercise heading in one style, ``✎ Exercise N · `Name` (transfer)``: its number (one
    after ``previous``, the exercise before it, where the heading gives none), the name(s) it
    names and whether it is a transfer exercise; and that number. Other headings as they are."""
    found = _EXERCISE.match(heading)
    if not found:
        return heading, previous
    number = int(found["number"]) if found["number"] else previous + 1
    transfer = bool(found["transfer"]) or "transfer" in (found["between"] + found["rest"]).lower()
    names = re.split(r"\s*(?::|,|\s\()", found["rest"], maxsplit=1)[0].strip()
    return (f"{found['mark'] or ''}Exercise {number} · {names}"
            + (" (transfer)" if transfer else "")), number


OWN_TEST = "your test cell"  # the section of a test cell that names no exercise of its lesson
_GRADED_NAME = re.compile(r"""\b(?:grade|self_check)\(\s*["'](\w+)["']""")


def exercise_names(heading: str) -> list[str]:
    """The names an exercise heading gives in `code` (none for another heading)."""
    return re.findall(r"`([A-Za-z_]\w*)`", heading) if _EXERCISE.match(heading) else []


def named_section(code: str, exercises: dict[str, str]) -> str | None:
    """The section of the exercise a test cell's ``code`` names (``exercises``: name -> its
    heading): the one its ``grade("X"``/``self_check("X"`` grades, else the one exercise whose
    name appears in it (``Square.apply(x)``); None when it names none, or several apart."""
    graded = [exercises[name] for name in _GRADED_NAME.findall(code) if name in exercises]
    if graded:
        return graded[0]
    named = {exercises[name] for name in exercises if re.search(rf"\b{name}\b", code)}
    return named.pop() if len(named) == 1 else None


def layout(root: Path, lesson: str) -> Layout:
    """The released notebooks' headings and test cells (read as JSON: no nbformat needed). A
    test cell stands in the section of the exercise its code names, wherever it is placed (an
    instructor's cell for ``Square`` added after ``Outer``'s test is ``Square``'s), and in
    ``OWN_TEST`` when it names none, never in the section it happens to follow; where its
    released lines name none, its hidden tests are read (from the source notebook: an
    instructor's cell whose visible lines only set up and whose hidden assert calls
    ``checkpoint_sequential`` is that exercise's); in a
    lesson without exercise headings (one the instructor wrote) each stands in the heading
    above it."""
    title, headings, tests, sections, labels, number = lesson, set(), {}, {}, {}, 0
    cells, exercises = {}, {}
    for path in sorted((root / "release" / lesson).glob("*.ipynb")):
        cells[path.stem] = json.loads(path.read_text()).get("cells", [])
    whole = _test_sources(root, lesson)
    for notebook in cells.values():
        for cell in notebook:
            if cell.get("cell_type") == "markdown":
                for hashes, text in _HEADING.findall("".join(cell.get("source", ""))):
                    if len(hashes) == 2:
                        for name in exercise_names(text):
                            exercises.setdefault(name, text)
    for name, notebook in cells.items():
        section, tests[name] = "", []
        for cell in notebook:
            source = "".join(cell.get("source", ""))
            metadata = cell.get("metadata", {}).get("nbgrader", {})
            if cell.get("cell_type") == "markdown":
                for hashes, text in _HEADING.findall(source):
                    headings.add(text)
                    if len(hashes) == 1 and title == lesson:
                        title = text
                    elif len(hashes) == 2:
                        section = text
                        labels[text], number = label(text, number)
            elif metadata.get("grade") and not metadata.get("solution"):
                sections[metadata["grade_id"]] = (
                    named_section(source, exercises) or named_section(
                        whole.get(metadata["grade_id"], ""), exercises) or OWN_TEST
                    if exercises else section)
                tests[name].append(metadata["grade_id"])
    return Layout(title, frozenset(headings), tests, sections, labels)


def _test_sources(root: Path, lesson: str) -> dict[str, str]:
    """grade_id -> the whole source of each test cell of the lesson's source notebooks (hidden
    tests included, which the released notebook lacks); none where there is no source."""
    sources = {}
    for path in sorted((root / "source" / lesson).glob("*.ipynb")):
        try:
            notebook = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        for cell in notebook.get("cells", []):
            metadata = cell.get("metadata", {}).get("nbgrader", {})
            if metadata.get("grade") and not metadata.get("solution") and "grade_id" in metadata:
                sources[metadata["grade_id"]] = "".join(cell.get("source", ""))
    return sources
