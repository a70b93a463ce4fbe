"""The stranger's environment (tests/stranger.py): what Colab's CPU runtime ships at the course's
pins, and nothing of the instructor's."""

import importlib.util
import json
import os
import subprocess
from pathlib import Path

import nbformat
import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests import stranger
from tests.kernels import run_notebook

PROBE = """
import importlib.metadata, importlib.util, json, sys
import torch, numpy, matplotlib, ipywidgets, ipykernel
print(json.dumps({
    "prefix": sys.prefix,
    "installed": {dist.metadata["Name"]: dist.version
                  for dist in importlib.metadata.distributions()},
    "importable": [name for name in sys.argv[1:] if importlib.util.find_spec(name)],
}))
"""
INSTRUCTOR_MODULES = ("nbgrader", "jupyterlab", "notebook", "nbclient", "nbconvert", "nbformat",
                      "jupytext", "dask", "distributed", "pytest", "xdist", "playwright",
                      "autograder", "widgets", "grader", "tests", "triton", "ninja")


def _outside(tmp_path) -> dict:
    """Run it as a stranger does: in an empty folder, with no PYTHONPATH into this checkout."""
    return {"cwd": tmp_path, "env": stranger.without_checkout(dict(os.environ)),
            "capture_output": True, "text": True, "timeout": 300}


@pytest.fixture(scope="module")
def python():
    return stranger.colab_python()


@pytest.fixture(scope="module")
def probe(python, tmp_path_factory):
    """What the stranger's Python holds and can import."""
    ran = subprocess.run([str(python), "-c", PROBE, *INSTRUCTOR_MODULES],
                         **_outside(tmp_path_factory.mktemp("probe")))
    assert ran.returncode == 0, ran.stderr
    return json.loads(ran.stdout)


def _pinned_elsewhere() -> set[str]:
    """The names requirements.txt pins that Colab does not ship: the instructor's and the
    tests' tools."""
    lines = [line.split("#")[0].strip() for line in
             (stranger.REPO / "requirements.txt").read_text().splitlines()]
    names = {canonicalize_name(Requirement(line).name) for line in lines if line}
    return names - {canonicalize_name(name) for name in stranger.COLAB_SHIPS}


@pytest.mark.slow
def test_it_holds_what_colab_ships_at_the_pins_and_nothing_else(probe):
    """Does the stranger's Python see exactly the distributions chosen for it, the pinned ones
    at their pins, and none of the other pins of requirements.txt?"""
    installed = {canonicalize_name(name): version for name, version in probe["installed"].items()}
    assert installed == {canonicalize_name(dist.metadata["Name"]): dist.version
                         for dist in stranger.colab_distributions()}
    for pin in map(Requirement, stranger.colab_requirements()):
        assert pin.specifier.contains(installed[canonicalize_name(pin.name)], prereleases=True)
    assert not _pinned_elsewhere() & set(installed)
    assert {"pip", "torch"} <= set(installed)


@pytest.mark.slow
def test_it_cannot_import_the_instructors_tools_or_the_course(probe):
    """Do nbgrader, JupyterLab, pytest, the course, and triton and ninja (which lesson 13
    installs) stay out of the stranger's reach (the probe imported torch, numpy, matplotlib,
    ipywidgets and ipykernel)?"""
    assert probe["importable"] == []
    assert probe["prefix"] == str(stranger.colab_python().parents[1])


@pytest.mark.slow
def test_pip_finds_every_requirement_satisfied(python, tmp_path):
    """Is what it holds complete: does `pip check` find nothing missing?"""
    checked = subprocess.run([str(python), "-m", "pip", "check"], **_outside(tmp_path))
    assert checked.returncode == 0, checked.stdout + checked.stderr


@pytest.mark.slow
def test_its_scripts_run_its_own_python(python):
    """Does every script in its bin/ start the stranger's Python, not the course's?"""
    scripts = [path for path in python.parent.iterdir() if not path.is_symlink()]
    shebangs = {path.name: path.read_bytes().split(b"\n")[0] for path in scripts}
    python_scripts = {name: line for name, line in shebangs.items() if line.startswith(b"#!")}
    assert {"pip", "ipython", "jupyter"} <= set(python_scripts)
    assert {line.decode() for line in python_scripts.values()} == {f"#!{python}"}


@pytest.mark.slow
def test_a_kernel_starts_in_it_the_way_the_notebook_tests_start_one(python, tmp_path):
    """Does `python -m ipykernel_launcher` of the stranger's Python run a cell?"""
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        "import sys, torch\nprint(sys.prefix)")])
    run_notebook(notebook, tmp_path, python=python, env=_outside(tmp_path)["env"])
    assert notebook.cells[0].outputs[0]["text"].strip() == str(python.parents[1])


def test_a_pin_the_course_environment_lacks_stops_the_build(monkeypatch):
    """Does a pin that `make install` has not installed stop the build, naming the pin, what is
    installed instead and the command that fixes it?"""
    monkeypatch.setattr(stranger, "colab_requirements", lambda: ["torch==0.0.1"])
    with pytest.raises(RuntimeError, match=r"requirements.txt asks for torch==0.0.1, but torch "
                       r"2\.13\.0\S* is installed in .*: run `make install`"):
        stranger.colab_distributions()
    monkeypatch.setattr(stranger, "colab_requirements", lambda: ["no-such-package==1.0"])
    with pytest.raises(RuntimeError, match="but no no-such-package is installed"):
        stranger.colab_distributions()


def test_its_modules_come_with_their_bytecode(python):
    """Does torch, as the stranger's Python holds it, have the compiled bytecode the course
    environment has (`make install` compiles apart from pip, so RECORD lists none): every kernel
    of the browser tests would otherwise compile what it imports again."""
    module = next(python.parents[1].glob("lib/python*/site-packages/torch/__init__.py"))
    assert Path(importlib.util.cache_from_source(str(module))).exists()
