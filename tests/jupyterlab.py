"""A JupyterLab server and a headless Chromium for the browser tests: Debian's chromium driven
by Playwright (Playwright's own browser download is not used).

One server, one browser and one JupyterLab page per pytest process (the JupyterLab tests are one
xdist group: one process), shared by every browser test (the fixtures are session-scoped and registered in conftest.py): starting JupyterLab and
loading its scripts takes seconds, opening a notebook in the loaded page well under that. Each
test gets the page with nothing open and leaves it so: its notebooks closed, their kernels shut
down."""

import importlib.util
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

from tests.kernels import bounded_environment, bounded_process, write_kernel_spec
from tests.stranger import colab_python, course_site, layered_environment

REPO = Path(__file__).resolve().parents[1]
LEARNER_LAB = REPO / "tools" / "learner_lab"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--no-first-run", "--disable-sync"]
RUN_TIMEOUT_S = 300
VIEWPORT = {"width": 1280, "height": 1000}


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


STRANGER_KERNEL = "stranger"


def browser_missing() -> str | None:
    """Why the browser tests cannot run here, or None when they can."""
    if not CHROMIUM.exists():
        return (f"{CHROMIUM} is missing: install Debian's chromium (apt-get install -y "
                "chromium) to run the browser tests")
    if importlib.util.find_spec("playwright") is None:
        return "playwright is not installed"
    return None


def _stranger_kernel(home: Path) -> None:
    """A kernel named STRANGER_KERNEL beside the course environment's python3: a stranger's
    Python (tests/stranger.py), what Colab ships and the course's wheel, nothing of this
    checkout or of the course's environment, in a layer of its own (what lesson 13's first cell
    installs goes there). A notebook run on it runs where a learner installed only the course."""
    python = layered_environment(colab_python(), home / "stranger")
    write_kernel_spec(home / "data" / "kernels", STRANGER_KERNEL, python,
                      "Python 3 (a stranger's)", env={"PYTHONPATH": str(course_site(home))})


@pytest.fixture(scope="session")
def lab(tmp_path_factory):
    """A JupyterLab server on a free localhost port with a token, and a stranger's kernel
    besides its own; yields its base URL, token and environment."""
    missing = browser_missing()
    if missing:
        pytest.skip(missing)
    home = tmp_path_factory.mktemp("jupyter")
    _quiet_settings(home / "settings")
    _stranger_kernel(home)
    port, token = free_port(), secrets.token_hex(16)
    env = {**bounded_environment(), "JUPYTER_CONFIG_DIR": str(home / "config"),
           "JUPYTER_DATA_DIR": str(home / "data"), "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
           "IPYTHONDIR": str(home / "ipython"), "JUPYTER_PLATFORM_DIRS": "1",
           # as under `make lab`: the learners' JupyterLab, without nbgrader's instructor tools
           "JUPYTER_CONFIG_PATH": str(LEARNER_LAB)}
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


@pytest.fixture(scope="session")
def browser():
    """Headless Debian Chromium under Playwright (no JupyterLab needed: the insight page test
    opens a file)."""
    missing = browser_missing()
    if missing:
        pytest.skip(missing)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True,
                                              args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


def _load_jupyterlab(browser, base: str, token: str):
    """A new page with JupyterLab loaded (a fresh workspace) and its side panels collapsed."""
    page = browser.new_page(viewport=VIEWPORT)
    page.goto(f"{base}/lab?token={token}&reset", wait_until="domcontentloaded")
    page.wait_for_function("() => window.jupyterapp", timeout=90_000)
    page.evaluate("""async () => {
        const app = window.jupyterapp;
        await app.restored;
        app.shell.collapseLeft();
        app.shell.collapseRight();
        await app.serviceManager.sessions.shutdownAll();  // a page replaced left kernels
    }""")
    return page


