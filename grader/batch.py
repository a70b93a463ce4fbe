"""Autograde a whole class: a job per submission (``grader.jobs``), in parallel
(``grader.executors``), resumable (``grader.ledger``), with one gradebook writer.

This process alone writes the gradebook, through nbgrader's own Autograde converter fed with the
executed notebooks (``grader.gradebook``), so SQLite never sees two writers.
"""

import concurrent.futures
import contextlib
import os
import sys
import time
import traceback
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from . import earlier_points, manual, one_line, sandbox, shared_zygote, verdict_store
from .executors import dask_executor, local_executor
from .faults import (CELL_ERROR, NOTES, SEVERITY, Fault, added_note_line, copied_before,
                     from_dicts, own_status, reason_of)
from .feedback import status_cell
from .notebook_format import quiet_notebook_warnings
from .gradebook import GradebookWriter, lesson_references, placeholder, score_line
from .intake import read_files
from .jobs import grade_job
from .ledger import STATE, Ledger, digest, release_of
from .progress import Progress
from .settings import Settings



def submissions(root: Path, lessons: list[str], students: list[str] | None = None
                ) -> list[tuple[str, str]]:
    """(student, lesson) for every submitted folder of the given lessons (and students)."""
    submitted = root / "submitted"
    return sorted((student.name, lesson) for student in submitted.glob("*") if student.is_dir()
                  and (not students or student.name in students)
                  for lesson in lessons if (student / lesson).is_dir())


@dataclass
class Summary:
    graded: int = 0
    skipped: int = 0
    failed: int = 0
    seconds: float = 0.0
    statuses: dict = field(default_factory=dict)
    unchanged: dict = field(default_factory=dict)  # statuses the skipped kept from their grading
    flagged: list = field(default_factory=list)  # (student, lesson, notebook, status, reason)
    noted: list = field(default_factory=list)  # (student, lesson, notebook, kind, cell, late)
    cell_notes: list = field(default_factory=list)  # (student, lesson, notebook, message)
    outvoted: list = field(default_factory=list)  # lines: points by hand over changed automatic
    # the marks by hand ("grade", "comment") the regraded submissions had, and those kept
    had_marks: Counter = field(default_factory=Counter)
    kept_marks: Counter = field(default_factory=Counter)
    sandbox: str = ""
    timing: dict = field(default_factory=dict)  # seconds summed over notebooks, by phase
    released_again: list = field(default_factory=list)  # lessons whose release changed since

    def line(self) -> str:
        """What this run graded, and what the unchanged submissions it skipped still hold: after
        a resubmission the whole class's statuses, not only the one graded again."""
        counts, kept = _counted(self.statuses), _counted(self.unchanged)
        return (f"graded {self.graded}" + (f" ({counts})" if counts else "") +
                f", skipped {self.skipped} unchanged" + (f" ({kept}: as graded before; `make "
                                                          "grades` lists them)" if kept else "") +
                f", {self.failed} grader errors, in {self.seconds:.1f} s")

    def report(self, shown: int = 20, expected: tuple[str, ...] = ()) -> str:
        """A line per lesson and routine note (a test cell added and graded in so many
        notebooks, as ``make grades`` says it), then each notebook graded with a fault (but the
        ``expected`` statuses): who, which, its status and reason."""
        notes: dict[tuple[str, str], set] = {}
        for student, lesson, name, kind, cell, *late in self.noted:
            if kind != CELL_ERROR:  # each has a line of its own, below
                notes.setdefault((lesson, kind), set()).add((cell, student, name, any(late)))
        lines = []
        for (lesson, kind), where in sorted(notes.items()):
            cells = sorted({cell for cell, *_ in where})
            count = len({(student, name) for _, student, name, _ in where})
            late = len({(student, name) for _, student, name, copied in where if copied})
            lines.append(added_note_line(lesson, cells, count, late))
        flagged = [f"  {student} {lesson}/{name}: {status}: {one_line.reason(reason)}"
                   for student, lesson, name, status, reason in
                   sorted(self.flagged, key=lambda row: (SEVERITY[row[3]], row[:3]))
                   if status not in expected]
        if len(flagged) > shown:
            flagged[shown:] = [f"  ... and {len(flagged) - shown} more: `make grades` lists "
                               "them"]
        said = [f"  {student} {lesson}/{name}: {one_line.reason(message)}"
                for student, lesson, name, message in sorted(self.cell_notes)]
        if len(said) > shown:
            said[shown:] = [f"  ... and {len(said) - shown} more notes: `make grades` lists them"]
        return "\n".join(lines + self.outvoted + flagged + said)


