"""Autograde a whole class: a job per submission, in parallel, resumable, one gradebook writer.

A job is plain data (the submission's files, the lesson's reference cells, the grading settings)
and ``grade_job`` needs nothing else, so the same jobs run in local worker processes
(``workers=N``) or on a Dask cluster (``scheduler=ADDRESS``). Workers only execute: each job reads
the submission (``autograder.intake``), runs it in a sealed, sandboxed kernel
(``autograder.nbgrader_ext.SealedExecute``) and returns the executed notebook with its faults.
This process alone writes the gradebook, through nbgrader's own Autograde converter fed with the
executed notebook, so SQLite never sees two writers. A ledger (``.autograder/ledger.json`` in the
course root) remembers what each submission's files looked like when graded and how it went:
a rerun grades only new, changed or failed (grader-error) submissions.
"""

import concurrent.futures
import copy
import ctypes
import hashlib
import json
import multiprocessing
import os
import shutil
import signal
import sys
import tempfile
import time
import traceback
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from autograder import faults as fault_kinds
from autograder.faults import Fault, from_dicts, reason_of, status_of

# nbgrader 0.9's gradebook code trips SQLAlchemy 2.x autoflush notices on every write; they
# are harmless and would bury the progress lines.
warnings.filterwarnings("ignore", message=".*not in session, add operation along",
                        module=r"nbgrader\.api")

STATE = ".autograder"
STAGING = f"{STATE}/staging"
LEDGER = f"{STATE}/ledger.json"
FORMAT = 1  # bump when grading changes enough that old ledger entries must be regraded


# -- jobs: plain data in, plain data out -----------------------------------------------------

def settings_from_environment() -> dict:
    """Grading settings, read here once and sent with every job (workers may be elsewhere)."""
    from autograder import sandbox
    from autograder.course_config import CELL_TIMEOUT_VARIABLE
    from autograder.nbgrader_ext import NOTEBOOK_TIMEOUT_VARIABLE

    cell = int(os.environ.get(CELL_TIMEOUT_VARIABLE, "120"))
    return {"cell_timeout": cell,
            "notebook_timeout": int(os.environ.get(NOTEBOOK_TIMEOUT_VARIABLE, 0)) or 4 * cell,
            "memory_limit_mb": sandbox.memory_limit_mb(), "sandbox": sandbox.sandbox_mode(),
            "output_limit_kb": 1024, "restart_limit": 3,
            "zygote": os.environ.get("AUTOGRADER_ZYGOTE", "1").strip() != "0"}


def grade_job(job: dict) -> dict:
    """Grade one submission (see the module docstring). Never raises: a failure of the grader
    itself comes back as a grader-error fault, retried on the next run."""
    began = time.monotonic()
    result = {"student": job["student"], "lesson": job["lesson"], "digest": job["digest"],
              "notebooks": {}}
    try:
        for name, reference in job["references"].items():
            result["notebooks"][name] = _grade_notebook(job, name, reference)
    except BaseException as error:  # noqa: BLE001 (a worker must always answer)
        detail = "".join(traceback.format_exception_only(type(error), error)).strip()
        result["error"] = f"{detail}\n{traceback.format_exc()[-3000:]}"
        if not isinstance(error, Exception):
            raise
    result["seconds"] = time.monotonic() - began
    return result


def _grade_notebook(job: dict, name: str, reference: dict) -> dict:
    from autograder.intake import read_submission
    from autograder.nbgrader_ext import SealedExecute

    settings = job["settings"]
    intake = read_submission(job["files"], f"{name}.ipynb", reference)
    if intake.notebook is None:
        return {"notebook": None, "faults": [f.to_dict() for f in intake.faults]}
    with tempfile.TemporaryDirectory(prefix="autograder-job-") as scratch:
        work = Path(scratch) / job["lesson"]
        for relative, data in intake.files.items():
            (work / relative).parent.mkdir(parents=True, exist_ok=True)
            (work / relative).write_bytes(data)
        work.mkdir(exist_ok=True)
        executor = SealedExecute(
            timeout=settings["cell_timeout"], notebook_timeout=settings["notebook_timeout"],
            memory_limit_mb=settings["memory_limit_mb"], sandbox=settings["sandbox"],
            output_limit_kb=settings["output_limit_kb"], restart_limit=settings["restart_limit"],
            zygote=settings.get("zygote", True))
        notebook, resources = executor.preprocess(intake.notebook,
                                                  {"metadata": {"path": str(work)}})
    faults = [f.to_dict() for f in intake.faults] + resources["autograder"]["faults"]
    return {"notebook": nbformat.writes(notebook), "faults": faults,
            "sandbox": resources["autograder"]["sandbox"],
            "timing": resources["autograder"]["timing"]}


