"""`make lab` serves the course: JupyterLab starts, shows a lesson, and stops cleanly."""

import json
import os
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _get(url: str, token: str):
    request = urllib.request.Request(url, headers={"Authorization": f"token {token}"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.status, response.read()


def test_make_lab_serves_the_course():
    """Does `make lab` open JupyterLab on course/, serving /lab and a lesson notebook?"""
    port, token = _free_port(), "course-test-token"
    environment = dict(os.environ, JUPYTER_TOKEN=token)
    server = subprocess.Popen(
        ["make", "--no-print-directory", "lab", f"PORT={port}",
         "LAB_ARGS=--no-browser --ServerApp.ip=127.0.0.1"],
        cwd=ROOT, env=environment, start_new_session=True,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                status, page = _get(f"http://127.0.0.1:{port}/lab", token)
                break
            except OSError:
                assert server.poll() is None, server.stdout.read()
                assert time.monotonic() < deadline, "JupyterLab did not start within 90 s"
                time.sleep(0.5)
        assert status == 200 and b"JupyterLab" in page
        status, body = _get(f"http://127.0.0.1:{port}/api/contents/00_template.ipynb", token)
        notebook = json.loads(body)
        assert status == 200 and notebook["type"] == "notebook"
        assert "Lesson 00" in json.dumps(notebook["content"])
    finally:
        _interrupt(server)


def _interrupt(server: subprocess.Popen) -> None:
    """Ctrl-C, as a learner would stop it, and fail if it is still running 20 s later."""
    try:
        os.killpg(server.pid, signal.SIGINT)
        server.wait(timeout=20)
    except ProcessLookupError:
        pass
    except subprocess.TimeoutExpired:
        os.killpg(server.pid, signal.SIGKILL)
        pytest.fail("JupyterLab did not stop on Ctrl-C")
