"""The lesson sources: their markdown holds no control characters (a TAB where ``\\t`` of
``\\top`` was meant renders as "W^ op"), and their predict-then-run cells call the one set of
helpers, autograder.predictions'."""

import re

import jupytext
import pytest

from grader.lessons import LESSONS

CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f]")  # everything below space but the newline


@pytest.mark.parametrize("path", sorted(LESSONS.glob("*.py")), ids=lambda p: p.stem)
def test_markdown_has_no_control_characters(path):
    """Does every markdown cell of the lesson hold only printable characters and newlines?"""
    notebook = jupytext.read(path, fmt="py:percent")
    found = [(index, match.start(), repr(match.group()))
             for index, cell in enumerate(notebook.cells) if cell.cell_type == "markdown"
             for match in CONTROL.finditer(cell.source)]
    assert not found, f"control characters (cell, offset, char) in {path.name}: {found}"


PREDICTION_HELPERS = ("written", "compare", "compare_all")


@pytest.mark.parametrize("path", sorted(LESSONS.glob("*.py")), ids=lambda p: p.stem)
def test_predictions_are_judged_by_the_shared_helpers(path):
    """Does a lesson that judges predictions import written/compare/compare_all from
    autograder.predictions (tested there) rather than define its own?"""
    text = path.read_text()
    own = [name for name in PREDICTION_HELPERS if re.search(rf"^def {name}\(", text, re.M)]
    assert not own, f"{path.name} defines its own {own}: import them from autograder.predictions"
    used = [name for name in PREDICTION_HELPERS if re.search(rf"^\s*(?:if )?{name}\(", text, re.M)]
    if used:
        imported = re.search(r"^from autograder\.predictions import (.+)$", text, re.M)
        assert imported and set(used) <= {n.strip() for n in imported.group(1).split(",")}, (
            f"{path.name} calls {used} without importing them from autograder.predictions")