def autograde(root: Path, lessons: list[str], *, workers: int | None = None,
              scheduler: str | None = None, force: bool = False, settings: Settings | None = None,
              students: list[str] | None = None, stream=None, each: bool = True,
              written=None) -> Summary:
    """Grade every new, changed or failed submission of ``lessons`` in course root ``root``
    (``each``: a line per submission as it finishes; ``written(student, lesson)``, if given, is
    called once a submission is in the gradebook, before its line gives its score)."""
    root = root.resolve()
    stream = stream or sys.stdout
    workers = workers or os.cpu_count() or 1
    settings = (settings or Settings.from_environment()).to_dict()
    ledger, summary, began = Ledger(root), Summary(), time.monotonic()
    references = {lesson: lesson_references(root, lesson) for lesson in lessons}
    releases = {lesson: release_of(references[lesson]) for lesson in lessons}
    jobs = []
    for student, lesson in submissions(root, lessons, students):
        files = read_files(root / "submitted" / student / lesson)
        files_digest = digest(files, references[lesson])
        graded_under = (ledger.get(student, lesson) or {}).get("release")
        if graded_under and graded_under != releases[lesson] and \
                lesson not in summary.released_again:
            summary.released_again.append(lesson)
        if force or ledger.needs_grading(student, lesson, files_digest):
            jobs.append({"student": student, "lesson": lesson, "digest": files_digest,
                         "files": files, "release": releases[lesson],
                         "references": references[lesson], "settings": settings})
        else:
            summary.skipped += 1
            kept = ledger.get(student, lesson)["status"]
            summary.unchanged[kept] = summary.unchanged.get(kept, 0) + 1
    if summary.released_again:
        stream.write(released_again_line(summary.released_again) + "\n")
    if not jobs:
        summary.seconds = time.monotonic() - began
        return summary
    writer = GradebookWriter(root)
    progress = Progress(len(jobs), stream, each=each)
    quiet_notebook_warnings()
    with _kernel_factory(settings):
        _grade(root, jobs, writer, ledger, summary, progress, scheduler, workers, stream,
               written)
    summary.seconds = time.monotonic() - began
    return summary


def _kernel_factory(settings: dict):
    """One zygote for every worker's sandboxed kernels, where kernels are forked and sandboxed."""
    if settings["zygote"] and settings["sandbox"] != "off" \
            and sandbox.capability().mode in shared_zygote.SANDBOXED:
        return shared_zygote.shared_zygote(sandbox.zygote_environment())
    return contextlib.nullcontext()


def _grade(root: Path, jobs: list[dict], writer, ledger: Ledger, summary: Summary, progress,
           scheduler: str | None, workers: int, stream, written=None) -> None:
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
            status = _record(root, writer, ledger, job, result, summary, written)
            progress.update(f"{job['student']} {job['lesson']}: {status}"
                            + took(result.get("seconds")))
    except KeyboardInterrupt:
        stream.write(f"\ninterrupted: {len(pending)} submissions left for the next run\n")
        for process in list((getattr(executor, "_processes", None) or {}).values()):
            process.terminate()  # its kernels die with it, or with the shared zygote below
        raise
    finally:
        progress.close()
        for future in pending:
            future.cancel()
        if scheduler:
            executor.close()
        else:
            executor.shutdown(wait=True, cancel_futures=True)


