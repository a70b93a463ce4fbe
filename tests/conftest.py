"""Fixtures shared by the grading-library tests: devices and hint assertions.

Markers (slow, browser, lesson00..lesson13) are declared in pyproject.toml."""

import os
from contextlib import contextmanager

from tests.kernels import THREADS

# One compute thread in the test processes and in every kernel, zygote and server they start
# (all inherit this environment): two workers on two cores must not oversubscribe them.
os.environ.update(THREADS)

import pytest  # noqa: E402
import torch  # noqa: E402

from autograder.devices import interpret_triton_without_gpu  # noqa: E402

interpret_triton_without_gpu()  # the same choice a learner's kernel and a grading kernel make

from autograder.errors import GradingError
# The browser tests' JupyterLab, Chromium and page: registered here so that the test files share
# one of each per pytest process.
from tests.jupyterlab import _jupyterlab_pages, browser, lab, lab_page  # noqa: E402,F401

# Where PyTorch sees no CUDA device, the CUDA case of a device-parametrized test is not
# collected rather than collected and skipped: over a thousand such items cost the scheduler and
# the report CPU seconds for nothing. The report's header says so (pytest_report_header).
DEVICES = ["cpu", "cuda"] if torch.cuda.is_available() else ["cpu"]


def pytest_report_header() -> str:
    if "cuda" in DEVICES:
        return "devices: cpu, cuda"
    return ("devices: cpu only (PyTorch sees no CUDA device: each device-parametrized test's "
            "CUDA case is left out, and the tests that need CUDA are skipped)")


@pytest.fixture(params=DEVICES)
def device(request) -> torch.device:
    """Every device a test runs on: CPU, and CUDA when present."""
    return torch.device(request.param)


@pytest.fixture
def cuda() -> torch.device:
    """The CUDA device; the test is skipped where there is none."""
    if not torch.cuda.is_available():
        pytest.skip("PyTorch sees no CUDA device")
    return torch.device("cuda")


@pytest.fixture
def raises_hint():
    """``with raises_hint("phrase"):`` expects a GradingError whose first line, the hint the
    learner reads, contains ``phrase``."""

    @contextmanager
    def expect(phrase: str, error: type = GradingError):
        with pytest.raises(error) as info:
            yield info
        first_line = (str(info.value).splitlines() or [""])[0]
        assert phrase in first_line, f"hint {first_line!r} does not say {phrase!r}"

    return expect


# The xdist groups, longest first: seconds of one worker on an idle 2-core machine (CI's run
# for issue 69, and a --durations=0 run under load scaled to it). `make test` hands them out in
# this order (--no-loadscope-reorder). xdist's own order is the groups with the most tests
# first, whatever they cost: faults and sandbox, which both start by asking for the released
# course (tests/released.py), so one worker built it while the other sat idle on its lock
# (113 s of a run under load, about 25 s idle). The two first here need no released course:
# the third builds it while they run, and no worker waits. A group not listed runs after
# these and before the single tests.
GROUPS_LONGEST_FIRST = (
    "course-catalogued",   # `make test-all` only: every catalogued mistake, graded
    "jupyterlab",          # ~175 s: JupyterLab, Chromium, the widget demo three ways
    "term",                # ~100 s: seven `python -m grader` commands over a term
    "course-0",            # ~60 s, and ~25 s building the released course for every group
    "faults",              # ~65 s
    "package",             # ~55 s: the README's installs, a notebook on a stranger's Python
    "exchange",            # ~55 s
    "insight-class",       # ~45 s
    "sandbox",             # ~45 s
    "course-2",            # ~44 s
    "instructor",          # ~40 s
    "course-1",            # ~33 s
    "course-3",            # ~27 s
    "self-check-session",  # ~15 s
    "needed-cells",        # ~18 s
    "feedback",            # ~15 s
    "batch",               # ~12 s
)


def _xdist_group(item) -> str | None:
    """The group xdist gives ``item`` (its xdist_group names, sorted, joined by "_")."""
    names = sorted({str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
                    for mark in item.iter_markers("xdist_group")})
    return "_".join(names) or None


def pytest_collection_modifyitems(items):
    """The longest work first, so the two workers start on it and the quick tests fill in at
    the end: the xdist groups by GROUPS_LONGEST_FIRST, then the single tests, browser and
    other slow ones (notebooks, nbgrader, servers) before the rest."""
    rank = {group: index for index, group in enumerate(GROUPS_LONGEST_FIRST)}

    def key(item):
        group = _xdist_group(item)
        order = (len(rank) + 1 if group is None else rank.get(group, len(rank)))
        return (order, item.get_closest_marker("browser") is None,
                item.get_closest_marker("slow") is None)

    items.sort(key=key)
