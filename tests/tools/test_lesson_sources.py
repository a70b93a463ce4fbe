"""The lesson sources' markdown holds no control characters (a TAB where ``\\t`` of ``\\top`` was
meant renders as "W^ op")."""

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
