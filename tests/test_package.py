"""The course as a package: what a learner's `pip install` gets, and a learner notebook opened
by a stranger (alone in an empty folder, in a Python with only what Colab ships)."""

import re
import shutil
import tomllib
import subprocess
import zipfile
from email.parser import Parser

import nbformat
import pytest

from grader.lessons import PACKAGE_VARIABLE
from tests.kernels import bounded_environment, run_notebook
from tests.stranger import (REPO, build_wheel, colab_python, layered_environment,
                             without_checkout)

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    return build_wheel(tmp_path_factory.mktemp("wheel"))


def _metadata(wheel):
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        text = archive.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    return names, Parser().parsestr(text)


def test_the_wheel_holds_the_course_packages_and_no_development_scripts(wheel):
    """Does the wheel install autograder, widgets and grader, and no `tools` or `tests`?"""
    names, _ = _metadata(wheel)
    top_level = {name.split("/")[0] for name in names if not name.split("/")[0].endswith(
        ".dist-info")}
    assert top_level == {"autograder", "grader", "widgets"}


def test_the_wheel_states_what_a_kernel_and_an_instructor_need(wheel):
    """Does `pip install` of the course bring what a learner's kernel needs, and the
    instructor's side (nbgrader, Dask) as the `instructor` extra?"""
    _, metadata = _metadata(wheel)
    requires = metadata.get_all("Requires-Dist")
    def name(requirement: str) -> str:
        return re.match(r"[A-Za-z0-9_.-]+", requirement).group()

    plain = {name(r) for r in requires if "extra ==" not in r}
    extra = {name(r) for r in requires if 'extra == "instructor"' in r}
    assert plain == {"torch", "numpy", "matplotlib", "ipywidgets"}
    assert {"nbgrader", "dask", "distributed", "jupyterlab"} <= extra
    assert not any(re.search(r"==\s*[0-9]", r) for r in requires), "ranges here; pins are make's"


def test_a_learner_notebook_alone_in_an_empty_folder_installs_the_course(wheel, tmp_path):
    """Copied alone into an empty folder and run in a Python with only what Colab ships, does a
    learner notebook install the course from its first cell and then fail only with the stubs'
    NotImplementedError?"""
    python = layered_environment(colab_python(), tmp_path / "colab")
    folder = tmp_path / "empty"
    folder.mkdir()
    shutil.copy(REPO / "course" / "00_template.ipynb", folder)
    notebook = nbformat.read(folder / "00_template.ipynb", as_version=4)
    stranger = without_checkout(bounded_environment(**{PACKAGE_VARIABLE: str(wheel)}))
    run_notebook(notebook, folder, python=python, allow_errors=True, env=stranger)
    setup = "".join(output.get("text", "") for output in notebook.cells[0].outputs)
    assert f"pip install {wheel}" in setup and "Installed autograder and widgets" in setup
    errors = [f"{output.ename}: {output.evalue}" for cell in notebook.cells
              if cell.cell_type == "code" for output in cell.outputs
              if output.output_type == "error"]
    assert errors and all(error.startswith("NotImplementedError") for error in errors), errors
    installed = subprocess.run([str(python), "-c", "import autograder, widgets"], check=False,
                               cwd=tmp_path, env=stranger)
    assert installed.returncode == 0
    untouched = subprocess.run([str(colab_python()), "-c", "import autograder"], check=False,
                               cwd=tmp_path, capture_output=True, env=stranger)
    assert untouched.returncode != 0, "the install leaked into the shared stranger environment"


def test_the_readme_installs_from_the_repository_the_notebooks_name():
    """Does the README's one-line install name the repository the notebooks install from?"""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert f"git+{project['urls']['Repository']}" in (REPO / "README.md").read_text()
