"""``SealedExecute`` replaces nbgrader's Execute: it runs a submission in a sealed, sandboxed
kernel that survives faults, and grades signed verdicts only.

Each cell runs under a time limit; a cell that times out is interrupted; one that ignores the
interrupt, kills the kernel or exhausts its memory cap costs only itself: the kernel is
restarted, the cells that had run are replayed (test cells excepted), and grading goes on with
the next cell. A cell's output is capped. Whatever happened is recorded as
:class:`~grader.faults.Fault` s in ``resources["autograder"]``. A demo cell, as the lesson
released it, that sets nothing a graded cell uses is not run (``grader.needed_cells``).
"""

import copy
import functools
import secrets
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbgrader.preprocessors import Execute
from traitlets import Bool, Integer, Unicode, default

from autograder.verdict import VERDICT_MIME

from . import sandbox
from .answers import answer_error_faults, cell_error_notes
from .faults import ADDED_LATER, Fault
from .intake import files_beside, read_files
from .kernel_session import KernelSession
from .needed_cells import NOT_NEEDED_NOTE, demo_sources, unneeded_cells
from .notebook_format import (SKIPPED_NOTE, cell_label, is_test_cell, output_size,
                              skipped_when_grading, stream_output)
from .outcomes import (Outcome, classify, died_outputs, gave_up_faults, out_of_memory_outputs,
                       out_of_time_faults, outcome_fault)
from .settings import IOPUB_TIMEOUT, Settings
from .suspicion import suspicious_code_faults
from .verdicts import apply_verdicts

# What the kernel runs for a test cell: the cell's code, through the seal's own test runner.
TEST_CELL_CALL = "__import__('autograder').run_test_cell({grade_id!r}, {points!r}, {source!r})"


@functools.lru_cache(maxsize=64)
def _demos_of(path: str, mtime_ns: int, size: int) -> tuple[str, ...]:
    """The demo cells of the released notebook at ``path`` as it is now (``mtime_ns``, ``size``):
    read once per grading process, not once per notebook."""
    return tuple(demo_sources(nbformat.read(path, as_version=4)))


def sealed_test(cell):
    """A copy of test cell ``cell`` that runs its code through ``run_test_cell``."""
    metadata = cell.metadata.nbgrader
    runner = copy.deepcopy(cell)
    runner.source = TEST_CELL_CALL.format(grade_id=metadata["grade_id"], source=cell.source,
                                          points=float(metadata.get("points", 0)))
    return runner


@dataclass
class Run:
    """The state of grading one notebook."""

    deadline: float
    faults: list[Fault] = field(default_factory=list)
    completed: list[int] = field(default_factory=list)  # cells that ran, for a replay
    restarts: int = 0
    timing: dict = field(default_factory=lambda: {"kernel start": 0.0, "cells": 0.0,
                                                  "kernel stop": 0.0})
    output_bytes: int = 0  # of the cell running now
    output_dropped: bool = False
    last_reply: dict | None = None

    def remaining(self) -> float:
        return self.deadline - time.monotonic()


