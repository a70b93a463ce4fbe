"""nbgrader extension: execute submissions in a sealed kernel and grade signed verdicts only."""

import os
import secrets
import tempfile
from pathlib import Path

from nbformat.notebooknode import NotebookNode
from nbgrader.preprocessors import Execute
from nbgrader.utils import is_grade, is_solution

from .seal import KEY_FILE_VARIABLE, read_verdicts

BOOT = "import autograder.seal; autograder.seal.boot()"


def is_test_cell(cell) -> bool:
    return cell.cell_type == "code" and is_grade(cell) and not is_solution(cell)


def _error(name: str, message: str) -> NotebookNode:
    lines = message.splitlines() or [""]
    return NotebookNode(output_type="error", ename=name, evalue=lines[0], traceback=lines)


def apply_verdicts(nb, key: bytes) -> None:
    """Replace each test cell's outputs with its signed verdict, or with an error if none."""
    for cell in nb.cells:
        if not is_test_cell(cell):
            continue
        exercise = cell.metadata.nbgrader["grade_id"]
        found = read_verdicts(cell.outputs, key).get(exercise)
        if found is None:
            errors = [o for o in cell.outputs if o.get("output_type") == "error"]
            cause = f" ({errors[-1].ename}: {errors[-1].evalue})" if errors else ""
            cell.outputs = [_error("NoVerdict", (
                f"the hidden tests for {exercise} did not report a verdict{cause}: the cell was "
                "interrupted, timed out, lost its kernel, or failed before the hidden tests ran"))]
        elif found[0]:
            cell.outputs = [NotebookNode(output_type="stream", name="stdout",
                                         text=f"✓ {found[1]}\n")]
        else:
            cell.outputs = [_error("GradingError", found[1])]


class SealedExecute(Execute):
    """nbgrader's Execute, with a kernel sealed by ``autograder.seal.boot`` before any cell runs."""

    def preprocess(self, nb, resources=None, km=None):
        key = secrets.token_bytes(32)
        with tempfile.TemporaryDirectory(prefix="autograder-seal-") as private:
            key_file = Path(private) / "key"
            key_file.touch(mode=0o600)
            key_file.write_bytes(key)
            self.extra_arguments = [
                "--HistoryManager.hist_file=:memory:", f"--IPKernelApp.exec_lines={BOOT}"]
            previous = os.environ.get(KEY_FILE_VARIABLE)
            os.environ[KEY_FILE_VARIABLE] = str(key_file)
            try:
                nb, resources = super().preprocess(nb, resources, km)
            finally:
                if previous is None:
                    os.environ.pop(KEY_FILE_VARIABLE, None)
                else:
                    os.environ[KEY_FILE_VARIABLE] = previous
        apply_verdicts(nb, key)
        return nb, resources
