"""Run the real nbgrader command line in a course root, from this Python environment."""

import os
import subprocess
import sys
from pathlib import Path

import nbformat

from .course_config import CONFIG_FILE_TEXT


OLD_CONFIG_IMPORT = "from autograder.course_config import configure"


def prepare_course_root(root: Path) -> Path:
    """Make ``root`` a course root: write this course's nbgrader_config.py if it has none, and
    bring one written by an older version up to date. An instructor's own additions to the file
    are kept (it must still call ``configure(get_config())``)."""
    root.mkdir(parents=True, exist_ok=True)
    config = root / "nbgrader_config.py"
    if not config.exists():
        config.write_text(CONFIG_FILE_TEXT)
    elif OLD_CONFIG_IMPORT in config.read_text():
        config.write_text(config.read_text().replace(
            OLD_CONFIG_IMPORT, "from grader.course_config import configure").replace(
            "autograder/course_config.py", "grader/course_config.py"))
    return root


def nbgrader(*args: str, root: Path, check: bool = True, capture: bool = False,
             env: dict | None = None) -> subprocess.CompletedProcess:
    """``nbgrader ARGS`` in ``root``; this environment's bin/ leads PATH (nbgrader runs alembic)."""
    environment = dict(os.environ if env is None else env)
    environment["PATH"] = os.pathsep.join([str(Path(sys.executable).parent),
                                           environment.get("PATH", "")])
    return subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=root, check=check,
                          env=environment, text=True, capture_output=capture)


def nbgrader_streamed(*args: str, root: Path) -> subprocess.Popen:
    """``nbgrader ARGS`` started in ``root``, its log and output merged into ``stdout``, to read
    line by line as it runs (``nbgrader`` waits for the end)."""
    environment = dict(os.environ)
    environment["PATH"] = os.pathsep.join([str(Path(sys.executable).parent),
                                           environment.get("PATH", "")])
    return subprocess.Popen([sys.executable, "-m", "nbgrader", *args], cwd=root, env=environment,
                            text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            bufsize=1)


def release(sources: dict[str, nbformat.NotebookNode], root: Path) -> dict[str, Path]:
    """``nbgrader generate_assignment`` of each lesson's source notebook in course root ``root``;
    return each lesson's released (learner) notebook."""
    prepare_course_root(root)
    for lesson, notebook in sources.items():
        folder = root / "source" / lesson
        folder.mkdir(parents=True, exist_ok=True)
        nbformat.write(notebook, folder / f"{lesson}.ipynb")
    in_root = {folder.name for folder in (root / "source").iterdir() if folder.is_dir()}
    # nbgrader globs the assignment id: one run (one start-up) releases every lesson of the root
    for assignment in ["*"] if in_root == set(sources) else sources:
        nbgrader("generate_assignment", assignment, "--force", "--log-level=WARN", root=root)
    return {lesson: root / "release" / lesson / f"{lesson}.ipynb" for lesson in sources}


def nbgrader_errors(text: str) -> str:
    """nbgrader's own error lines, without its tracebacks."""
    lines = [line for line in text.splitlines() if "| ERROR]" in line or "Error" in line[:40]]
    return "\n".join(f"  {line}" for line in (lines or text.splitlines())[-8:])
