"""The grading tests' kernels: every grading command a test worker starts takes its sandboxed
kernels from one zygote (``grader.shared_zygote``), so torch is imported once per worker rather
than once per command; a command that imports in another environment starts its own."""

import pytest

from grader import sandbox
from grader.shared_zygote import SANDBOXED, shared_zygote


@pytest.fixture(scope="session", autouse=True)
def _one_zygote_per_worker():
    if sandbox.capability().mode not in SANDBOXED:
        yield
        return
    with shared_zygote(sandbox.zygote_environment()):
        yield
