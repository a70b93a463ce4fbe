"""A JupyterLab server and a headless Chromium for the browser tests: Debian's chromium driven
by Playwright (Playwright's own browser download is not used)."""

import json
import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.kernels import bounded_environment, bounded_process

REPO = Path(__file__).resolve().parents[1]
LEARNER_LAB = REPO / "tools" / "learner_lab"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--no-first-run", "--disable-sync"]
RUN_TIMEOUT_S = 300


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def jupyter_command(command: str) -> list[str]:
    """``jupyter <command>`` from the course's .venv, or from this interpreter's."""
    venv = REPO / ".venv" / "bin" / f"jupyter-{command}"
    return [str(venv)] if venv.exists() else [sys.executable, "-m", "jupyter", command]


def _quiet_settings(settings: Path) -> None:
    """No news or update checks: nothing may pop up over the notebook. Every cell attached
    and laid out (windowing off): with the default "contentVisibility", off-screen cells get
    their real height only when scrolled to, so a control moves between measuring and
    clicking it, and element screenshots catch the wrong part of the page."""
    target = settings / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings"
    target.parent.mkdir(parents=True)
    target.write_text(json.dumps({"fetchNews": "false", "checkForUpdates": False}))
    tracker = settings / "@jupyterlab" / "notebook-extension" / "tracker.jupyterlab-settings"
    tracker.parent.mkdir(parents=True)
    tracker.write_text(json.dumps({"windowingMode": "none"}))


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """A JupyterLab server on a free localhost port with a token; yields its base URL."""
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is missing: install Debian's chromium (apt-get install -y "
                    "chromium) to run the browser tests")
    pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    home = tmp_path_factory.mktemp("jupyter")
    _quiet_settings(home / "settings")
    port, token = free_port(), secrets.token_hex(16)
    env = {**bounded_environment(), "JUPYTER_CONFIG_DIR": str(home / "config"),
           "JUPYTER_DATA_DIR": str(home / "data"), "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
           "IPYTHONDIR": str(home / "ipython"), "JUPYTER_PLATFORM_DIRS": "1",
           # as under `make lab`: the learners' JupyterLab, and this checkout's course package
           "JUPYTER_CONFIG_PATH": str(LEARNER_LAB), "PYTHONPATH": str(REPO)}
    command = jupyter_command("lab") + [
        "--no-browser", f"--ServerApp.port={port}", "--ServerApp.ip=127.0.0.1",
        "--ServerApp.port_retries=0", f"--ServerApp.token={token}",
        f"--ServerApp.root_dir={REPO}", "--LabApp.expose_app_in_browser=True",
        f"--LabApp.user_settings_dir={home / 'settings'}",
        f"--LabApp.workspaces_dir={home / 'workspaces'}"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        command.append("--allow-root")  # CI containers run as root
    log = (home / "server.log").open("w")
    server = subprocess.Popen(command, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT,
                              preexec_fn=bounded_process())
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2)
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.fail("JupyterLab did not start:\n" +
                                (home / "server.log").read_text()[-3000:])
                time.sleep(0.5)
        yield base, token, env
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()


@pytest.fixture(scope="module")
def browser(lab):
    """Headless Debian Chromium under Playwright."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True,
                                              args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


def open_notebook(page, base: str, token: str, relative: str) -> None:
    page.goto(f"{base}/lab/tree/{relative}?token={token}&reset", wait_until="domcontentloaded")
    page.wait_for_function(
        """() => window.jupyterapp && window.jupyterapp.shell.currentWidget
                 && window.jupyterapp.shell.currentWidget.sessionContext""", timeout=90_000)
    page.evaluate("""async () => {
        const app = window.jupyterapp;
        const panel = app.shell.currentWidget;
        await panel.context.ready;
        await panel.sessionContext.ready;
        app.shell.collapseLeft();
        app.shell.collapseRight();
    }""")
    page.wait_for_function(
        """() => { const k = window.jupyterapp.shell.currentWidget.sessionContext.session?.kernel;
                   return k && k.status === 'idle'; }""", timeout=120_000)


def run_all(page) -> None:
    """Run every cell; fail on the first error output, naming the cell."""
    page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
    deadline = time.monotonic() + RUN_TIMEOUT_S
    while time.monotonic() < deadline:
        state = page.evaluate("""() => {
            const panel = window.jupyterapp.shell.currentWidget;
            const cells = panel.content.widgets.filter(c => c.model.type === 'code');
            for (const [i, cell] of cells.entries()) {
                for (const output of cell.model.outputs.toJSON()) {
                    if (output.output_type === 'error') {
                        return {error: `code cell ${i + 1}: ${output.ename}: ${output.evalue}`};
                    }
                }
            }
            const kernel = panel.sessionContext.session.kernel;
            const done = cells.every(c => c.model.executionCount !== null
                                          && !c.promptNode.textContent.includes('*'));
            return {done: done && kernel.status === 'idle'};
        }""")
        if state.get("error"):
            pytest.fail(f"a cell raised while running all cells: {state['error']}")
        if state.get("done"):
            return
        time.sleep(0.5)
    pytest.fail(f"running all cells took more than {RUN_TIMEOUT_S} s")
