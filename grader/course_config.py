"""The nbgrader configuration of this course; every course root's nbgrader_config.py calls
``configure(get_config())``."""

import warnings
from pathlib import Path

import nbgrader
from nbconvert.preprocessors import ClearMetadataPreprocessor, CSSHTMLHeaderPreprocessor
from nbgrader.preprocessors import (AssignLatePenalties, CheckCellMetadata, ClearOutput,
                                    DeduplicateIds, GetGrades, IgnorePattern, LimitOutput,
                                    OverwriteKernelspec, SaveAutoGrades)

from .execute import SealedExecute
from .feedback import (FeedbackHTMLExporter, FeedbackSummary, HideHiddenTests, LearnerStatus,
                       NumberlessTracebacks)
from .notebook_format import CODE_STUB, check_schema_once
from .overwrite_cells import OverwriteCells
from .settings import Settings

COURSE_ID = "custom-autograd-functions"

CONFIG_FILE_TEXT = (
    '"""nbgrader configuration: the course\'s own, from grader/course_config.py."""\n'
    "from grader.course_config import configure\n\n"
    "configure(get_config())  # noqa: F821 (get_config is provided by nbgrader)\n"
)


def quiet_gradebook() -> None:
    """nbgrader 0.9's gradebook code trips SQLAlchemy 2.x autoflush notices (SAWarning) on
    every write: harmless, and they would bury what an instructor needs to read."""
    from sqlalchemy.exc import SAWarning

    warnings.filterwarnings("ignore", category=SAWarning, module=r"nbgrader\.api")


FEEDBACK_TEMPLATE = "course_feedback"
_FORMGRADER = Path(nbgrader.__file__).parent / "server_extensions" / "formgrader"


def feedback_template_dirs() -> list[str]:
    """Where the feedback page's templates are: the course's, then nbgrader's own (which
    GenerateFeedback names when nothing else is configured)."""
    return [str(Path(__file__).parent / "templates"), str(_FORMGRADER / "templates")]


def configure(c) -> None:
    """Set nbgrader's options for this course on the config object ``c`` (every nbgrader
    command run in a course root comes here, through its nbgrader_config.py)."""
    quiet_gradebook()
    check_schema_once()
    c.CourseDirectory.course_id = COURSE_ID
    c.ClearSolutions.code_stub = {"python": CODE_STUB}
    c.Execute.timeout = Settings.from_environment().cell_timeout
    c.Autograde.autograde_preprocessors = [
        SealedExecute, IgnorePattern, ClearMetadataPreprocessor, LimitOutput, SaveAutoGrades,
        AssignLatePenalties, CheckCellMetadata,
    ]
    # nbgrader's own sanitizing, but a test cell handed in untouched raises no checksum warning
    # for the hidden tests the release removed from it (grader/overwrite_cells.py)
    c.Autograde.sanitize_preprocessors = [ClearOutput, DeduplicateIds, OverwriteKernelspec,
                                          OverwriteCells, CheckCellMetadata]
    # A test cell the learner deleted is put back (after its answer) and graded.
    c.OverwriteCells.add_missing_cells = True
    # Feedback: per test its name, points and hint; never the hidden tests' source.
    # A learner's traceback names no cell by IPython's number ("Cell In[2]": NumberlessTracebacks).
    c.GenerateFeedback.preprocessors = [GetGrades, HideHiddenTests, NumberlessTracebacks,
                                        LearnerStatus, FeedbackSummary, CSSHTMLHeaderPreprocessor]
    # nbconvert's HTML export without its BeautifulSoup round trip: half of each page's time
    c.GenerateFeedback.exporter_class = FeedbackHTMLExporter
    # nbgrader's feedback template, less its unnamed "Test cell (Score ...)" list, which the
    # table of graded tests replaces (grader/templates/course_feedback): set on the feedback
    # exporter's class, so that GenerateFeedback's HTMLExporter defaults (its "feedback"
    # template, found in nbgrader's template folder, kept here after the course's) give way
    c.FeedbackHTMLExporter.template_name = FEEDBACK_TEMPLATE
    c.FeedbackHTMLExporter.extra_template_basedirs = feedback_template_dirs()
    # GenerateFeedback's own (bootstrap's CSS), and nbgrader's templates, where the course's
    # finds the one it extends ('feedback/index.html.j2')
    c.FeedbackHTMLExporter.extra_template_paths = [str(_FORMGRADER / "static" / "node_modules" /
                                                   "bootstrap" / "dist" / "css"),
                                                   str(_FORMGRADER / "templates")]
    # Learner outputs are untrusted HTML: no scripts in feedback or in the formgrader.
    c.HTMLExporter.sanitize_html = True
    # No "In [n]" prompts on feedback pages: grading runs only the cells it needs, so the
    # numbers would show on some cells and "In [ ]" on others, in no order a learner knows.
    c.HTMLExporter.exclude_input_prompt = True
    c.HTMLExporter.exclude_output_prompt = True
    # Grading is decided by signed verdicts (autograder.seal), not by what a cell printed, so
    # warnings a correct answer prints on stderr cost nothing.
    c.IgnorePattern.pattern = ".*(Warning|warn)"
