"""nbgrader extension: run submissions in a sealed, sandboxed kernel that survives faults, grade
signed verdicts only, and write feedback that teaches without showing the hidden tests.

``SealedExecute`` replaces nbgrader's Execute. Each cell runs under a time limit; a cell that
times out is interrupted; one that ignores the interrupt, kills the kernel or exhausts its memory
cap costs only itself: the kernel is restarted, the cells that had run are replayed (test cells
excepted), and grading goes on with the next cell. A cell's output is capped. Whatever happened
is recorded as :class:`~autograder.faults.Fault` s in ``resources["autograder"]``.
"""

import copy
import ctypes
import html
import os
import re
import secrets
import shutil
import signal
import tempfile
import time
from pathlib import Path

import psutil
from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbformat.notebooknode import NotebookNode
from nbgrader.preprocessors import Execute, NbGraderPreprocessor
from nbgrader.utils import is_grade, is_solution
from traitlets import Bool, Integer, Unicode, default

from . import sandbox
from .faults import Fault
from .intake import FILES_LIMIT_MB, shadowing_faults, shadowing_name
from .seal import KEY_FILE_VARIABLE, VERDICT_MIME, read_verdicts

BOOT = ("import autograder.seal; autograder.seal.boot(); "
        "__import__('sys').path.append(__import__('os').getcwd())")
SEALED_PROBE = "__import__('autograder').grade.__qualname__"
NOTEBOOK_TIMEOUT_VARIABLE = "AUTOGRADER_NOTEBOOK_TIMEOUT"
MEMORY_ERRORS = ("can't allocate memory", "out of memory", "Cannot allocate memory")
IGNORED_PROCESSES = ("torch/_inductor/compile_worker",)
HIDDEN_TESTS = re.compile(r"^[ \t]*### BEGIN HIDDEN TESTS.*?^[ \t]*### END HIDDEN TESTS[^\n]*\n?",
                          re.DOTALL | re.MULTILINE)
HIDDEN = "[hidden test]"
PR_SET_CHILD_SUBREAPER = 36


def is_test_cell(cell) -> bool:
    return cell.cell_type == "code" and is_grade(cell) and not is_solution(cell)


def _error(name: str, message: str) -> NotebookNode:
    lines = message.splitlines() or [""]
    return NotebookNode(output_type="error", ename=name, evalue=lines[0], traceback=lines)


def _stream(text: str) -> NotebookNode:
    return NotebookNode(output_type="stream", name="stdout", text=text)


def _label(cell, index: int) -> str:
    return cell.metadata.get("nbgrader", {}).get("grade_id") or f"cell {index + 1}"


def apply_verdicts(nb, key: bytes, faults=()) -> None:
    """Replace each test cell's outputs with its signed verdict: a tick, a partial score (an
    execute_result with the points, nbgrader's partial-credit convention), or an error whose
    first line is the hint. A test cell without a verdict gets an error saying why."""
    stopped = {fault.cell: fault for fault in faults if fault.cell and fault.kind in (
        "timeout", "kernel-died", "memory-limit", "notebook-timeout")}
    answer = None
    for cell in nb.cells:
        metadata = cell.metadata.get("nbgrader", {})
        if cell.cell_type == "code" and metadata.get("solution"):
            answer = metadata.get("grade_id")
        if not is_test_cell(cell):
            continue
        exercise = metadata["grade_id"]
        found = read_verdicts(cell.outputs, key, scores=True).get(exercise)
        if found is None:
            cell.outputs = [_error("NoVerdict", _no_verdict(exercise, cell, stopped, answer))]
            continue
        passed, message, score = found
        points = float(metadata.get("points", 0))
        if passed:
            cell.outputs = [_stream(f"✓ {message}\n")]
        elif score and 0 < score < 1 and points:
            cell.outputs = [
                _stream(f"◐ partial credit, {score * points:.3g} of {points:g} points: "
                        f"{message}\n"),
                NotebookNode(output_type="execute_result", execution_count=cell.execution_count,
                             metadata={}, data={"text/plain": repr(round(score * points, 6))})]
        else:
            cell.outputs = [_error("GradingError", message)]


