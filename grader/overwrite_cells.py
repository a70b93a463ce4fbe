"""nbgrader's OverwriteCells without its false alarm on hidden tests.

nbgrader stores a test cell's checksum before it clears the hidden tests from the released copy,
so ``nbgrader autograde`` warns "Attribute 'checksum' for cell ... has changed!" for every test
cell with hidden tests, handed in untouched (nbgrader issue #1961). Here a test cell handed in
exactly as released gets its hidden tests back before that check: only a cell the learner
changed is reported, and every cell is still overwritten from the gradebook as before."""

import copy

from nbgrader.api import MissingEntry
from nbgrader.preprocessors import ClearHiddenTests
from nbgrader.preprocessors import OverwriteCells as NbgraderOverwriteCells


class OverwriteCells(NbgraderOverwriteCells):

    def preprocess_cell(self, cell, resources, cell_index):
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id is not None and cell.cell_type == "code":
            try:
                source_cell = self.gradebook.find_source_cell(grade_id, self.notebook_id,
                                                              self.assignment_id)
            except MissingEntry:
                source_cell = None  # nbgrader's own method says so and drops the grade id
            if source_cell is not None and source_cell.locked and (
                    cell.source == released_source(source_cell.source, cell)):
                cell.source = source_cell.source
        return super().preprocess_cell(cell, resources, cell_index)


def released_source(source: str, cell) -> str:
    """``source`` as ``nbgrader generate_assignment`` releases it: its hidden tests cleared."""
    released = copy.deepcopy(cell)
    released.source = source
    ClearHiddenTests()._remove_hidden_test_region(released)
    return released.source