def _record(root: Path, writer: GradebookWriter, ledger: Ledger, job: dict, result: dict,
            summary: Summary, written=None) -> str:
    """Write one finished job to the gradebook and the ledger (then ``written``, if given);
    return its score and, but "ok" (an instructor read "ok 2/7" as passed), its status."""
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
            if faults:  # where the formgrader and the feedback page show it
                executed[name].cells.insert(0, status_cell(faults))
        began = time.monotonic()
        try:
            hand_given = manual.hand_marks(root, student, lesson)
            writer.write(student, lesson, executed)
            if written:
                written(student, lesson)
            scored = score_line(root, student, lesson)
            hand_now = manual.hand_marks(root, student, lesson)
            summary.outvoted += manual.outvoted(student, lesson, hand_given.points,
                                                hand_now.points)
            earlier_points.note_earlier(root, student, lesson, hand_given.points,
                                        hand_now.points)
            earlier_points.note_earlier_comments(root, student, lesson, hand_given, hand_now)
            # what a regrade kept of the marks given by hand (nbgrader keeps them all)
            summary.had_marks.update(kind for kind, *_ in hand_given.given)
            summary.kept_marks.update(kind for kind, *_ in hand_given.given & hand_now.given)
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
    # a routine note (a test cell added after the notebook was handed in) is in the reason and
    # counted per lesson, never the status: as `make grades` has it
    notebooks = {name: {"status": _own_status(faults), "reason": reason_of(faults),
                        "faults": [fault.to_dict() for fault in faults]}
                 for name, faults in per_notebook.items()}
    verdict_store.write(root, student, lesson, job["digest"], {} if error else {
        name: outcome.get("verdicts", {}) for name, outcome in result["notebooks"].items()})
    summary.flagged += [  # its routine notes have a line of their own in the report
        (student, lesson, name, entry["status"],
         reason_of([fault for fault in per_notebook[name] if fault.kind not in NOTES]))
        for name, entry in notebooks.items() if entry["status"] != "ok"]
    summary.noted += [(student, lesson, name, fault.kind, fault.cell, copied_before(fault))
                      for name, faults in per_notebook.items() for fault in faults
                      if fault.kind in NOTES]
    summary.cell_notes += [(student, lesson, name, fault.message)
                           for name, faults in per_notebook.items() for fault in faults
                           if fault.kind == CELL_ERROR]
    status = _own_status([fault for faults in per_notebook.values() for fault in faults])
    ledger.record(student, lesson, {"digest": job["digest"], "release": job.get("release"),
                                    "status": status,
                                    "notebooks": notebooks, "seconds": result.get("seconds", 0),
                                    "graded_at": time.strftime("%Y-%m-%d %H:%M:%S")})
    summary.statuses[status] = summary.statuses.get(status, 0) + 1
    notes = [fault.message for faults in per_notebook.values() for fault in faults
             if fault.kind == CELL_ERROR]  # the learner's own cell raised: said as it is graded
    return status if error else scored + ("" if status == "ok" else f", {status}") + "".join(
        f", {one_line.reason(note)}" for note in notes[:1]) + (
        f" (and {len(notes) - 1} more notes)" if len(notes) > 1 else "")


def released_again_line(lessons: list[str]) -> str:
    """The line saying why every submission of ``lessons`` is regraded: their release changed
    (a test cell edited or added) since their submissions were graded."""
    its, it = ("its", "it") if len(lessons) == 1 else ("their", "them")
    return (f"the release of {', '.join(lessons)} changed since {its} submissions were graded "
            f"(a test cell edited or added): every submission of {it} is regraded")


def took(seconds) -> str:
    """How long grading a submission took, as its progress line ends: '; 11 s' (a worker that
    died reports none: nothing)."""
    return f"; {seconds:.0f} s" if seconds else ""


def _counted(statuses: dict) -> str:
    return ", ".join(f"{n} {status}" for status, n in sorted(statuses.items()))


def _own_status(faults: list[Fault]) -> str:
    """A notebook's status: its most serious fault but the routine notes ("ok" if none)."""
    return own_status(faults)
