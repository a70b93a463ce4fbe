"""A stranger's Python: a fresh virtual environment holding only what Colab ships (torch, numpy,
matplotlib, ipywidgets, ipykernel, and triton, which Colab's CUDA torch brings along, at the
course's pins), and the course built as a wheel."""

import hashlib
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

from filelock import FileLock

REPO = Path(__file__).resolve().parents[1]
CACHE = REPO / "artifacts" / "stranger"  # git-ignored; a ready environment is reused
COLAB_SHIPS = ("torch", "numpy", "matplotlib", "ipywidgets", "ipykernel", "triton")


def colab_requirements() -> list[str]:
    """The pins of requirements.txt for the packages Colab ships."""
    pins = [line.split("#")[0].strip() for line in (REPO / "requirements.txt").read_text().splitlines()]
    chosen = [pin for pin in pins if pin.split("==")[0].lower() in COLAB_SHIPS]
    assert len(chosen) == len(COLAB_SHIPS), chosen
    return chosen


def _pip(python: Path, *args: str) -> None:
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", *args], check=True,
                   stdin=subprocess.DEVNULL, timeout=900)


def colab_python() -> Path:
    """The interpreter of a fresh environment with only what Colab ships; built once per set of
    pins (under a lock: every test worker may ask at once)."""
    requirements = colab_requirements()
    key = hashlib.sha256("\n".join([sys.version, *requirements]).encode()).hexdigest()[:12]
    home = CACHE / f"colab-{key}"
    python, ready = home / "bin" / "python", home / ".ready"
    CACHE.mkdir(parents=True, exist_ok=True)
    with FileLock(str(CACHE / f"colab-{key}.lock"), timeout=1200):
        if not ready.exists():
            shutil.rmtree(home, ignore_errors=True)
            venv.EnvBuilder(with_pip=True, symlinks=True).create(home)
            _pip(python, *requirements)
            ready.touch()
    return python


def layered_environment(python: Path, target: Path) -> Path:
    """A fresh environment of its own in ``target`` that sees ``python``'s packages (a .pth
    file names their folder): a notebook may ``pip install`` into it, and only into it, without
    a copy of torch."""
    venv.EnvBuilder(symlinks=True).create(target)
    (base,) = python.parents[1].glob("lib/python*/site-packages")
    (own,) = target.glob("lib/python*/site-packages")
    (own / "stranger_base.pth").write_text(f"{base}\n")
    return target / "bin" / "python"


def build_wheel(folder: Path) -> Path:
    """The course as a learner installs it: a wheel of this checkout."""
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps",
                    "--no-build-isolation", "--wheel-dir", str(folder), str(REPO)],
                   check=True, stdin=subprocess.DEVNULL, timeout=600,
                   env={**os.environ, "PIP_NO_INDEX": "1"})
    wheel, = folder.glob("custom_autograd_course-*.whl")
    return wheel


def install_wheel(wheel: Path, target: Path) -> Path:
    """The wheel's packages alone in ``target`` (for PYTHONPATH): the stranger's environment with
    the course installed, without copying the environment for every worker."""
    _pip(Path(sys.executable), "--no-deps", "--no-index", "--target", str(target), str(wheel))
    return target


if __name__ == "__main__":  # `make test` builds it first, outside any test's time limit
    print(f"stranger's environment: {colab_python()}")
