"""A stranger's Python: a fresh virtual environment holding only what Colab's CPU runtime or a
plain JupyterHub image ships (torch as a CPU build, numpy, matplotlib, ipywidgets, ipykernel, at
the course's pins; no triton or ninja, which lesson 13's first cell installs), and the course
built as a wheel.

It is not installed a second time: `make install` has just put these very distributions, at these
pins, into the course's environment beside the instructor's tools. The stranger's takes exactly
their files from there, hard-linked (copied across file systems), as each distribution's RECORD
lists them, dist-info folders included: the pinned ones, pip (every Python has it, and a
notebook's first cell runs it), and all they require here (markers evaluated, extras only where
asked for). So importlib.metadata and pip in it see that set and no other; nbgrader, JupyterLab,
pytest and the course itself are out of its reach; its scripts name its own Python. A pin the
course's environment does not hold stops the build and says to run `make install`. What a
notebook installs goes into a layer over it (``layered_environment``)."""

import hashlib
import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
import venv
from importlib.metadata import Distribution, distributions
from pathlib import Path

from filelock import FileLock
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parents[1]
CACHE = REPO / "artifacts" / "stranger"  # git-ignored; a ready environment is reused
COLAB_SHIPS = ("torch", "numpy", "matplotlib", "ipywidgets", "ipykernel")
INSTALLER = "pip"  # not pinned: the course environment's own


def colab_requirements() -> list[str]:
    """The pins of requirements.txt for the packages Colab ships."""
    pins = [line.split("#")[0].strip() for line in (REPO / "requirements.txt").read_text().splitlines()]
    chosen = [pin for pin in pins if pin.split("==")[0].lower() in COLAB_SHIPS]
    assert len(chosen) == len(COLAB_SHIPS), chosen
    return chosen


def _pip(python: Path, *args: str) -> None:
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", *args], check=True,
                   stdin=subprocess.DEVNULL, timeout=900)


def colab_distributions() -> list[Distribution]:
    """The distributions of this environment that the stranger's holds: the pinned ones, pip, and
    everything they require (markers evaluated here, extras only where asked for)."""
    site = sorted({sysconfig.get_path("purelib"), sysconfig.get_path("platlib")})
    installed = {canonicalize_name(dist.metadata["Name"]): dist
                 for dist in distributions(path=site)}
    extras_taken: dict[str, set[str]] = {}
    wanted = [(Requirement(line), "requirements.txt") for line in colab_requirements()]
    wanted.append((Requirement(INSTALLER), "the notebooks' setup cell"))
    while wanted:
        requirement, asked_by = wanted.pop()
        name = canonicalize_name(requirement.name)
        dist = installed.get(name)
        if dist is None or not requirement.specifier.contains(dist.version, prereleases=True):
            found = f"{name} {dist.version} is" if dist else f"no {name} is"
            raise RuntimeError(f"{asked_by} asks for {requirement}, but {found} installed in "
                               f"{sys.prefix}: run `make install`")
        if name in extras_taken and set(requirement.extras) <= extras_taken[name]:
            continue
        extras = extras_taken[name] = extras_taken.get(name, set()) | set(requirement.extras)
        for line in dist.requires or []:
            dependency = Requirement(line)
            if dependency.marker is None or any(dependency.marker.evaluate({"extra": extra})
                                                for extra in {"", *extras}):
                wanted.append((dependency, f"{dist.metadata['Name']} {dist.version}"))
    return [installed[name] for name in sorted(extras_taken)]


def _take(source: str, target: str, python: bytes) -> None:
    """``source`` at ``target``, hard-linked or else copied; a script whose first line runs a
    Python runs ``python`` instead."""
    if os.path.basename(os.path.dirname(target)) == "bin":
        with open(source, "rb") as script:
            first, newline, rest = script.read().partition(b"\n")
        if first.startswith(b"#!") and b"python" in first:
            with open(target, "wb") as script:
                script.write(b"#!" + python + newline + rest)
            shutil.copymode(source, target)
            return
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


def _take_bytecode(source: str, target: str, made: set) -> None:
    """The compiled bytecode of ``source`` beside ``target``, where the course environment has
    it (pip's RECORD lists none: `make install` compiles on every core after pip)."""
    compiled = importlib.util.cache_from_source(source)
    if os.path.exists(compiled):
        cached = importlib.util.cache_from_source(target)
        if cached not in made:
            os.makedirs(os.path.dirname(cached), exist_ok=True)
            _take(compiled, cached, b"")
            made.add(cached)


def _build(home: Path, chosen: list[Distribution]) -> None:
    """A new environment in ``home`` with exactly the files of ``chosen`` (plain strings, not
    pathlib: there are some 35,000 of them)."""
    venv.EnvBuilder(symlinks=True).create(home)
    python, prefix, made = bytes(home / "bin" / "python"), sys.prefix + os.sep, set()
    for dist in chosen:
        if dist.files is None:
            raise RuntimeError(f"{dist.metadata['Name']} has no RECORD in {sys.prefix}: "
                               "reinstall it with pip (`make install`)")
        site = str(dist.locate_file(""))
        for file in dist.files:
            source = os.path.normpath(os.path.join(site, str(file)))
            if not source.startswith(prefix):
                raise RuntimeError(f"{dist.metadata['Name']} installed {source}, outside "
                                   f"{sys.prefix}: the stranger's environment cannot take it")
            target = os.path.join(home, source[len(prefix):])
            if target in made:
                continue  # a file two distributions share
            folder = os.path.dirname(target)
            if folder not in made:
                os.makedirs(folder, exist_ok=True)
                made.add(folder)
            _take(source, target, python)
            made.add(target)
            if source.endswith(".py"):  # its bytecode, which `make install` compiles apart
                _take_bytecode(source, target, made)


def colab_python() -> Path:
    """The interpreter of a fresh environment with only what Colab ships; built once per set of
    pins and distributions (under a lock: every test worker may ask at once)."""
    chosen = colab_distributions()
    names = [f"{dist.metadata['Name']}=={dist.version}" for dist in chosen]
    key = hashlib.sha256("\n".join([sys.version, *colab_requirements(), *names]).encode())
    key = key.hexdigest()[:12]
    home = CACHE / f"colab-{key}"
    python, ready = home / "bin" / "python", home / ".ready"
    CACHE.mkdir(parents=True, exist_ok=True)
    with FileLock(str(CACHE / f"colab-{key}.lock"), timeout=1200):
        if not ready.exists():
            shutil.rmtree(home, ignore_errors=True)
            _build(home, chosen)
            ready.touch()
    return python


def without_checkout(environment: dict[str, str]) -> dict[str, str]:
    """``environment`` less PYTHONPATH, which a test run may point at this checkout: a stranger's
    Python finds the course only where it was installed."""
    return {key: value for key, value in environment.items() if key != "PYTHONPATH"}


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


def course_site(folder: Path) -> Path:
    """A folder holding the course as its wheel installs it, for a stranger's PYTHONPATH."""
    return install_wheel(build_wheel(folder / "wheel"), folder / "site")


if __name__ == "__main__":  # `make test` builds it first, outside any test's time limit
    print(f"stranger's environment: {colab_python()}")
