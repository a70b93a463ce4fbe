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


def pytest_collection_modifyitems(items):
    """The longest work first (browser, then the other slow tests: notebooks, nbgrader,
    servers), so the two workers start on it and the quick tests fill in at the end."""
    items.sort(key=lambda item: (item.get_closest_marker("browser") is None,
                                 item.get_closest_marker("slow") is None))
