"""The sandboxed verdict: while learner code runs, the gradebook, the hidden tests and the
instructor's sources are out of its reach, the network is off, and it is not root.

A submission probes its sandbox from a cell it added: it tries to open (for reading and for
appending) the gradebook, the source and released notebooks, another learner's submission and
the repository's lesson sources, and to connect to the grader's loopback and to the internet.
"""

import io
import dataclasses
import json
import socket
import sys

import nbformat
import pytest
from nbgrader.api import Gradebook

from grader import sandbox
from grader import batch
from tests.released import released_root
from grader.gradebook import db_url
from grader.lessons import LESSONS, source_notebook
from grader.settings import Settings
from tools.submissions import solved, with_cell_before

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("sandbox")]

LESSON = "00_template"
PROBERS = ("prober", "prober-exec")  # kernels forked from the zygote; started the ordinary way
SETTINGS = Settings(cell_timeout=30, notebook_timeout=120, memory_limit_mb=1024,
            sandbox="required", output_limit_kb=1024, restart_limit=3)
CAPABILITY = sandbox.capability()
if not CAPABILITY.available:
    pytest.skip(f"no sandbox on this machine: {CAPABILITY.reason}", allow_module_level=True)

PROBE = """
import json, os, socket
attempts = {{}}
for name, path in {targets!r}.items():
    for mode in ("rb", "ab"):
        try:
            with open(path, mode):
                attempts[f"{{name}} ({{mode}})"] = "opened"
        except OSError as error:
            attempts[f"{{name}} ({{mode}})"] = type(error).__name__
for name, address in {addresses!r}.items():
    try:
        socket.create_connection(tuple(address), timeout=3).close()
        attempts[name] = "connected"
    except OSError as error:
        attempts[name] = type(error).__name__
status = dict(line.split(":\t", 1) for line in open("/proc/self/status").read().splitlines()
              if ":\t" in line)
print("PROBE " + json.dumps({{"attempts": attempts, "uid": os.getuid(), "cwd": os.getcwd(),
                             "root": sorted(os.listdir("/")), "caps": status["CapEff"].strip(),
                             "no_new_privs": status["NoNewPrivs"].strip()}}))
"""


@pytest.fixture(scope="module")
def probed(tmp_path_factory):
    """Grade a clean submission and a probing one with kernels forked from the zygote, then the
    probe again with kernels started the ordinary way; returns (root, {student: what the probe
    saw})."""
    root = tmp_path_factory.mktemp("sandbox")
    released_root(tmp_path_factory, root, [LESSON])
    released = nbformat.read(root / "release" / LESSON / f"{LESSON}.ipynb", as_version=4)
    good = solved(released, source_notebook(LESSON))
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    targets = {
        "gradebook": root / "gradebook.db",
        "source notebook": root / "source" / LESSON / f"{LESSON}.ipynb",
        "released notebook": root / "release" / LESSON / f"{LESSON}.ipynb",
        "another learner's submission": root / "submitted" / "clean" / LESSON / f"{LESSON}.ipynb",
        "lesson source with hidden tests": LESSONS / f"{LESSON}.py",
    }
    addresses = {"grader's loopback": listener.getsockname(), "internet": ("1.1.1.1", 53)}
    probe = PROBE.format(targets={k: str(v) for k, v in targets.items()}, addresses=addresses)
    gradebook_before = (root / "gradebook.db").stat().st_mtime_ns
    try:
        for students, zygote in ((("clean", "prober"), True), (("prober-exec",), False)):
            for student in students:
                folder = root / "submitted" / student / LESSON
                folder.mkdir(parents=True)
                notebook = good if student == "clean" else with_cell_before(good, "Square", probe)
                nbformat.write(notebook, folder / f"{LESSON}.ipynb")
            batch.autograde(root, [LESSON], workers=2, settings=dataclasses.replace(SETTINGS, zygote=zygote),
                            stream=io.StringIO())
    finally:
        listener.close()
    assert (root / "gradebook.db").stat().st_mtime_ns != gradebook_before  # it was graded
    return root, {student: _probe_output(root, student) for student in PROBERS}