def _no_verdict(exercise: str, cell, stopped: dict, answer: str | None) -> str:
    if exercise in stopped:
        return f"the hidden tests for {exercise} did not finish: {stopped[exercise].message}"
    if answer in stopped:
        return (f"the hidden tests for {exercise} could not run: its answer cell was stopped "
                f"({stopped[answer].message})")
    errors = [o for o in cell.outputs if o.get("output_type") == "error"]
    cause = f" ({errors[-1].ename}: {errors[-1].evalue})" if errors else ""
    return (f"the hidden tests for {exercise} did not report a verdict{cause}: the cell was "
            "interrupted, timed out, lost its kernel, or failed before the hidden tests ran")


def _size(content: dict) -> int:
    if "text" in content:
        return len(content["text"])
    if "data" in content:
        return sum(len(value) if isinstance(value, str) else len(str(value))
                   for value in content["data"].values())
    return sum(len(line) for line in content.get("traceback", ())) + len(content.get("evalue", ""))


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


class SealedExecute(Execute):
    """nbgrader's Execute, in a sealed (``autograder.seal``) and sandboxed
    (``autograder.sandbox``) kernel that is restarted after a fault (see the module docstring)."""

    sandbox = Unicode(help="auto, required or off (default: $AUTOGRADER_SANDBOX or auto)"
                      ).tag(config=True)
    memory_limit_mb = Integer(help="memory cap per kernel in MiB, 0 for none (default: "
                                   "$AUTOGRADER_MEMORY_LIMIT_MB or 2048)").tag(config=True)
    notebook_timeout = Integer(help="seconds for one notebook, restarts and replays included "
                                    "(default: $AUTOGRADER_NOTEBOOK_TIMEOUT, or 4 cell timeouts)"
                               ).tag(config=True)
    restart_limit = Integer(3, help="kernel restarts allowed per notebook").tag(config=True)
    zygote = Bool(help="fork kernels from a process that has imported torch already "
                       "(default: unless $AUTOGRADER_ZYGOTE is 0)").tag(config=True)
    output_limit_kb = Integer(1024, help="output kept per cell, in KiB").tag(config=True)
    iopub_timeout = Integer(10).tag(config=True)
    shutdown_kernel = Unicode("immediate")

    @default("sandbox")
    def _sandbox_default(self):
        return sandbox.sandbox_mode()

    @default("zygote")
    def _zygote_default(self):
        return os.environ.get("AUTOGRADER_ZYGOTE", "1").strip() != "0"

    @default("memory_limit_mb")
    def _memory_default(self):
        return sandbox.memory_limit_mb()

    @default("notebook_timeout")
    def _notebook_timeout_default(self):
        return int(os.environ.get(NOTEBOOK_TIMEOUT_VARIABLE, 0)) or 4 * (self.timeout or 120)

    # -- the run ------------------------------------------------------------------------------

    def preprocess(self, nb, resources=None, km=None):
        from nbclient import NotebookClient

        NotebookClient.__init__(self, nb, None)
        self.reset_execution_trackers()
        self._check_assign_resources(resources or {})
        self.timeout_func = self._cell_timeout
        self._key = secrets.token_bytes(32)
        self._faults: list[Fault] = []
        self._capability = self._choose_sandbox()
        if self._capability is None:  # no PID namespace: a kernel's orphans must become ours
            ctypes.CDLL(None).prctl(PR_SET_CHILD_SUBREAPER, 1)
        self._scratch = Path(tempfile.mkdtemp(prefix="autograder-run-"))
        self._work = self._work_copy()
        self._deadline = time.monotonic() + self.notebook_timeout
        self._sandboxes = []
        self._timing = {"kernel start": 0.0, "cells": 0.0, "kernel stop": 0.0}
        try:
            self._run_cells()
        finally:
            began = time.monotonic()
            self._stop_kernel()
            self._timing["kernel stop"] += time.monotonic() - began
            shutil.rmtree(self._scratch, ignore_errors=True)
        apply_verdicts(self.nb, self._key, self._faults)
        info = self.resources.setdefault("autograder", {})
        info["faults"] = [fault.to_dict() for fault in dict.fromkeys(self._faults)]
        why = "AUTOGRADER_SANDBOX=off" if self.sandbox == "off" else sandbox.capability().reason
        info["sandbox"] = self._capability.reason if self._capability else f"NONE ({why})"
        info["timing"] = self._timing
        return self.nb, self.resources

    def _choose_sandbox(self):
        if self.sandbox == "off":
            return None
        found = sandbox.capability()
        if found.available:
            return found
        if self.sandbox == "required":
            raise RuntimeError(f"grading needs a sandbox ({sandbox.SANDBOX_VARIABLE}=required), "
                               f"but this machine cannot make one: {found.reason}")
        self.log.warning("grading WITHOUT a sandbox: %s", found.reason)
        return None

    def _work_copy(self) -> Path:
        """The submission's folder as the kernel will see it: no notebooks (the graded one holds
        the hidden tests), nothing that would shadow a module grading imports."""
        source = Path(self.resources.get("metadata", {}).get("path") or ".")
        work = self._scratch / (source.resolve().name or "work")
        work.mkdir()
        shadowing, budget = {}, FILES_LIMIT_MB << 20
        for path in sorted(source.rglob("*"), key=lambda p: p.is_file() and p.stat().st_size):
            relative = path.relative_to(source).as_posix()
            notebook = path.suffix == ".ipynb" and "/" not in relative
            if path.is_dir() or path.is_symlink() or notebook:
                continue
            if shadowing_name(relative):
                shadowing.setdefault(shadowing_name(relative), []).append(relative)
                continue
            if path.stat().st_size > budget:
                self._faults.append(Fault("large-files", f"left out {relative}: files beside "
                                          f"the notebook may total {FILES_LIMIT_MB} MiB"))
                continue
            budget -= path.stat().st_size
            (work / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, work / relative)
        self._faults += shadowing_faults(shadowing)
        return work

    def _remaining(self) -> float:
        return self._deadline - time.monotonic()

    def _cell_timeout(self, cell) -> int:
        return max(1, int(min(self.timeout or 120, self._remaining())))

    def _run_cells(self) -> None:
        self._completed: list[int] = []
        self._restarts = 0
        self._start_kernel()
        for index, cell in enumerate(self.nb.cells):
            if cell.cell_type != "code" or not cell.source.strip():
                continue
            if self._remaining() < 1:
                self._out_of_time(index)
                return
            outcome = self._run_cell(index, cell)
            if outcome == "ok":
                self._completed.append(index)
                continue
            self._record(outcome, index, cell)
            if outcome in ("hung", "died", "memory") and not self._recover(index):
                return
        self._check_strays()

    def _out_of_time(self, index: int) -> None:
        cell = self.nb.cells[index]
        self._faults.append(Fault("notebook-timeout", f"the notebook used up its "
                                  f"{self.notebook_timeout} s before {_label(cell, index)}; "
                                  "that cell and the ones after it did not run",
                                  _label(cell, index)))
        for later in self.nb.cells[index:]:
            if is_test_cell(later):
                self._faults.append(Fault("notebook-timeout", "the notebook ran out of time "
                                          "before this test", _label(later, 0)))

    def _run_cell(self, index: int, cell) -> str:
        """Run one cell: ok, error (the learner's, fine), timeout (interrupted), hung (ignored
        the interrupt), died (kernel gone) or memory (out of its memory cap)."""
        self._output_bytes, self._output_dropped, self._last_reply = 0, False, None
        began = time.monotonic()
        try:
            self.execute_cell(cell, index, store_history=not is_test_cell(cell))
        except CellTimeoutError:
            return "hung"
        except DeadKernelError:
            return "died"
        finally:
            self._timing["cells"] += time.monotonic() - began
        if self._output_dropped:
            self._faults.append(Fault("output-limit", f"{_label(cell, index)} printed more than "
                                      f"{self.output_limit_kb} KiB; the rest was dropped",
                                      _label(cell, index)))
        reply = self._last_reply or {}
        if "header" not in reply and reply.get("content", {}).get("ename") == \
                self.error_on_timeout.get("ename"):
            return "timeout"
        errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
        if any(o.get("ename") in ("MemoryError", "OutOfMemoryError")
               or any(text in str(o.get("evalue", "")) for text in MEMORY_ERRORS)
               for o in errors):
            return "memory"
        return "error" if errors else "ok"

    def _record(self, outcome: str, index: int, cell) -> None:
        label = _label(cell, index)
        if outcome == "error":
            return
        if outcome in ("timeout", "hung") and self._remaining() < 2:
            self._faults.append(Fault("notebook-timeout", f"{label} was stopped when the "
                                      f"notebook used up its {self.notebook_timeout} s", label))
        elif outcome == "timeout":
            self._faults.append(Fault("timeout", f"{label} ran past the {self.timeout} s limit "
                                      "and was interrupted (an endless loop?)", label))
        elif outcome == "hung":
            self._faults.append(Fault("timeout", f"{label} ran past the {self.timeout} s limit "
                                      "and ignored the interrupt: the kernel was restarted",
                                      label))
        elif outcome == "memory":
            self._faults.append(Fault("memory-limit", f"{label} ran out of memory (cap "
                                      f"{self.memory_limit_mb} MiB): the kernel was restarted",
                                      label))
        else:
            self._faults.append(Fault("kernel-died", f"the kernel {self._death()} while {label} "
                                      "ran: it was restarted", label))

    def _death(self) -> str:
        process = getattr(getattr(self.km, "provisioner", None), "process", None)
        code = process.poll() if process is not None else None
        if code is None:
            return "stopped answering"
        if code < 0:
            name = _signal_name(-code)
            why = {"SIGKILL": " (out of memory?)", "SIGXFSZ": " (a file over the size limit)",
                   "SIGSEGV": " (a crash in native code)"}.get(name, "")
            return f"was killed by {name}{why}"
        return f"exited with status {code} (os._exit or sys.exit?)"

    def _recover(self, failed: int) -> bool:
        """Restart the kernel and replay the cells that had run; False if grading must stop."""
        while True:
            if self._restarts >= self.restart_limit:
                self._faults.append(Fault("kernel-died", f"the kernel was restarted "
                                          f"{self._restarts} times; the cells after "
                                          f"{_label(self.nb.cells[failed], failed)} did not run"))
                self._mark_not_run(failed)
                return False
            if self._remaining() < 1:
                if failed + 1 < len(self.nb.cells):
                    self._out_of_time(failed + 1)
                return False
            self._restarts += 1
            self._stop_kernel()
            self._start_kernel()
            for index in list(self._completed):
                original = self.nb.cells[index]
                if is_test_cell(original):
                    continue
                outcome = self._run_cell(index, copy.deepcopy(original))
                self.nb.cells[index] = original
                if outcome in ("ok", "error"):
                    continue
                self._completed.remove(index)
                self._record(outcome, index, original)
                if outcome in ("hung", "died", "memory"):
                    break
            else:
                return True

    def _mark_not_run(self, failed: int) -> None:
        for cell in self.nb.cells[failed + 1:]:
            if is_test_cell(cell):
                self._faults.append(Fault("kernel-died", "not run: the kernel had failed too "
                                          "often", _label(cell, 0)))

    # -- kernels ------------------------------------------------------------------------------

    def _start_kernel(self) -> None:
        began = time.monotonic()
        try:
            self._launch_kernel()
        finally:
            self._timing["kernel start"] += time.monotonic() - began

    def _launch_kernel(self) -> None:
        log = self._scratch / f"kernel-{len(self._sandboxes)}.log"
        arguments = ["--HistoryManager.hist_file=:memory:", f"--IPKernelApp.exec_lines={BOOT}"]
        if self._capability is not None:
            self.km = sandbox.sandboxed_kernel_manager(
                self._work, self._capability, memory_mb=self.memory_limit_mb, log_path=str(log),
                environment={}, use_zygote=self.zygote)
            key_file = self.km.sandbox.comm / "seal-key"
            self._sandboxes.append(self.km.sandbox)
            cwd = str(self.km.sandbox.base)
        else:
            self.km = sandbox.SandboxKernelManager(kernel_name="python3", log_path=str(log),
                                                   memory_mb=self.memory_limit_mb,
                                                   use_zygote=self.zygote)
            self._children_before = {child.pid for child in psutil.Process().children()}
            key_file = self._scratch / f"seal-key-{len(self._sandboxes)}"
            self._sandboxes.append(None)
            cwd = str(self._work)
        key_file.touch(mode=0o600)
        key_file.write_bytes(self._key)
        self.km.kernel_environment = {KEY_FILE_VARIABLE: str(key_file)}
        self.extra_arguments = arguments
        try:
            self.start_new_kernel(cwd=cwd)
            self.start_new_kernel_client()
            reply = self.wait_for_reply(self.kc.execute(
                "", silent=True, user_expressions={"sealed": SEALED_PROBE}))
        except Exception as error:
            raise RuntimeError(f"the grading kernel did not start: {error}\n{_tail(log)}") from None
        sealed = (reply or {}).get("content", {}).get("user_expressions", {}).get("sealed", {})
        if "make_sealed_grade" not in str(sealed.get("data", {}).get("text/plain", "")):
            raise RuntimeError(f"the grading kernel did not seal itself: {sealed}\n{_tail(log)}")
        if "language_info" not in self.nb.metadata:
            info = self.wait_for_reply(self.kc.kernel_info())
            self.nb.metadata["language_info"] = info["content"]["language_info"]

    def _stop_kernel(self) -> None:
        if getattr(self, "km", None) is not None:
            try:
                self._kill_strays(quiet=True)
                self._cleanup_kernel()
            except Exception as error:  # a kernel that is already gone
                self.log.debug("stopping the kernel: %s", error)
            self.km = self.kc = None
        for box in getattr(self, "_sandboxes", []):
            if box is not None:
                box.cleanup()

    def _strays(self) -> list:
        _, children = sandbox.kernel_processes(self.km)
        if self._capability is None:  # orphans re-parented to us, the subreaper
            from .zygote import zygote_pids

            launcher = getattr(getattr(self.km, "provisioner", None), "process", None)
            known = (getattr(self, "_children_before", set()) | zygote_pids()
                     | {getattr(launcher, "pid", None)})
            children += [child for child in psutil.Process().children()
                         if child.pid not in known and child not in children]
        strays = []
        for process in children:
            try:
                command = " ".join(process.cmdline()) or process.name()
            except Exception:
                continue
            if not any(ignored in command for ignored in IGNORED_PROCESSES):
                strays.append((process, command))
        return strays

    def _check_strays(self) -> None:
        strays = self._strays()
        if strays:
            names = ", ".join(sorted({command[:60] for _, command in strays}))
            self._faults.append(Fault("stray-process", f"{len(strays)} process(es) left running "
                                      f"when grading ended were killed: {names}"))
        self._kill_strays(quiet=True)

    def _kill_strays(self, quiet: bool) -> None:
        for process, _ in self._strays():
            try:
                process.kill()
                if self._capability is None and process.ppid() == os.getpid():
                    os.waitpid(process.pid, 0)  # an orphan we adopted: reap it
            except Exception:
                pass

    # -- nbclient hooks -----------------------------------------------------------------------

    def on_cell_executed(self, **kwargs):
        self._last_reply = kwargs.get("execute_reply")
        return super().on_cell_executed(**kwargs)

    def output(self, outs, msg, display_id, cell_index):
        """Keep at most ``output_limit_kb`` of a cell's output; verdicts always."""
        content = msg.get("content", {})
        if VERDICT_MIME not in (content.get("data") or {}):
            room = (self.output_limit_kb << 10) - self._output_bytes
            self._output_bytes += _size(content)
            if self._output_bytes > self.output_limit_kb << 10:
                if self._output_dropped:
                    return None
                self._output_dropped = True
                if "text" in content and room > 0:  # keep what fits of this stream
                    msg = {**msg, "content": {**content, "text": content["text"][:room]}}
                    super().output(outs, msg, display_id, cell_index)
                outs.append(_stream(f"\n[output truncated: over {self.output_limit_kb} KiB]\n"))
                return None
        return super().output(outs, msg, display_id, cell_index)


