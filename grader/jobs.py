"""A grading job is plain data (a submission's files, the lesson's reference cells, the
settings) and ``grade_job`` needs nothing else, so the same jobs run in local worker processes or
on a Dask cluster. A worker only executes: it reads the submission (``grader.intake``), runs it in
a sealed, sandboxed kernel (``grader.execute.SealedExecute``) and returns the executed notebook
with its faults."""

import tempfile
import time
import traceback
from pathlib import Path

import nbformat

from .execute import SealedExecute
from .faults import ADDED_LATER
from .intake import read_submission
from .notebook_format import quiet_notebook_warnings
from .settings import Settings


def grade_job(job: dict) -> dict:
    """Grade one submission (see the module docstring). Never raises: a failure of the grader
    itself comes back as a grader-error fault, retried on the next run."""
    quiet_notebook_warnings()
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
    settings = Settings.from_dict(job["settings"])
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
            timeout=settings.cell_timeout, notebook_timeout=settings.notebook_timeout,
            memory_limit_mb=settings.memory_limit_mb, sandbox=settings.sandbox,
            output_limit_kb=settings.output_limit_kb, restart_limit=settings.restart_limit,
            zygote=settings.zygote, run_every_cell=settings.run_every_cell)
        notebook, resources = executor.preprocess(
            intake.notebook, {"metadata": {"path": str(work)},
                              "released_demos": reference.get("demos", []),
                              "added_tests": {f.cell: f.message for f in intake.faults
                                              if f.kind == ADDED_LATER}})
    faults = [f.to_dict() for f in intake.faults] + resources["autograder"]["faults"]
    return {"notebook": nbformat.writes(notebook), "faults": faults,
            "verdicts": resources["autograder"]["verdicts"],
            "sandbox": resources["autograder"]["sandbox"],
            "timing": resources["autograder"]["timing"]}