def _probe_output(root, student: str) -> dict:
    graded = nbformat.read(root / "autograded" / student / LESSON / f"{LESSON}.ipynb",
                           as_version=4)
    texts = [output.get("text", "") for cell in graded.cells for output in cell.get("outputs", [])]
    line = next(line for text in texts for line in text.splitlines() if line.startswith("PROBE "))
    return json.loads(line[len("PROBE "):])


@pytest.mark.parametrize("target", ["gradebook", "source notebook", "released notebook",
                                    "another learner's submission",
                                    "lesson source with hidden tests"])
@pytest.mark.parametrize("mode", ["rb", "ab"])
@pytest.mark.parametrize("student", PROBERS)
def test_learner_code_cannot_open_grader_files(probed, student, target, mode):
    """Does opening the gradebook, the instructor's notebooks, another learner's work or the
    hidden tests' source fail, for reading and for writing (kernels forked from the zygote, and
    kernels started the ordinary way)?"""
    seen = probed[1][student]
    assert seen["attempts"][f"{target} ({mode})"] in ("FileNotFoundError", "PermissionError")


@pytest.mark.parametrize("address", ["grader's loopback", "internet"])
@pytest.mark.parametrize("student", PROBERS)
def test_the_network_is_off(probed, student, address):
    """Can learner code reach neither the grader's own loopback nor the internet?"""
    seen = probed[1][student]
    assert seen["attempts"][address] != "connected"


@pytest.mark.parametrize("student", PROBERS)
def test_the_kernel_sees_only_its_own_files(probed, student):
    """Does the kernel start in its own home on a private filesystem, without any capability
    or a way to regain one and, graded as root, as an unprivileged uid?"""
    seen = probed[1][student]
    assert seen["cwd"] == f"{sandbox.HOME}/{LESSON}"
    assert {"home", "proc", "tmp", "usr"} <= set(seen["root"])
    assert (seen["caps"], seen["no_new_privs"]) == ("0000000000000000", "1")
    if CAPABILITY.mode == "root":
        low, high = sandbox.UID_RANGE
        assert low <= seen["uid"] < high


def test_grading_is_unaffected(probed):
    """Do both the probing and the clean submission still get every point?"""
    root, _ = probed
    with Gradebook(db_url(root)) as gradebook:
        for student in ("clean", *PROBERS):
            notebook = gradebook.find_submission_notebook(LESSON, LESSON, student)
            assert {grade.name: grade.score for grade in notebook.grades} == {
                "Square": 1.0, "WeightedSum": 1.0, "Outer": 2.0}


def test_only_the_grading_packages_are_bound():
    """Of this repository, does the sandbox bind the grading packages and the environment
    only, never the lesson sources, the tests or an instructor folder?"""
    paths = sandbox.read_only_paths()
    repository = str(LESSONS.parent)
    inside = sorted(path for path in paths if path.startswith(repository + "/"))
    assert all(path.split("/")[-1] in ("autograder", "widgets", ".venv") for path in inside), inside
    assert sys.prefix in paths


def test_required_sandbox_is_refused_without_one(monkeypatch):
    """With AUTOGRADER_SANDBOX=required and no sandbox possible, does grading refuse to start
    rather than run learner code unsandboxed?"""
    from grader.execute import SealedExecute

    monkeypatch.setattr(sandbox, "capability", lambda: sandbox.Capability("none", "probe"))
    executor = SealedExecute(sandbox="required")
    with pytest.raises(RuntimeError, match="needs a sandbox"):
        executor._choose_sandbox()


def test_the_font_list_is_found_where_matplotlib_keeps_it(monkeypatch, tmp_path):
    """Does the grader find matplotlib's cache folder (whose font list each sandbox home gets)
    where matplotlib itself would, without importing it: by default, and under MPLCONFIGDIR?"""
    import matplotlib

    assert sandbox._matplotlib_cache_dir() == sandbox.Path(matplotlib.get_cachedir()).resolve()
    assert sandbox._matplotlib_cache(), "no font list to copy into a sandbox home"
    monkeypatch.setenv("MPLCONFIGDIR", str(tmp_path))
    assert sandbox._matplotlib_cache_dir() == tmp_path.resolve()
