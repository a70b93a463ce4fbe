"""The grading kernels of one notebook, one at a time: each started sandboxed (when this machine
can) from the zygote, sealed with the run's key before any learner code, and stopped together
with every process it left behind."""

import os
import shutil
import tempfile
from pathlib import Path

import psutil

from autograder.verdict import KEY_FILE_VARIABLE

from . import processes, sandbox
from .settings import Settings
from .zygote import zygote_pids

BOOT = ("import autograder.seal; autograder.seal.boot(); "
        "__import__('sys').path.append(__import__('os').getcwd())")
SEALED_PROBE = "__import__('autograder').grade.__qualname__"
IGNORED_PROCESSES = ("torch/_inductor/compile_worker",)
DEATHS = {"SIGKILL": " (out of memory?)", "SIGXFSZ": " (a file over the size limit)",
          "SIGSEGV": " (a crash in native code)"}


class KernelSession:
    """Starts, probes and stops the kernels of ``client`` (an nbclient ``NotebookClient``) that
    run ``work``'s files; ``capability`` None means no sandbox."""

    def __init__(self, client, work: Path, key: bytes, capability, settings: Settings):
        self.client, self.work, self.key = client, work, key
        self.capability, self.settings = capability, settings
        self.scratch = Path(tempfile.mkdtemp(prefix="autograder-kernels-"))
        self.started = 0
        self._boxes: list = []
        self._children_before: set[int] = set()
        if capability is None:  # no PID namespace: a kernel's orphans must become ours
            processes.adopt_orphans()

    def start(self) -> None:
        """A new kernel, sealed; RuntimeError (with its log) if it does not start or seal."""
        client = self.client
        log = self.scratch / f"kernel-{self.started}.log"
        if self.capability is not None:
            client.km = sandbox.sandboxed_kernel_manager(
                self.work, self.capability, memory_mb=self.settings.memory_limit_mb,
                log_path=str(log), environment={}, use_zygote=self.settings.zygote)
            self._boxes.append(client.km.sandbox)
            key_file, cwd = client.km.sandbox.comm / "seal-key", str(client.km.sandbox.base)
        else:
            client.km = sandbox.SandboxKernelManager(
                kernel_name="python3", log_path=str(log), memory_mb=self.settings.memory_limit_mb,
                use_zygote=self.settings.zygote)
            self._children_before = {child.pid for child in psutil.Process().children()}
            key_file, cwd = self.scratch / f"seal-key-{self.started}", str(self.work)
        self.started += 1
        key_file.touch(mode=0o600)
        key_file.write_bytes(self.key)
        client.km.kernel_environment = {KEY_FILE_VARIABLE: str(key_file)}
        client.extra_arguments = ["--HistoryManager.hist_file=:memory:",
                                  f"--IPKernelApp.exec_lines={BOOT}"]
        try:
            client.start_new_kernel(cwd=cwd)
            client.start_new_kernel_client()
            reply = client.wait_for_reply(client.kc.execute(
                "", silent=True, user_expressions={"sealed": SEALED_PROBE}))
        except Exception as error:
            raise RuntimeError(f"the grading kernel did not start: {error}\n{_tail(log)}") from None
        sealed = (reply or {}).get("content", {}).get("user_expressions", {}).get("sealed", {})
        if "make_sealed_grade" not in str(sealed.get("data", {}).get("text/plain", "")):
            raise RuntimeError(f"the grading kernel did not seal itself: {sealed}\n{_tail(log)}")
        if "language_info" not in client.nb.metadata:
            info = client.wait_for_reply(client.kc.kernel_info())
            client.nb.metadata["language_info"] = info["content"]["language_info"]

    def stop(self) -> None:
        """Stop the kernel (if any) and what it started; remove its sandbox."""
        if getattr(self.client, "km", None) is not None:
            try:
                self.kill_strays()
                self.client._cleanup_kernel()
            except Exception as error:  # a kernel that is already gone
                self.client.log.debug("stopping the kernel: %s", error)
            self.client.km = self.client.kc = None
        for box in self._boxes:
            box.cleanup()
        self._boxes.clear()

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.scratch, ignore_errors=True)

    def strays(self) -> list[tuple[psutil.Process, str]]:
        """Processes the kernel started that are still running, with their command lines."""
        _, children = sandbox.kernel_processes(self.client.km)
        if self.capability is None:  # orphans re-parented to us, the subreaper
            launcher = getattr(getattr(self.client.km, "provisioner", None), "process", None)
            known = self._children_before | zygote_pids() | {getattr(launcher, "pid", None)}
            children += [child for child in psutil.Process().children()
                         if child.pid not in known and child not in children]
        found = []
        for process in children:
            try:
                command = " ".join(process.cmdline()) or process.name()
            except psutil.Error:
                continue
            if not any(ignored in command for ignored in IGNORED_PROCESSES):
                found.append((process, command))
        return found

    def kill_strays(self) -> None:
        for process, _ in self.strays():
            try:
                process.kill()
                if self.capability is None and process.ppid() == os.getpid():
                    os.waitpid(process.pid, 0)  # an orphan we adopted: reap it
            except (psutil.Error, OSError):
                pass

    def death(self) -> str:
        """How the last kernel ended, in words."""
        process = getattr(getattr(self.client.km, "provisioner", None), "process", None)
        code = process.poll() if process is not None else None
        if code is None:
            return "stopped answering"
        if code < 0:
            name = processes.signal_name(-code)
            return f"was killed by {name}{DEATHS.get(name, '')}"
        return f"exited with status {code} (os._exit or sys.exit?)"


def _tail(path: Path, characters: int = 2000) -> str:
    try:
        return path.read_text(errors="replace")[-characters:]
    except OSError:
        return ""
