"""grader.overwrite_cells: a test cell handed in as released raises no checksum warning for the
hidden tests the release removed (nbgrader issue #1961); a changed one still does, and both get
the gradebook's source back."""

import logging
from types import SimpleNamespace

import pytest
from nbformat.v4 import new_code_cell
from nbgrader.utils import compute_checksum

from grader.overwrite_cells import OverwriteCells, released_source

SOURCE = ('self_check("Square", Square)\n### BEGIN HIDDEN TESTS\n'
          'from autograder import grade; grade("Square", Square)\n### END HIDDEN TESTS')
METADATA = {"nbgrader": {"grade_id": "Square", "grade": True, "solution": False,
                         "locked": True, "points": 1}}


def _preprocessor():
    """OverwriteCells over a gradebook that holds the test cell as the source notebook has it."""
    stored = new_code_cell(SOURCE, metadata=METADATA)
    source_cell = SimpleNamespace(source=SOURCE, locked=True, cell_type="code",
                                  checksum=compute_checksum(stored))
    gradebook = SimpleNamespace(find_source_cell=lambda *_: source_cell,
                                find_graded_cell=lambda *_: SimpleNamespace(max_score=1))
    preprocessor = OverwriteCells()
    preprocessor.gradebook, preprocessor.notebook_id, preprocessor.assignment_id = (
        gradebook, "00_template", "00_template")
    return preprocessor


@pytest.mark.parametrize("handed_in, warned", [
    (released_source(SOURCE, new_code_cell(SOURCE, metadata=METADATA)), False),
    ('self_check("Square", Square)\nprint("changed")', True),
])
def test_only_a_changed_test_cell_is_reported(handed_in, warned, caplog):
    assert "HIDDEN" not in released_source(SOURCE, new_code_cell(SOURCE, metadata=METADATA))
    cell = new_code_cell(handed_in, metadata=METADATA)
    with caplog.at_level(logging.WARNING):
        _preprocessor().preprocess_cell(cell, {}, 0)
    assert cell.source == SOURCE
    assert ("Attribute 'checksum' for cell Square has changed" in caplog.text) == warned
