"""Run the real nbgrader command line in a course root, from this Python environment."""

import os
import subprocess
import sys
from pathlib import Path

from .course_config import CONFIG_FILE_TEXT


def prepare_course_root(root: Path) -> Path:
    """Create ``root`` with this course's nbgrader_config.py."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "nbgrader_config.py").write_text(CONFIG_FILE_TEXT)
    return root


def nbgrader(*args: str, root: Path, check: bool = True, capture: bool = False,
             env: dict | None = None) -> subprocess.CompletedProcess:
    """``nbgrader ARGS`` in ``root``; this environment's bin/ leads PATH (nbgrader runs alembic)."""
    environment = dict(os.environ if env is None else env)
    environment["PATH"] = os.pathsep.join([str(Path(sys.executable).parent),
                                           environment.get("PATH", "")])
    return subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=root, check=check,
                          env=environment, text=True, capture_output=capture)