# -- the course root -------------------------------------------------------------------------

def db_url(root: Path) -> str:
    return f"sqlite:///{root / 'gradebook.db'}"


def submissions(root: Path, lessons: list[str]) -> list[tuple[str, str]]:
    """(student, lesson) for every submitted folder of the given lessons."""
    submitted = root / "submitted"
    return sorted((student.name, lesson) for student in submitted.glob("*") if student.is_dir()
                  for lesson in lessons if (student / lesson).is_dir())


def read_files(folder: Path) -> dict[str, bytes]:
    files = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file() and not path.is_symlink():
            files[path.relative_to(folder).as_posix()] = path.read_bytes()
    return files


def _digest(files: dict[str, bytes], references: dict) -> str:
    digest = hashlib.sha256(f"format {FORMAT}".encode())
    digest.update(json.dumps(references, sort_keys=True).encode())
    for name, data in sorted(files.items()):
        digest.update(name.encode() + b"\0" + hashlib.sha256(data).digest())
    return digest.hexdigest()


def lesson_references(root: Path, lesson: str) -> dict[str, dict]:
    """Every notebook of a released lesson, with the reference cells ``restore_cells`` needs."""
    from nbgrader.api import Gradebook

    from autograder.intake import reference_cells

    with Gradebook(db_url(root)) as gradebook:
        names = [notebook.name for notebook in gradebook.find_assignment(lesson).notebooks]
    references = {}
    for name in sorted(names):
        released = nbformat.read(root / "release" / lesson / f"{name}.ipynb", as_version=4)
        references[name] = reference_cells(db_url(root), lesson, name, released)
    return references


class Ledger:
    """What was graded, from which files, and how it went: one JSON file, written by this
    process only (atomically, after every submission)."""

    def __init__(self, root: Path):
        self.path = root / LEDGER
        try:
            self.entries = json.loads(self.path.read_text())
        except (OSError, ValueError):
            self.entries = {}

    @staticmethod
    def key(student: str, lesson: str) -> str:
        return f"{lesson}/{student}"

    def get(self, student: str, lesson: str) -> dict | None:
        return self.entries.get(self.key(student, lesson))

    def needs_grading(self, student: str, lesson: str, digest: str) -> bool:
        entry = self.get(student, lesson)
        return entry is None or entry["digest"] != digest or entry["status"] in fault_kinds.RETRIED

    def record(self, student: str, lesson: str, entry: dict) -> None:
        self.entries[self.key(student, lesson)] = entry
        self.path.parent.mkdir(parents=True, exist_ok=True)
        scratch = self.path.with_suffix(".tmp")
        scratch.write_text(json.dumps(self.entries, indent=1, sort_keys=True))
        os.replace(scratch, self.path)


# -- the single writer -----------------------------------------------------------------------

def _course_config(root: Path):
    from traitlets.config import Config
    from traitlets.config.loader import PyFileConfigLoader

    from autograder.course_config import configure

    config = Config()
    configure(config)
    if (root / "nbgrader_config.py").exists():
        config.merge(PyFileConfigLoader("nbgrader_config.py", path=str(root)).load_config())
    return config