def close_notebooks(page, wait: bool = True) -> None:
    """Close every open document without saving and shut its kernel down, waiting for that
    unless ``wait`` is false (a notebook reopened at once would get the same kernel back);
    fail where the page is gone or a dialog is left open over it."""
    page.evaluate("""async (wait) => {
        const app = window.jupyterapp;
        const shutdowns = [];
        for (const widget of [...app.shell.widgets('main')]) {
            const session = widget.sessionContext?.session;
            if (session) {
                shutdowns.push(session.shutdown().catch(error => error));
            }
            widget.dispose();
        }
        if (wait) {
            await Promise.all(shutdowns);
        }
    }""", wait)
    if page.locator(".jp-Dialog").count():
        raise RuntimeError("a dialog is open over JupyterLab")


@pytest.fixture(scope="session")
def _jupyterlab_pages(lab, browser):
    """The page the browser tests share (a list: a test that breaks it gets a new one)."""
    pages = []
    yield pages
    for page in pages:
        page.close()


@pytest.fixture
def lab_page(lab, browser, _jupyterlab_pages):
    """JupyterLab in a Chromium page, nothing open, the window 1280x1000; afterwards every
    notebook the test opened is closed and its kernel shut down. A page the test left unusable
    (crashed, a dialog open) is replaced."""
    base, token, _ = lab
    pages = _jupyterlab_pages
    if not pages:
        pages.append(_load_jupyterlab(browser, base, token))
    page = pages[-1]
    page.set_viewport_size(VIEWPORT)
    yield page
    try:
        close_notebooks(page, wait=False)  # each test opens a notebook of its own
    except Exception:  # noqa: BLE001 - whatever broke it, the next test gets a new page
        pages.pop().close()


def open_notebook(page, relative: str) -> None:
    """Open ``relative`` (a path under the repository) in the loaded JupyterLab, as a learner
    double-clicks it, alone in the main area (the Launcher, which JupyterLab opens when the
    area empties, closed), and wait for its kernel to be idle."""
    page.evaluate("""async (path) => {
        const app = window.jupyterapp;
        const panel = await app.commands.execute('docmanager:open',
                                                 {path, factory: 'Notebook'});
        await panel.context.ready;
        await panel.sessionContext.ready;
        app.shell.activateById(panel.id);
        for (const widget of [...app.shell.widgets('main')]) {
            if (widget !== panel) {
                widget.dispose();
            }
        }
    }""", relative)
    page.wait_for_function(
        """() => { const k = window.jupyterapp.shell.currentWidget.sessionContext.session?.kernel;
                   return k && k.status === 'idle'; }""", timeout=120_000)


def run_all(page, allow_errors: bool = False) -> None:
    """Run every cell and wait for the kernel to finish; fail on the first error output,
    naming the cell, unless ``allow_errors``."""
    page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
    deadline = time.monotonic() + RUN_TIMEOUT_S
    while time.monotonic() < deadline:
        state = page.evaluate("""() => {
            const panel = window.jupyterapp.shell.currentWidget;
            const cells = panel.content.widgets.filter(c => c.model.type === 'code');
            const waiting = [...cells.entries()].filter(([, c]) => c.model.executionCount === null
                || c.promptNode.textContent.includes('*')).map(([i]) => i + 1);
            const idle = panel.sessionContext.session.kernel.status === 'idle';
            for (const [i, cell] of cells.entries()) {
                const outputs = cell.model.outputs;  // each output's type, not its JSON: a
                for (let j = 0; j < outputs.length; j++) {  // lesson's figures are megabytes
                    if (outputs.get(j).type === 'error') {
                        const output = outputs.get(j).toJSON();
                        const error = `code cell ${i + 1}: ${output.ename}: ${output.evalue}`;
                        return {waiting, idle, error};
                    }
                }
            }
            return {waiting, idle};
        }""")
        if state.get("error") and not allow_errors:
            pytest.fail(f"a cell raised while running all cells: {state['error']}")
        if state["idle"] and not state["waiting"]:
            return
        time.sleep(0.2)
    pytest.fail(f"running all cells took more than {RUN_TIMEOUT_S} s: code cells "
                f"{state['waiting']} had not run")
