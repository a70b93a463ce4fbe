"""The pip and conda descriptions of the course environment, and the versions lesson 13
installs, stay in step."""

import ast
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PIN = re.compile(r"^\s*(?:-\s+)?([A-Za-z0-9_.\-]+)==([^\s#]+)")


def _pins(path: Path) -> dict[str, str]:
    return {m[1].lower(): m[2] for line in path.read_text().splitlines() if (m := PIN.match(line))}


def test_conda_environment_pins_what_requirements_pin():
    """Does environment.yml list exactly the packages and versions of requirements.txt?"""
    assert _pins(ROOT / "environment.yml") == _pins(ROOT / "requirements.txt")


def test_torch_is_pinned_to_the_course_version():
    """Is torch pinned to 2.13.0, the version the course is written for?"""
    assert _pins(ROOT / "requirements.txt")["torch"] == "2.13.0"


def test_install_pulled_no_cuda_wheels():
    """Did `make install` take the CPU torch wheel, with none of the multi-GB nvidia-* packages?"""
    from importlib.metadata import distributions

    import pytest
    import torch

    assert torch.__version__.split("+")[0] == "2.13.0"
    if torch.version.cuda is not None:
        pytest.skip("a CUDA build of torch was installed deliberately (README: Using a GPU)")
    assert not sorted(d.metadata["Name"] for d in distributions()
                      if d.metadata["Name"].lower().startswith("nvidia-"))


def test_reading_a_notebook_builds_no_iri_grammar():
    """Do nbformat and jupyter-events import without rfc3987-syntax, whose Lark grammar costs
    every nbgrader, grader and JupyterLab start 1.5 s (requirements.txt pins jsonschema)?"""
    probe = "import sys, nbformat, jupyter_events; print('rfc3987_syntax' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "False"


def test_the_notebooks_name_the_torch_they_were_checked_on():
    """Is the version the notebooks compare a learner's torch with the pinned one?"""
    from autograder.environment import CHECKED_TORCH, torch_note

    assert CHECKED_TORCH == _pins(ROOT / "requirements.txt")["torch"]
    assert torch_note(CHECKED_TORCH) is None and torch_note(f"{CHECKED_TORCH}+cpu") is None
    assert "2.9.0+cu126" in torch_note("2.9.0+cu126")



def test_lesson_13_installs_the_triton_and_ninja_that_requirements_pin():
    """Does lesson 13's first cell install, where they are missing, the triton and ninja that
    requirements.txt pins (the versions the lesson was checked with), and name them so in its
    text?"""
    source = (ROOT / "lessons" / "13_kernels.py").read_text()
    installs = re.search(r"^LESSON_PACKAGES = (\{.*?\})", source, re.MULTILINE)
    assert installs, "lessons/13_kernels.py has no LESSON_PACKAGES = {module: pin, ...}"
    pins = _pins(ROOT / "requirements.txt")
    assert ast.literal_eval(installs[1]) == {name: f"{name}=={pins[name]}"
                                             for name in ("triton", "ninja")}
    assert f"pip install triton=={pins['triton']} ninja=={pins['ninja']}" in source

GROUPED_TESTS = """
import os
import pytest

pytestmark = pytest.mark.xdist_group("one")


@pytest.mark.parametrize("case", range(6))
def test_case(case):
    with open("workers.txt", "a") as handle:
        handle.write(os.environ["PYTEST_XDIST_WORKER"] + "\\n")
"""


def test_tests_of_one_xdist_group_share_a_worker(tmp_path):
    """Does `--dist loadgroup` keep an xdist_group on one worker, as the grading fixtures
    (built once, then read by every test of their group) rely on, with the groups in
    collection order as `make test` hands them out (--no-loadscope-reorder)? (pytest 9.2 with
    pytest-xdist 3.8 silently spread a group over every worker.)"""
    (tmp_path / "test_grouped.py").write_text(GROUPED_TESTS)
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "2", "--dist", "loadgroup",
                           "--no-loadscope-reorder", "-p", "no:cacheprovider", "test_grouped.py"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert len(set((tmp_path / "workers.txt").read_text().split())) == 1