class GradebookWriter:
    """Records executed notebooks in the gradebook with nbgrader's own Autograde converter (its
    timestamps, late penalties, missing-notebook zeros, autograded/ folder), minus execution."""

    def __init__(self, root: Path):
        import warnings

        from nbgrader.preprocessors import CheckCellMetadata, Execute
        from sqlalchemy.exc import SAWarning

        warnings.filterwarnings("ignore", category=SAWarning)  # nbgrader's own, harmless

        self.root = root
        self.config = _course_config(root)
        # The worker already sanitized (autograder.intake.restore_cells validates the metadata)
        # and executed the notebook: what is left is recording it.
        kept = [p for p in self.config.Autograde.autograde_preprocessors
                if not (isinstance(p, type) and issubclass(p, (Execute, CheckCellMetadata)))]
        self.config.Autograde.sanitize_preprocessors = []
        self.config.Autograde.autograde_preprocessors = kept
        self.config.CourseDirectory.root = str(root)
        self.config.CourseDirectory.submitted_directory = STAGING
        self.config.Autograde.create_student = True
        self.config.Application.log_level = "ERROR"

    def write(self, student: str, lesson: str, notebooks: dict[str, nbformat.NotebookNode]):
        """Grade ``notebooks`` (name -> executed notebook) as ``student``'s ``lesson``."""
        from nbgrader.converters import Autograde
        from nbgrader.coursedir import CourseDirectory

        stage = self.root / STAGING / student / lesson
        shutil.rmtree(stage, ignore_errors=True)
        stage.mkdir(parents=True)
        original = self.root / "submitted" / student / lesson
        for path in original.rglob("*"):  # the learner's other files, as nbgrader would copy
            relative = path.relative_to(original)
            if path.is_file() and not path.is_symlink() and path.suffix != ".ipynb":
                (stage / relative).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(path, stage / relative)
        for name, notebook in notebooks.items():
            nbformat.write(notebook, stage / f"{name}.ipynb")
        config = copy.deepcopy(self.config)
        config.CourseDirectory.student_id = student
        config.CourseDirectory.assignment_id = lesson
        coursedir = CourseDirectory(config=config)
        converter = Autograde(coursedir=coursedir, config=config)
        converter.force = True
        try:
            converter.start()
        finally:
            shutil.rmtree(stage, ignore_errors=True)


def placeholder(root: Path, lesson: str, name: str, reference: dict, reason: str):
    """The released notebook, every test cell failed with ``reason``: what the gradebook and the
    feedback get for a notebook that could not be read."""
    from autograder.intake import restore_cells
    from autograder.nbgrader_ext import _error, is_test_cell

    released = nbformat.read(root / "release" / lesson / f"{name}.ipynb", as_version=4)
    notebook, _ = restore_cells(released, reference)
    for cell in notebook.cells:
        if is_test_cell(cell):
            cell.outputs = [_error("SubmissionError", f"not graded: {reason}")]
    return notebook


# -- the batch -------------------------------------------------------------------------------

@dataclass
class Summary:
    graded: int = 0
    skipped: int = 0
    failed: int = 0
    seconds: float = 0.0
    statuses: dict = field(default_factory=dict)
    sandbox: str = ""
    timing: dict = field(default_factory=dict)  # seconds summed over notebooks, by phase

    def line(self) -> str:
        counts = ", ".join(f"{n} {s}" for s, n in sorted(self.statuses.items()))
        return (f"graded {self.graded}, skipped {self.skipped} unchanged, {self.failed} grader "
                f"errors, in {self.seconds:.1f} s" + (f" ({counts})" if counts else ""))


def _exit_cleanly(signum, frame) -> None:
    import logging

    logging.getLogger("asyncio").setLevel(logging.CRITICAL)  # the unfinished cell's tasks
    raise SystemExit(128 + signum)  # unwinds: kernels stopped, temporary folders removed


def _die_with_parent() -> None:
    """Pool initializer: a worker (and so its kernels) dies with the batch, cleaning up."""
    signal.signal(signal.SIGTERM, _exit_cleanly)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    ctypes.CDLL(None).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def local_executor(workers: int):
    context = multiprocessing.get_context("fork" if sys.platform.startswith("linux") else "spawn")
    return concurrent.futures.ProcessPoolExecutor(max_workers=workers, mp_context=context,
                                                  initializer=_die_with_parent)


def dask_executor(scheduler: str, workers: int):
    """A concurrent.futures executor on a Dask cluster: ``local`` starts a LocalCluster of
    ``workers`` single-threaded processes; anything else is a scheduler address."""
    from distributed import Client, LocalCluster

    if scheduler == "local":
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                               dashboard_address=None)
        client = Client(cluster)
    else:
        cluster, client = None, Client(scheduler)
    executor = client.get_executor(pure=False)

    def close():
        client.close()
        if cluster is not None:
            cluster.close()

    executor.close = close
    return executor


