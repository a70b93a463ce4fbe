"""The gradebook: nbgrader's SQLite database in the course root, written by one process only,
through nbgrader's own Autograde converter."""

import copy
import shutil
from pathlib import Path

import nbformat
from nbgrader.api import Gradebook

from .course_config import configure
from .intake import reference_cells, restore_cells
from .ledger import STATE
from .needed_cells import demo_sources
from .releases import added_later, db_url
from .notebook_format import error_output, is_test_cell

STAGING = f"{STATE}/staging"




def lesson_references(root: Path, lesson: str) -> dict[str, dict]:
    """Every notebook of a released lesson, with the reference cells ``restore_cells`` needs."""
    with Gradebook(db_url(root)) as gradebook:
        names = [notebook.name for notebook in gradebook.find_assignment(lesson).notebooks]
    references = {}
    for name in sorted(names):
        released = nbformat.read(root / "release" / lesson / f"{name}.ipynb", as_version=4)
        references[name] = reference_cells(db_url(root), lesson, name, released)
        references[name]["demos"] = demo_sources(released)
        later = added_later(root, lesson)
        if later:
            references[name]["added"] = later
    return references


def _course_config(root: Path):
    from traitlets.config import Config
    from traitlets.config.loader import PyFileConfigLoader

    config = Config()
    configure(config)
    if (root / "nbgrader_config.py").exists():
        config.merge(PyFileConfigLoader("nbgrader_config.py", path=str(root)).load_config())
    return config


class GradebookWriter:
    """Records executed notebooks in the gradebook with nbgrader's own Autograde converter (its
    timestamps, late penalties, missing-notebook zeros, autograded/ folder), minus execution."""

    def __init__(self, root: Path):
        from nbgrader.preprocessors import CheckCellMetadata, Execute

        self.root = root
        self.config = _course_config(root)
        # The worker already sanitized (grader.intake.restore_cells validates the metadata)
        # and executed the notebook: what is left is recording it.
        kept = [p for p in self.config.Autograde.autograde_preprocessors
                if not (isinstance(p, type) and issubclass(p, (Execute, CheckCellMetadata)))]
        self.config.Autograde.sanitize_preprocessors = []
        self.config.Autograde.autograde_preprocessors = kept
        self.config.CourseDirectory.root = str(root)
        self.config.CourseDirectory.submitted_directory = STAGING
        self.config.Autograde.create_student = True
        self.config.Application.log_level = "ERROR"

    def write(self, student: str, lesson: str, notebooks: dict[str, nbformat.NotebookNode]):
        """Grade ``notebooks`` (name -> executed notebook) as ``student``'s ``lesson``."""
        from nbgrader.converters import Autograde
        from nbgrader.coursedir import CourseDirectory

        stage = self.root / STAGING / student / lesson
        shutil.rmtree(stage, ignore_errors=True)
        stage.mkdir(parents=True)
        original = self.root / "submitted" / student / lesson
        for path in original.rglob("*"):  # the learner's other files, as nbgrader would copy
            relative = path.relative_to(original)
            if path.is_file() and not path.is_symlink() and path.suffix != ".ipynb":
                (stage / relative).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(path, stage / relative)
        for name, notebook in notebooks.items():
            nbformat.write(notebook, stage / f"{name}.ipynb")
        config = copy.deepcopy(self.config)
        config.CourseDirectory.student_id = student
        config.CourseDirectory.assignment_id = lesson
        coursedir = CourseDirectory(config=config)
        converter = Autograde(coursedir=coursedir, config=config)
        converter.force = True
        try:
            converter.start()
        finally:
            shutil.rmtree(stage, ignore_errors=True)


def score_line(root: Path, student: str, lesson: str) -> str:
    """``student``'s score for ``lesson`` as the gradebook now holds it: "3/4 points", and how
    many of them were given by hand (manual grades, extra credit): "5/9 points (1 by hand)"."""
    from nbgrader.api import MissingEntry

    with Gradebook(db_url(root)) as gradebook:
        try:
            submission = gradebook.find_submission(lesson, student)
        except MissingEntry:
            return "(no score)"
        by_hand = sum((grade.manual_score or 0) + (grade.extra_credit or 0)
                      for notebook in submission.notebooks for grade in notebook.grades
                      if grade.manual_score is not None or grade.extra_credit)
        hand = f" ({by_hand:g} by hand)" if by_hand else ""
        return f"{submission.score:g}/{submission.max_score:g} points{hand}"


def placeholder(root: Path, lesson: str, name: str, reference: dict, reason: str):
    """The released notebook, every test cell failed with ``reason``: what the gradebook and the
    feedback get for a notebook that could not be read."""
    released = nbformat.read(root / "release" / lesson / f"{name}.ipynb", as_version=4)
    notebook, _ = restore_cells(released, reference)
    for cell in notebook.cells:
        if is_test_cell(cell):
            cell.outputs = [error_output("SubmissionError", f"not graded: {reason}")]
    return notebook
