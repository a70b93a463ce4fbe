"""tools/gpu_check: the GPU check a session runs on a lent machine that has its own CUDA torch
and no package registry. It cannot run here; these tests keep it from going stale."""

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
RUN = (REPO / "tools" / "gpu_check" / "run.sh").read_text()
PREPARE = (REPO / "tools" / "gpu_check" / "prepare.sh").read_text()


def test_the_conftest_lines_it_leaves_out_are_there():
    """Does tests/conftest.py still import THREADS and the JupyterLab fixtures on the lines
    run.sh's sed drops in its copy (else the GPU machine, without nbclient, collects nothing)?"""
    conftest = (REPO / "tests" / "conftest.py").read_text().splitlines()
    assert "from tests.kernels import THREADS" in conftest
    assert any(line.startswith("from tests.jupyterlab import") for line in conftest)
    assert "s/^from tests.kernels import THREADS/" in RUN and "/^from tests.jupyterlab import/d" in RUN


def test_the_nbgrader_it_stands_in_for_is_only_the_two_predicates():
    """Does grader.notebook_format take from nbgrader only the two cell predicates run.sh
    writes in its place?"""
    source = (REPO / "grader" / "notebook_format.py").read_text()
    assert re.findall(r"^from nbgrader\S* import .*$", source, re.MULTILINE) == [
        "from nbgrader.utils import is_grade, is_solution"]
    assert "def is_grade(cell)" in RUN and "def is_solution(cell)" in RUN


def test_the_benchmarks_it_runs_are_registered():
    """Is every benchmark run.sh names one `make bench` runs?"""
    from tools.bench import BENCHMARKS

    named = re.search(r"-m tools\.bench ([a-z ]+) >", RUN).group(1).split()
    assert named and set(named) <= {title.split()[0] for title, _ in BENCHMARKS}


def test_the_wheels_are_pinned_from_the_course_environment():
    """Does prepare.sh take each wheel's version from the course environment (pip freeze), for
    the machine's Python 3.12?"""
    assert "pip freeze" in PREPARE and "--python-version 3.12" in PREPARE