class Progress:
    """One line per finished submission (or a redrawn bar on a terminal), with an ETA."""

    def __init__(self, total: int, stream=None):
        self.total, self.done, self.began = total, 0, time.monotonic()
        self.stream = stream or sys.stdout
        self.tty = self.stream.isatty()

    def update(self, label: str) -> None:
        self.done += 1
        elapsed = time.monotonic() - self.began
        eta = elapsed / self.done * (self.total - self.done)
        filled = int(20 * self.done / self.total)
        bar = "█" * filled + "░" * (20 - filled)
        line = (f"[{self.done:>{len(str(self.total))}}/{self.total}] {bar} "
                f"{elapsed / self.done:5.1f} s/notebook, ETA {_clock(eta)}  {label}")
        if self.tty:
            self.stream.write("\r\x1b[2K" + line + ("\n" if self.done == self.total else ""))
        else:
            self.stream.write(line + "\n")
        self.stream.flush()


def _clock(seconds: float) -> str:
    minutes, seconds = divmod(int(seconds + 0.5), 60)
    return f"{minutes}m{seconds:02d}s" if minutes else f"{seconds}s"


def autograde(root: Path, lessons: list[str], *, workers: int | None = None,
              scheduler: str | None = None, force: bool = False, settings: dict | None = None,
              stream=None) -> Summary:
    """Grade every new, changed or failed submission of ``lessons`` in course root ``root``."""
    root = root.resolve()
    stream = stream or sys.stdout
    workers = workers or os.cpu_count() or 1
    settings = settings or settings_from_environment()
    ledger, summary, began = Ledger(root), Summary(), time.monotonic()
    references = {lesson: lesson_references(root, lesson) for lesson in lessons}
    jobs = []
    for student, lesson in submissions(root, lessons):
        files = read_files(root / "submitted" / student / lesson)
        digest = _digest(files, references[lesson])
        if force or ledger.needs_grading(student, lesson, digest):
            jobs.append({"student": student, "lesson": lesson, "digest": digest, "files": files,
                         "references": references[lesson], "settings": settings})
        else:
            summary.skipped += 1
    if not jobs:
        summary.seconds = time.monotonic() - began
        return summary
    writer = GradebookWriter(root)
    progress = Progress(len(jobs), stream)
    executor = dask_executor(scheduler, workers) if scheduler else local_executor(workers)
    pending = {}
    try:
        pending = {executor.submit(grade_job, job): job for job in jobs}
        for future in concurrent.futures.as_completed(pending):
            job = pending.pop(future)
            try:
                result = future.result()
            except Exception as error:  # the worker itself died (e.g. killed): a grader error
                result = {"student": job["student"], "lesson": job["lesson"],
                          "digest": job["digest"], "notebooks": {}, "seconds": 0.0,
                          "error": f"the worker running this job failed: {error!r}"}
            status = _record(root, writer, ledger, job, result, summary)
            progress.update(f"{job['student']} {job['lesson']}: {status}")
    except KeyboardInterrupt:
        stream.write(f"\ninterrupted: {len(pending)} submissions left for the next run\n")
        for process in list((getattr(executor, "_processes", None) or {}).values()):
            process.terminate()  # its kernels die with it (PR_SET_PDEATHSIG)
        raise
    finally:
        for future in pending:
            future.cancel()
        if scheduler:
            executor.close()
        else:
            executor.shutdown(wait=True, cancel_futures=True)
    summary.seconds = time.monotonic() - began
    return summary


