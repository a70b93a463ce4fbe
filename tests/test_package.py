"""The course as a package: the README's install commands run as printed in a copy of the
course, what a learner's `pip install` gets, and a learner notebook opened by a stranger (alone
in an empty folder, in a Python with only what Colab ships)."""

import os
import re
import shlex
import shutil
import subprocess
import tomllib
import zipfile
from email.parser import Parser
from pathlib import Path

import nbformat
import pytest

from grader.lessons import PACKAGE_VARIABLE, course_wheel, setup_cell
from tests.kernels import bounded_environment, run_notebook
from tests.stranger import REPO, colab_python, layered_environment, without_checkout

# One worker runs the module: the wheel and the installs are built once, not once per worker.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("package")]

README = REPO / "README.md"


def readme_install_commands() -> list[str]:
    """The commands of the README's learners' section, as printed (comments dropped)."""
    section = README.read_text().split("\n## Learners\n")[1].split("\n## ")[0]
    block = re.search(r"```bash\n(.*?)```", section, re.DOTALL)
    assert block, "the README's Learners section has no ```bash block of install commands"
    return [line.split("#")[0].strip() for line in block[1].splitlines()
            if line.split("#")[0].strip()]


def copy_of_the_course(target):
    """The files a clone of this checkout holds (tracked, or new and not ignored) in ``target``."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=REPO, capture_output=True, check=True).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = REPO / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    return target


def _outside(folder) -> dict:
    """Run as a stranger does: no PYTHONPATH into this checkout."""
    return {"cwd": folder, "env": without_checkout(dict(os.environ)), "capture_output": True,
            "text": True, "timeout": 600}


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """A copy of the course, as a learner's clone holds it."""
    return copy_of_the_course(tmp_path_factory.mktemp("course"))


@pytest.fixture(scope="module")
def readme_installs(course, tmp_path_factory) -> dict[str, Path | None]:
    """Each of the README's commands run as printed, in order, in ``course`` by the `pip` of a
    stranger's Python: each `pip install` in a fresh layer of its own. Maps each command to the
    layer's Python it installed into (None for a build)."""
    layers = tmp_path_factory.mktemp("layers")
    done = {}
    for index, command in enumerate(readme_install_commands()):
        words = shlex.split(command)
        assert words[0] == "pip", f"README: {command!r} is not a pip command"
        installs = words[1] == "install"
        python = (layered_environment(colab_python(), layers / str(index)) if installs
                  else colab_python())
        ran = subprocess.run([str(python), "-m", *words], **_outside(course))
        assert ran.returncode == 0, f"README: {command!r} failed:\n{ran.stdout}{ran.stderr}"
        done[command] = python if installs else None
    return done


@pytest.fixture(scope="module")
def wheel(course, readme_installs):
    """The wheel the README's `pip wheel --no-deps .` built in the copy of the course."""
    (built,) = course.glob("*.whl")
    return built


FIND_THE_COURSE = ("from importlib.util import find_spec; "
                   "print(find_spec('autograder').origin, find_spec('widgets').origin)")

def test_each_readme_install_command_installs_the_course(readme_installs, tmp_path):
    """Does each `pip install` the README prints (from a copy of the course, and from the wheel
    it builds there) install autograder and widgets into the stranger's Python, found from any
    folder? (The learner notebook below imports them from the wheel.)"""
    layers = {command: python for command, python in readme_installs.items() if python}
    assert any(command.split()[-1] == "." for command in layers), "no install from a copy"
    assert any(command.endswith(".whl") for command in layers), "no install of the wheel"
    for command, python in layers.items():
        found = subprocess.run([str(python), "-c", FIND_THE_COURSE], **_outside(tmp_path))
        assert found.returncode == 0, f"after {command!r}: {found.stderr}"
        site = python.parents[1] / "lib"
        assert all(Path(module).is_relative_to(site) for module in found.stdout.split()), (
            f"after {command!r} the course came from {found.stdout}, not {site}")


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


def test_the_readme_and_the_first_cell_name_the_wheel_pip_wheel_builds(wheel):
    """Is the wheel the README installs, and the notebooks' first cell tells a learner to
    install, the one `pip wheel --no-deps .` builds; and do they and pyproject.toml name no
    repository to install from (the course is published in none)?"""
    assert wheel.name == course_wheel()
    assert f"pip install {wheel.name}" in README.read_text()
    assert f"%pip install {wheel.name}" in setup_cell().source
    assert "git+" not in README.read_text() and "git+" not in setup_cell().source
    assert "urls" not in tomllib.loads((REPO / "pyproject.toml").read_text())["project"]


def test_without_the_course_the_first_cell_says_how_to_install_it(tmp_path):
    """Run where the course is missing and AUTOGRAD_COURSE_PACKAGE is unset, does a learner
    notebook's first cell stop with a ModuleNotFoundError that says how to install the course
    (the wheel, a copy of the course, the variable), and install nothing?"""
    python = layered_environment(colab_python(), tmp_path / "colab")
    (tmp_path / "empty").mkdir()
    first_cell = nbformat.read(REPO / "course" / "13_kernels.ipynb", as_version=4).cells[0]
    stranger = _outside(tmp_path / "empty")
    stranger["env"].pop(PACKAGE_VARIABLE, None)
    ran = subprocess.run([str(python), "-c", first_cell.source], **stranger)
    assert ran.returncode != 0
    message = ran.stderr.strip().splitlines()[-1]
    assert message.startswith("ModuleNotFoundError: The course package"), ran.stderr
    for advice in (f"%pip install {course_wheel()}", "pip wheel --no-deps .",
                   "%pip install /path/to/the/course", f"%env {PACKAGE_VARIABLE}="):
        assert advice in message
    assert "Installing" not in ran.stdout