def _tail(path: Path, characters: int = 2000) -> str:
    try:
        return path.read_text(errors="replace")[-characters:]
    except OSError:
        return ""


# -- feedback ---------------------------------------------------------------------------------

def hidden_lines(nb) -> list[str]:
    """The non-trivial lines of every hidden-test region in the notebook's test cells,
    markers included, longest first."""
    lines = []
    for cell in nb.cells:
        if is_test_cell(cell):
            for region in HIDDEN_TESTS.findall(cell.source):
                lines += [line.strip() for line in region.splitlines()
                          if len(line.strip()) >= 8]
    return sorted(set(lines), key=len, reverse=True)


def _scrub(value, lines):
    if isinstance(value, str):
        for line in lines:
            for form in {line, html.escape(line), html.escape(line, quote=False)}:
                value = value.replace(form, HIDDEN)
        return value
    if isinstance(value, list):
        return [_scrub(item, lines) for item in value]
    if isinstance(value, dict):
        return type(value)({key: _scrub(item, lines) for key, item in value.items()})
    return value


class HideHiddenTests(NbGraderPreprocessor):
    """Feedback: remove hidden-test regions from test cells, and their text from every output
    (a learner's cell may have printed them, e.g. from IPython's input history)."""

    def preprocess(self, nb, resources):
        lines = hidden_lines(nb)
        for cell in nb.cells:
            if is_test_cell(cell):
                cell.source = HIDDEN_TESTS.sub("", cell.source).rstrip()
            if cell.cell_type == "code" and lines:
                cell.outputs = [NotebookNode(_scrub(dict(output), lines))
                                for output in cell.outputs]
        return nb, resources