def _record(root: Path, writer: GradebookWriter, ledger: Ledger, job: dict, result: dict,
            summary: Summary) -> str:
    """Write one finished job to the gradebook and the ledger; return its status."""
    student, lesson = job["student"], job["lesson"]
    per_notebook, executed = {}, {}
    error = result.get("error")
    if not error:
        for name, outcome in result["notebooks"].items():
            faults = from_dicts(outcome["faults"])
            per_notebook[name] = faults
            summary.sandbox = outcome.get("sandbox", summary.sandbox)
            for phase, seconds in outcome.get("timing", {}).items():
                summary.timing[phase] = summary.timing.get(phase, 0.0) + seconds
            if outcome["notebook"] is not None:
                executed[name] = nbformat.reads(outcome["notebook"], as_version=4)
            else:
                executed[name] = placeholder(root, lesson, name, job["references"][name],
                                             reason_of(faults))
        began = time.monotonic()
        try:
            writer.write(student, lesson, executed)
            summary.timing["gradebook write"] = summary.timing.get("gradebook write", 0.0) + \
                time.monotonic() - began
        except Exception as failure:  # nbgrader refused: our problem, not the learner's
            error = f"writing the gradebook failed: {failure!r}\n{traceback.format_exc()[-3000:]}"
    if error:
        per_notebook = {name: [Fault("grader-error", error.splitlines()[0])]
                        for name in job["references"]}
        (root / STATE).mkdir(exist_ok=True)
        with open(root / STATE / "errors.log", "a") as log:
            log.write(f"--- {lesson}/{student} {time.ctime()}\n{error}\n")
        summary.failed += 1
    else:
        summary.graded += 1
    notebooks = {name: {"status": status_of(faults), "reason": reason_of(faults),
                        "faults": [fault.to_dict() for fault in faults]}
                 for name, faults in per_notebook.items()}
    status = status_of([fault for faults in per_notebook.values() for fault in faults])
    ledger.record(student, lesson, {"digest": job["digest"], "status": status,
                                    "notebooks": notebooks, "seconds": result.get("seconds", 0),
                                    "graded_at": time.strftime("%Y-%m-%d %H:%M:%S")})
    summary.statuses[status] = summary.statuses.get(status, 0) + 1
    return status


# -- the grades CSV --------------------------------------------------------------------------

CSV_COLUMNS = ["assignment", "notebook", "duedate", "timestamp", "student_id", "last_name",
               "first_name", "email", "raw_score", "late_submission_penalty", "score",
               "max_score", "status", "reason"]


def export_grades(root: Path, output: Path) -> int:
    """The grades CSV: nbgrader's export columns, one row per student, lesson and notebook,
    with each notebook's status and reason from the ledger. Returns the number of rows."""
    import csv

    from nbgrader.api import Gradebook, MissingEntry

    ledger = Ledger(root)
    rows = []
    with Gradebook(db_url(root)) as gradebook:
        for assignment in sorted(gradebook.assignments, key=lambda a: a.name):
            for student in sorted(gradebook.students, key=lambda s: s.id):
                entry = ledger.get(student.id, assignment.name) or {}
                submitted = (root / "submitted" / student.id / assignment.name).is_dir()
                try:
                    submission = gradebook.find_submission(assignment.name, student.id)
                except MissingEntry:
                    submission = None
                for notebook in sorted(assignment.notebooks, key=lambda n: n.name):
                    row = {"assignment": assignment.name, "notebook": notebook.name,
                           "duedate": assignment.duedate or "", "student_id": student.id,
                           "last_name": student.last_name or "",
                           "first_name": student.first_name or "",
                           "email": student.email or "", "max_score": notebook.max_score}
                    noted = entry.get("notebooks", {}).get(notebook.name)
                    if submission is None:
                        status = (noted or {}).get("status") or (
                            "not-graded" if submitted else "not-submitted")
                        row.update(timestamp="", raw_score=0.0, late_submission_penalty=0.0,
                                   score=0.0, status=status, reason=(noted or {}).get(
                                       "reason", "submitted but not graded yet" if submitted
                                       else "nothing submitted"))
                    else:
                        graded = gradebook.find_submission_notebook(
                            notebook.name, assignment.name, student.id)
                        penalty = graded.late_submission_penalty or 0.0
                        row.update(timestamp=submission.timestamp or "", raw_score=graded.score,
                                   late_submission_penalty=penalty,
                                   score=max(0.0, graded.score - penalty),
                                   status=(noted or {}).get("status", "ok"),
                                   reason=(noted or {}).get(
                                       "reason", "" if noted else "graded outside `make "
                                       "autograde`: no fault record"))
                    rows.append(row)
    output.parent.mkdir(parents=True, exist_ok=True)
    with open(output, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=CSV_COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    return len(rows)
