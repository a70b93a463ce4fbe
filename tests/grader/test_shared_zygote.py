"""Does a shared zygote serve the grading processes started under it, and only them, and only
with sandboxed kernels?"""

import os
import subprocess
import sys

import psutil
import pytest

from grader import sandbox
from grader.shared_zygote import SOCKET_VARIABLE, SharedZygote, shared_for, shared_zygote

pytestmark = pytest.mark.skipif(sandbox.capability().mode == "none",
                                reason="kernels cannot be sandboxed here")


@pytest.fixture(scope="module")
def shared():
    """A shared zygote of its own (the one the grading tests share set aside); once its block
    ends, the zygote must be gone and the variable unset."""
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv(SOCKET_VARIABLE, raising=False)
        before = {child.pid for child in psutil.Process().children()}
        environment = sandbox.zygote_environment()
        with shared_zygote(environment):
            (zygote,) = [child for child in psutil.Process().children() if child.pid not in before]
            yield environment, os.environ[SOCKET_VARIABLE]
        assert SOCKET_VARIABLE not in os.environ
        assert not zygote.is_running() or zygote.status() == psutil.STATUS_ZOMBIE


def test_processes_started_inside_find_it(shared):
    environment, name = shared
    found = subprocess.run(
        [sys.executable, "-c", "from grader.shared_zygote import shared_for; "
         "from grader.sandbox import zygote_environment; "
         "print(shared_for(zygote_environment()).name)"],
        capture_output=True, text=True, check=True).stdout.strip()
    assert found == name


def test_another_environment_gets_its_own(shared):
    environment, _ = shared
    assert shared_for(environment) is not None
    assert shared_for({**environment, "LANG": "fr_FR.UTF-8"}) is None


def test_a_kernel_without_a_sandbox_is_refused(shared, tmp_path):
    _, name = shared
    request = {"mode": "none", "argv": [], "log": str(tmp_path / "log"), "env": {},
               "cwd": str(tmp_path), "status_file": str(tmp_path / "status")}
    with pytest.raises(RuntimeError, match="sandboxed kernels only"):
        SharedZygote(name).spawn(request)


def test_a_process_in_a_kernels_namespaces_cannot_reach_it(shared):
    """The socket is abstract: a process in the namespaces a sandboxed kernel gets (a network
    namespace of its own among them) finds nothing there, where this one connects."""
    _, name = shared
    connect = ("import socket; s = socket.socket(socket.AF_UNIX); "
               f"s.connect('\\0{name}'); print('connected')")
    assert subprocess.run([sys.executable, "-c", connect], capture_output=True,
                          text=True).stdout.strip() == "connected"
    inside = subprocess.run(["unshare", *sandbox._namespace_flags(sandbox.capability().mode),
                             "--", sys.executable, "-c", connect], capture_output=True, text=True)
    assert inside.returncode != 0 and "ConnectionRefusedError" in inside.stderr, inside.stderr