def verdict_of(cell) -> tuple[str, str]:
    """(result, hint) shown for a test cell: passed, partial or failed, and the first line."""
    for output in cell.get("outputs", []):
        if output.get("output_type") == "error":
            return "failed", output.get("evalue", "")
        if output.get("output_type") == "stream":
            text = output.get("text", "").strip()
            if text.startswith("✓"):
                return "passed", text[1:].strip().splitlines()[0]
            if text.startswith("◐"):
                return "partial", text[1:].strip().splitlines()[0]
    return "failed", "no verdict"


class FeedbackSummary(NbGraderPreprocessor):
    """Feedback: a table at the top with every graded test's name, points and hint."""

    def preprocess(self, nb, resources):
        rows = []
        for cell in nb.cells:
            if not is_test_cell(cell):
                continue
            metadata = cell.metadata.nbgrader
            result, hint = verdict_of(cell)
            score, points = metadata.get("score"), metadata.get("points", 0)
            earned = "–" if score is None else f"{float(score):g}"
            mark = {"passed": "✓", "partial": "◐"}.get(result, "✗")
            rows.append(f"| [`{metadata['grade_id']}`](#{metadata['grade_id']}) | {earned} / "
                        f"{float(points):g} | {mark} {_cell_text(hint)} |")
        if rows:
            table = ("## Your graded tests\n\n| Test | Points | Result and hint |\n|---|---|---|\n"
                     + "\n".join(rows))
            summary = NotebookNode(cell_type="markdown", metadata={}, source=table,
                                   id="autograder-summary")
            nb.cells.insert(0, summary)
        return nb, resources


def _cell_text(text: str) -> str:
    """Text safe inside a markdown table cell (no HTML, no pipes, one line)."""
    return html.escape(text.replace("|", "¦").replace("\n", " "))[:400]
