"""The nbgrader configuration of this course; every course root's nbgrader_config.py calls
``configure(get_config())``."""

import os

from nbconvert.preprocessors import ClearMetadataPreprocessor, CSSHTMLHeaderPreprocessor
from nbgrader.preprocessors import (AssignLatePenalties, CheckCellMetadata, GetGrades,
                                    IgnorePattern, LimitOutput, SaveAutoGrades)

from .nbgrader_ext import FeedbackSummary, HideHiddenTests, SealedExecute

COURSE_ID = "custom-autograd-functions"
CELL_TIMEOUT_VARIABLE = "AUTOGRADER_CELL_TIMEOUT"
CODE_STUB = "# YOUR CODE HERE\nraise NotImplementedError()"

CONFIG_FILE_TEXT = (
    '"""nbgrader configuration: the course\'s own, from autograder/course_config.py."""\n'
    "from autograder.course_config import configure\n\n"
    "configure(get_config())  # noqa: F821 (get_config is provided by nbgrader)\n"
)


def configure(c) -> None:
    """Set nbgrader's options for this course on the config object ``c``."""
    c.CourseDirectory.course_id = COURSE_ID
    c.ClearSolutions.code_stub = {"python": CODE_STUB}
    c.Execute.timeout = int(os.environ.get(CELL_TIMEOUT_VARIABLE, "120"))
    c.Autograde.autograde_preprocessors = [
        SealedExecute, IgnorePattern, ClearMetadataPreprocessor, LimitOutput, SaveAutoGrades,
        AssignLatePenalties, CheckCellMetadata,
    ]
    # A test cell the learner deleted is put back (after its answer) and graded.
    c.OverwriteCells.add_missing_cells = True
    # Feedback: per test its name, points and hint; never the hidden tests' source.
    c.GenerateFeedback.preprocessors = [GetGrades, HideHiddenTests, FeedbackSummary,
                                        CSSHTMLHeaderPreprocessor]
    # Learner outputs are untrusted HTML: no scripts in feedback or in the formgrader.
    c.HTMLExporter.sanitize_html = True
    # Grading is decided by signed verdicts (autograder.seal), not by what a cell printed, so
    # warnings a correct answer prints on stderr cost nothing.
    c.IgnorePattern.pattern = ".*(Warning|warn)"
