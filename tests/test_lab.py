"""`make lab` serves the course: JupyterLab starts, shows a lesson, and stops cleanly."""

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.jupyterlab import free_port
from tests.kernels import bounded_environment, bounded_process

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow


def _get(url: str, token: str):
    request = urllib.request.Request(url, headers={"Authorization": f"token {token}"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.status, response.read()


def test_make_lab_serves_the_course(tmp_path):
    """Does `make lab` open JupyterLab on course/, serving /lab and a lesson notebook, with
    JupyterLab's news prompt off?"""
    port, token = free_port(), "course-test-token"
    environment = bounded_environment(JUPYTER_TOKEN=token)
    log_path = tmp_path / "lab.log"  # a file, not a pipe: an unread pipe fills and blocks the server
    log = log_path.open("w")
    server = subprocess.Popen(
        ["make", "--no-print-directory", "lab", f"PORT={port}",
         "LAB_ARGS=--no-browser --ServerApp.ip=127.0.0.1"],
        cwd=ROOT, env=environment, start_new_session=True, preexec_fn=bounded_process(),
        stdin=subprocess.DEVNULL,
        stdout=log, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                status, page = _get(f"http://127.0.0.1:{port}/lab", token)
                break
            except OSError:
                assert server.poll() is None, log_path.read_text()
                assert time.monotonic() < deadline, "JupyterLab did not start within 90 s"
                time.sleep(0.5)
        assert status == 200 and b"JupyterLab" in page
        status, body = _get(f"http://127.0.0.1:{port}/api/contents/00_template.ipynb", token)
        notebook = json.loads(body)
        assert status == 200 and notebook["type"] == "notebook"
        assert "Lesson 00" in json.dumps(notebook["content"])
        # no "get notified about Jupyter news?" toast over a learner's first outputs
        status, body = _get(f"http://127.0.0.1:{port}/lab/api/settings/"
                            "@jupyterlab/apputils-extension:notification", token)
        news = json.loads(body)["schema"]["properties"]  # the course's overrides: defaults
        assert status == 200 and news["fetchNews"]["default"] == "false"
        assert news["checkForUpdates"]["default"] is False
    finally:
        _interrupt(server, log_path)
        log.close()


def _interrupt(server: subprocess.Popen, log_path) -> None:
    """Stop the server as a service manager would (SIGTERM), and fail
    unless every process of the group is gone within 30 s. (Ctrl-C in a terminal asks for
    confirmation first; without a terminal JupyterLab would hang in its KeyboardInterrupt path.)"""
    children = subprocess.run(["pgrep", "-P", str(server.pid)], capture_output=True,
                              text=True).stdout.split()
    try:  # JupyterLab only: `make` would pass the signal on, and a second one hangs its shutdown
        for child in children:
            os.kill(int(child), signal.SIGTERM)
    except ProcessLookupError:
        pass
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        server.poll()  # reap `make` once it exits, or its zombie keeps the group alive
        try:
            os.killpg(server.pid, 0)
        except ProcessLookupError:
            assert "Shutting down" in log_path.read_text()
            return
        time.sleep(0.2)
    os.killpg(server.pid, signal.SIGKILL)
    pytest.fail("JupyterLab did not stop on SIGTERM:\n" + log_path.read_text()[-3000:])


def test_the_install_enables_what_the_course_uses():
    """Does the course's environment, as installed, have nbgrader's server extensions on
    (Formgrader, Validate, Assignment List) and the widget manager's and nbgrader's lab
    extensions installed and not switched off? (Read as JupyterLab reads its configuration.)"""
    from jupyter_core.paths import jupyter_config_path
    from jupyter_server.extension.config import ExtensionConfigManager
    from jupyterlab_server.config import get_static_page_config

    server = ExtensionConfigManager(read_config_path=jupyter_config_path())
    for name in ("formgrader", "validate_assignment", "assignment_list"):
        assert server.get_jpserver_extensions().get(f"nbgrader.server_extensions.{name}"), name
    disabled = get_static_page_config().get("disabledExtensions", {})
    for extension in ("@jupyter-widgets/jupyterlab-manager", "@jupyter/nbgrader"):
        assert (Path(sys.prefix) / "share/jupyter/labextensions" / extension / "package.json"
                ).exists(), extension
        assert not disabled.get(extension), extension


INSTRUCTOR_TOOLS = ("@jupyter/nbgrader:create-assignment", "@jupyter/nbgrader:formgrader",
                    "@jupyter/nbgrader:course-list")


def test_make_lab_hides_nbgraders_instructor_tools(monkeypatch):
    """Does `make lab` (the learners' JupyterLab) switch off Create Assignment, the Formgrader
    and the Course List, and keep Validate and the Assignment List?"""
    from jupyterlab_server.config import get_static_page_config

    recipe = subprocess.run(["make", "-n", "--no-print-directory", "lab"], cwd=ROOT,
                            capture_output=True, text=True, check=True).stdout
    assert f"JUPYTER_CONFIG_PATH={ROOT / 'tools' / 'learner_lab'} " in recipe
    monkeypatch.setenv("JUPYTER_CONFIG_PATH", str(ROOT / "tools" / "learner_lab"))
    disabled = get_static_page_config().get("disabledExtensions", {})
    assert all(disabled.get(plugin) for plugin in INSTRUCTOR_TOOLS)
    assert not disabled.get("@jupyter/nbgrader:validate-assignment")
    assert not disabled.get("@jupyter/nbgrader:assignment-list")


def test_the_instructor_guide_names_the_menus_nbgrader_has():
    """Does the instructors' guide send instructors to menus the installed nbgrader extension has
    (Nbgrader -> Create assignment, Formgrader), not to JupyterLab 3's cell toolbar?"""
    bundle = "".join(path.read_text(errors="replace") for path in (
        Path(sys.prefix) / "share" / "jupyter" / "labextensions" / "@jupyter" / "nbgrader"
        / "static").glob("*.js"))
    assert 'label:"Create assignment"' in bundle and 'label:"Formgrader"' in bundle
    guide = (ROOT / "docs" / "instructors.md").read_text()
    assert "Nbgrader → Create assignment" in guide
    assert "Nbgrader → Formgrader" in guide
    assert "Cell Toolbar" not in guide


def test_make_lab_keeps_its_workspace_in_the_course():
    """Issue 48: does `make lab` keep JupyterLab's workspace (the tabs it reopens, and the kernels
    they start) inside the course's own .venv, not one another course left in ~/.jupyter?"""
    command = subprocess.run(["make", "--no-print-directory", "-n", "lab"], cwd=ROOT,
                             capture_output=True, text=True, check=True).stdout
    assert "--LabApp.workspaces_dir=.venv/lab-workspaces" in command


def test_make_labs_validate_gives_each_cell_the_graders_limits(monkeypatch):
    """Learner trial 80: Validate in `make lab` failed a notebook whose exercises all pass with a
    raw CellTimeoutError on its Setup cell (torch's import took 21-28 s on a loaded machine, under
    nbgrader's 30 s and 4 s limits). Does the configuration the Validate button's handler loads
    (as it loads it: the server's working directory, then JUPYTER_CONFIG_PATH) give Execute the
    grader's limits: AUTOGRADER_CELL_TIMEOUT seconds a cell, and the grader's wait for output?"""
    from nbgrader.preprocessors import Execute
    from nbgrader.server_extensions.validate_assignment.handlers import ValidateAssignmentHandler
    from nbgrader.validator import Validator

    from grader.settings import IOPUB_TIMEOUT, Settings

    recipe = subprocess.run(["make", "-n", "--no-print-directory", "lab"], cwd=ROOT,
                            capture_output=True, text=True, check=True).stdout
    assert f"JUPYTER_CONFIG_PATH={ROOT / 'tools' / 'learner_lab'} " in recipe
    monkeypatch.chdir(ROOT)  # make runs JupyterLab in the course root
    monkeypatch.setenv("JUPYTER_CONFIG_PATH", str(ROOT / "tools" / "learner_lab"))
    for given, seconds in (("", Settings.cell_timeout), ("300", 300)):
        monkeypatch.setenv("AUTOGRADER_CELL_TIMEOUT", given)
        config = ValidateAssignmentHandler.load_config(None)
        execute = Execute(parent=Validator(config=config))
        assert (execute.timeout, execute.iopub_timeout) == (seconds, IOPUB_TIMEOUT)
    assert Settings.cell_timeout >= 120 and IOPUB_TIMEOUT >= 10