class SealedExecute(Execute):
    """nbgrader's Execute, in a sealed (``autograder.seal``) and sandboxed (``grader.sandbox``)
    kernel that is restarted after a fault (see the module docstring). Every option defaults to
    ``grader.settings.Settings.from_environment()``."""

    sandbox = Unicode(help="auto, required or off").tag(config=True)
    memory_limit_mb = Integer(help="memory cap per kernel in MiB, 0 for none").tag(config=True)
    notebook_timeout = Integer(help="seconds for one notebook, restarts and replays included "
                                    "(0: four cell timeouts)").tag(config=True)
    restart_limit = Integer(help="kernel restarts allowed per notebook").tag(config=True)
    zygote = Bool(help="fork kernels from a process that has imported torch already"
                  ).tag(config=True)
    output_limit_kb = Integer(help="output kept per cell, in KiB").tag(config=True)
    run_every_cell = Bool(help="run demo cells grading does not need, too").tag(config=True)
    iopub_timeout = Integer(IOPUB_TIMEOUT).tag(config=True)
    shutdown_kernel = Unicode("immediate")

    def _from_settings(name):  # noqa: N805 (a helper that runs while the class is defined)
        """The trait ``name`` defaults to its value in ``Settings.from_environment()``."""
        return default(name)(lambda self: getattr(Settings.from_environment(), name))

    _sandbox_default = _from_settings("sandbox")
    _memory_default = _from_settings("memory_limit_mb")
    _notebook_timeout_default = _from_settings("notebook_timeout")
    _restart_limit_default = _from_settings("restart_limit")
    _zygote_default = _from_settings("zygote")
    _output_limit_default = _from_settings("output_limit_kb")
    _run_every_cell_default = _from_settings("run_every_cell")
    del _from_settings

    @property
    def settings(self) -> Settings:
        return Settings(cell_timeout=self.timeout or Settings.cell_timeout,
                        notebook_timeout=self.notebook_timeout, memory_limit_mb=self.memory_limit_mb,
                        sandbox=self.sandbox, zygote=self.zygote,
                        output_limit_kb=self.output_limit_kb, restart_limit=self.restart_limit,
                        run_every_cell=self.run_every_cell)

    def preprocess(self, nb, resources=None, km=None):
        NotebookClient.__init__(self, nb, None)
        self.reset_execution_trackers()
        self._check_assign_resources(resources or {})
        settings = self.settings
        self.timeout_func = self._cell_timeout
        demos = self._released_demos()
        self.run = Run(deadline=time.monotonic() + settings.notebook_seconds,
                       faults=suspicious_code_faults(nb, demos or []))
        capability = self._choose_sandbox()
        key = secrets.token_bytes(32)
        scratch = Path(tempfile.mkdtemp(prefix="autograder-run-"))
        try:
            work = self._work_copy(scratch)
            self.kernels = KernelSession(self, work, key, capability, settings)
            try:
                self._run_cells(None if self.run_every_cell else demos)
            finally:
                began = time.monotonic()
                self.kernels.close()
                self.run.timing["kernel stop"] += time.monotonic() - began
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        # the test cells intake put in for a notebook handed in before them, with intake's
        # notes (which say whether it put their answer's stub in too): not faults of this run,
        # the job reports intake's own
        given = self.resources.get("added_tests", {})
        added = [Fault(ADDED_LATER, message, cell) for cell, message in
                 (given.items() if isinstance(given, dict) else dict.fromkeys(given, "").items())]
        verdicts = apply_verdicts(self.nb, key, self.run.faults + added)
        self.run.faults += answer_error_faults(self.nb, self.run.faults)
        self.run.faults += cell_error_notes(self.nb, self.run.faults, demos)
        info = self.resources.setdefault("autograder", {})
        info["verdicts"] = verdicts
        info["faults"] = [fault.to_dict() for fault in dict.fromkeys(self.run.faults)]
        why = "sandbox setting is off" if self.sandbox == "off" else sandbox.capability().reason
        info["sandbox"] = capability.reason if capability else f"NONE ({why})"
        info["timing"] = self.run.timing
        return self.nb, self.resources

    def _choose_sandbox(self):
        if self.sandbox == "off":
            return None
        found = sandbox.capability()
        if found.available:
            return found
        if self.sandbox == "required":
            raise RuntimeError("grading needs a sandbox (sandbox setting: required), but this "
                               f"machine cannot make one: {found.reason}")
        self.log.warning("grading WITHOUT a sandbox: %s", found.reason)
        return None

    def _work_copy(self, scratch: Path) -> Path:
        """The submission's folder as the kernel will see it (``intake.files_beside``)."""
        source = Path(self.resources.get("metadata", {}).get("path") or ".")
        work = scratch / (source.resolve().name or "work")
        work.mkdir()
        files, faults = files_beside(read_files(source))
        self.run.faults += faults
        for relative, data in files.items():
            (work / relative).parent.mkdir(parents=True, exist_ok=True)
            (work / relative).write_bytes(data)
        return work

    def _cell_timeout(self, cell) -> int:
        return max(1, int(min(self.timeout or Settings.cell_timeout, self.run.remaining())))

    # -- cells --------------------------------------------------------------------------------

    def _released_demos(self) -> list[str] | None:
        """The released notebook's demo cells: given with the job (``released_demos``), or, under
        ``nbgrader autograde``, read from the course root's release folder; None if unknown."""
        if "released_demos" in self.resources:
            return self.resources["released_demos"]
        found = self.resources.get("nbgrader", {})
        url = str(found.get("db_url", ""))
        if not url.startswith("sqlite:///") or not {"assignment", "notebook"} <= found.keys():
            return None
        released = (Path(url.removeprefix("sqlite:///")).parent / "release" /
                    found["assignment"] / f"{found['notebook']}.ipynb")
        if not released.is_file():
            return None
        stat = released.stat()
        return list(_demos_of(str(released), stat.st_mtime_ns, stat.st_size))

    def _run_cells(self, demos: list[str] | None) -> None:
        """Each cell in order, but those no test needs once the released ``demos`` are known."""
        unneeded = unneeded_cells(self.nb, demos) if demos else set()
        self._start_kernel()
        for index, cell in enumerate(self.nb.cells):
            if cell.cell_type != "code" or not cell.source.strip():
                continue
            if skipped_when_grading(cell) or index in unneeded:
                cell.outputs = [stream_output(SKIPPED_NOTE if skipped_when_grading(cell)
                                              else NOT_NEEDED_NOTE)]
                continue
            if self.run.remaining() < 1:
                self._out_of_time(index)
                return
            outcome = self._run_cell(index, cell)
            if outcome is Outcome.OK:
                self.run.completed.append(index)
                continue
            self._record(outcome, index, cell)
            if outcome is Outcome.MEMORY:
                cell.outputs = out_of_memory_outputs(cell.outputs, self.run.faults[-1])
            if outcome is Outcome.DIED:  # said under the cell, as a cell's own error is
                cell.outputs = died_outputs(cell.outputs, self.kernels.death())
            if outcome.lost_kernel and not self._recover(index):
                return
        strays = self.kernels.strays()
        if strays:
            names = ", ".join(sorted({command[:60] for _, command in strays}))
            self.run.faults.append(Fault("stray-process", f"{len(strays)} process(es) left "
                                         f"running when grading ended were killed: {names}"))

    def _run_cell(self, index: int, cell) -> Outcome:
        run = self.run
        run.output_bytes, run.output_dropped, run.last_reply = 0, False, None
        began = time.monotonic()
        ran = sealed_test(cell) if is_test_cell(cell) else cell
        try:
            self.execute_cell(ran, index, store_history=ran is cell)
        except CellTimeoutError:
            return Outcome.HUNG
        except DeadKernelError:
            return Outcome.DIED
        finally:
            run.timing["cells"] += time.monotonic() - began
            if ran is not cell:  # nbclient stored the cell it ran: keep the test's own source
                cell.outputs, cell.execution_count = ran.get("outputs", []), ran.get(
                    "execution_count")
                self.nb.cells[index] = cell
        if run.output_dropped:
            label = cell_label(self.nb.cells, index)
            run.faults.append(Fault("output-limit", f"{label} printed more than "
                                    f"{self.output_limit_kb} KiB; the rest was dropped", label))
        reply = run.last_reply or {}
        interrupted = "header" not in reply and reply.get("content", {}).get("ename") == \
            self.error_on_timeout.get("ename")
        return classify(cell.get("outputs", []), interrupted)

    def _record(self, outcome: Outcome, index: int, cell) -> None:
        settings = self.settings
        fault = outcome_fault(outcome, cell_label(self.nb.cells, index),
                              cell_timeout=settings.cell_timeout,
                              notebook_seconds=settings.notebook_seconds,
                              memory_limit_mb=settings.memory_limit_mb,
                              out_of_time=self.run.remaining() < 2,
                              death=self.kernels.death() if outcome is Outcome.DIED else "")
        if fault is not None:
            self.run.faults.append(fault)

    def _out_of_time(self, index: int) -> None:
        self.run.faults += out_of_time_faults(self.nb.cells, index, self.settings.notebook_seconds)

    def _recover(self, failed: int) -> bool:
        """Restart the kernel and replay the cells that had run; False if grading must stop."""
        run = self.run
        while True:
            if run.restarts >= self.restart_limit:
                run.faults += gave_up_faults(self.nb.cells, failed, run.restarts)
                return False
            if run.remaining() < 1:
                if failed + 1 < len(self.nb.cells):
                    self._out_of_time(failed + 1)
                return False
            run.restarts += 1
            began = time.monotonic()
            self.kernels.stop()
            run.timing["kernel stop"] += time.monotonic() - began
            self._start_kernel()
            if self._replay():
                return True

    def _replay(self) -> bool:
        """Run the cells that had completed again (not test cells); False if one lost the
        kernel again."""
        for index in list(self.run.completed):
            original = self.nb.cells[index]
            if is_test_cell(original):
                continue
            outcome = self._run_cell(index, copy.deepcopy(original))
            self.nb.cells[index] = original
            if outcome in (Outcome.OK, Outcome.ERROR):
                continue
            self.run.completed.remove(index)
            self._record(outcome, index, original)
            if outcome.lost_kernel:
                return False
        return True

    def _start_kernel(self) -> None:
        began = time.monotonic()
        try:
            self.kernels.start()
        finally:
            self.run.timing["kernel start"] += time.monotonic() - began

    # -- nbclient hooks -----------------------------------------------------------------------

    def on_cell_executed(self, **kwargs):
        self.run.last_reply = kwargs.get("execute_reply")
        return super().on_cell_executed(**kwargs)

    def output(self, outs, msg, display_id, cell_index):
        """Keep at most ``output_limit_kb`` of a cell's output; verdicts always."""
        content, run, limit = msg.get("content", {}), self.run, self.output_limit_kb << 10
        if VERDICT_MIME not in (content.get("data") or {}):
            room = limit - run.output_bytes
            run.output_bytes += output_size(content)
            if run.output_bytes > limit:
                if run.output_dropped:
                    return None
                run.output_dropped = True
                if "text" in content and room > 0:  # keep what fits of this stream
                    msg = {**msg, "content": {**content, "text": content["text"][:room]}}
                    super().output(outs, msg, display_id, cell_index)
                outs.append(stream_output(f"\n[output truncated: over {self.output_limit_kb} "
                                          "KiB]\n"))
                return None
        return super().output(outs, msg, display_id, cell_index)
