"""A kernel factory: one process that has imported what every grading kernel imports (torch,
torch._dynamo, the grading library, ipykernel) and forks each new kernel from itself, so a
kernel starts in a fraction of a second instead of importing torch all over again.

The zygote never runs learner code and never holds a secret: it only imports modules, then
serves requests on stdin (one JSON line each) and answers with the new kernel's pid. Each fork
becomes a small supervisor that (for a sandbox) unshares a PID namespace and forks again; the
grandchild enters the sandbox exactly as ``sandbox_launch.py`` does (same functions), drops its
privileges and runs ipykernel in-process. The supervisor records the kernel's exit status in a
file and dies with the zygote; the kernel dies with the supervisor; everything the kernel
started dies with its PID namespace.

Used by ``grader.sandbox.SandboxKernelManager`` unless the ``zygote`` setting is off; when the
zygote cannot start, kernels are started the ordinary way. Sandboxed kernels may come from a
zygote several grading processes share instead (``grader.shared_zygote``).
"""

import ctypes
import json
import os
import select
import signal
import subprocess
import sys
import threading
import time

from . import processes

# autograder.probes before torch._dynamo: it chooses TRITON_INTERPRET before triton is imported
PRELOAD = ("torch", "autograder", "autograder.probes", "torch._dynamo", "autograder.exercises",
           "autograder.seal",
           "autograder.partial", "grader.sandbox_launch", "ipykernel.kernelapp",
           "ipykernel.ipkernel", "IPython.core.interactiveshell", "jupyter_client.session",
           # every lesson's import cell (its kernels' environment names the inline backend,
           # which matplotlib reads on import, as ipykernel would)
           "matplotlib.pyplot", "ipywidgets", "widgets")
CLONE_NEWNS, CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x20000, 0x10000000, 0x20000000, 0x40000000
START_TIMEOUT = 120

_libc = ctypes.CDLL(None, use_errno=True)


def _unshare(flags: int) -> None:
    if _libc.unshare(flags) != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"unshare: {os.strerror(error)}")


# -- in the zygote ----------------------------------------------------------------------------

def preload() -> str | None:
    """Import every PRELOAD module; why forking would not be safe afterwards, or None."""
    import importlib

    for name in PRELOAD:
        importlib.import_module(name)
    tasks = len(os.listdir("/proc/self/task"))
    if threading.active_count() != 1 or tasks != 1:  # fork would copy a half-held lock
        return f"{tasks} threads after imports: not safe to fork"
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # supervisors are reaped by the kernel
    return None


def fork_supervisor(request: dict) -> int:
    """Fork the supervisor of the kernel ``request`` asks for; its pid."""
    pid = os.fork()
    if pid == 0:
        code = 70
        try:
            _supervise(request)
        except BaseException as error:  # noqa: BLE001
            _note(request, f"kernel supervisor failed: {error!r}")
        finally:
            os._exit(code)
    return pid


def serve() -> None:
    error = preload()
    if error is not None:
        print(json.dumps({"error": error}), flush=True)
        return
    print(json.dumps({"ready": os.getpid()}), flush=True)
    for line in sys.stdin:
        print(json.dumps({"pid": fork_supervisor(json.loads(line))}), flush=True)


def _note(request: dict, text: str) -> None:
    try:
        with open(request["log"], "a") as log:
            log.write(text + "\n")
    except OSError:
        pass


def _redirect(log_path: str) -> None:
    null = os.open(os.devnull, os.O_RDONLY)
    log = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    os.dup2(null, 0)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.closerange(3, 65536)


def _supervise(request: dict) -> None:
    """The fork's first half: a session of its own, a PID namespace for the kernel, and the
    kernel's exit status written down when it ends."""
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # interrupts are for the kernel
    os.setsid()
    processes.die_with_parent()
    _redirect(request["log"])
    mode = request["mode"]
    if mode == "userns":
        uid, gid = os.getuid(), os.getgid()
        _unshare(CLONE_NEWUSER | CLONE_NEWPID)
        for name, text in (("setgroups", "deny"), ("uid_map", f"0 {uid} 1"),
                           ("gid_map", f"0 {gid} 1")):
            with open(f"/proc/self/{name}", "w") as handle:
                handle.write(text)
    elif mode == "root":
        _unshare(CLONE_NEWPID)
    kernel = os.fork()
    if kernel == 0:
        try:
            _kernel(request)
        except BaseException as error:  # noqa: BLE001
            print(f"kernel failed to start: {error!r}", file=sys.stderr, flush=True)
        finally:
            os._exit(71)
    _, status = os.waitpid(kernel, 0)
    code = os.waitstatus_to_exitcode(status)
    with open(request["status_file"], "w") as handle:
        handle.write(str(code))


def _kernel(request: dict) -> None:
    """The fork's second half: enter the sandbox (or only the limits), then be the kernel."""
    processes.die_with_parent()
    signal.signal(signal.SIGINT, signal.default_int_handler)
    if request["mode"] == "none":
        processes.set_limits(processes.kernel_limits(request.get("memory_mb", 0)))
        os.chdir(request["cwd"])
        environment = request["env"]
    else:
        from . import sandbox_launch

        with open(request["spec"]) as handle:
            spec = json.load(handle)
        _unshare(CLONE_NEWNS | CLONE_NEWNET)
        sandbox_launch.build_root(spec)
        sandbox_launch.enter_root(spec["root"])
        processes.set_limits(spec["limits"])
        sandbox_launch.drop_privileges(spec.get("uid"), spec.get("gid"))
        os.chdir(spec["work"])
        environment = spec["env"]
    os.environ.clear()
    os.environ.update(environment)
    sys.argv = ["ipykernel_launcher", *request["argv"]]
    from ipykernel import kernelapp

    kernelapp.launch_new_instance()


# -- in the grading process -------------------------------------------------------------------

class ForkedKernel:
    """A Popen look-alike for a kernel forked by the zygote (what jupyter_client's provisioner
    polls, signals and waits on)."""

    stdin = stdout = stderr = None

    def __init__(self, pid: int, status_file: str):
        import psutil

        self.pid, self.status_file, self.returncode = pid, status_file, None
        try:
            self._created = psutil.Process(pid).create_time()
        except psutil.Error:
            self._created = None

    def _alive(self) -> bool:
        import psutil

        try:
            process = psutil.Process(self.pid)
            return (process.create_time() == self._created
                    and process.status() != psutil.STATUS_ZOMBIE)
        except psutil.Error:
            return False

    def _recorded(self) -> int | None:
        try:
            with open(self.status_file) as handle:
                text = handle.read().strip()
            return int(text) if text else None
        except (OSError, ValueError):
            return None

    def poll(self) -> int | None:
        if self.returncode is None and not self._alive():
            recorded = self._recorded()
            self.returncode = recorded if recorded is not None else -signal.SIGKILL
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if deadline is not None and time.monotonic() > deadline:
                raise subprocess.TimeoutExpired("kernel", timeout)
            time.sleep(0.05)
        return self.returncode

    def send_signal(self, signum: int) -> None:
        if self.poll() is None:
            try:
                os.kill(self.pid, signum)
            except ProcessLookupError:
                pass

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)


class Zygote:
    """The grading process's handle on its zygote."""

    def __init__(self, environment: dict[str, str]):
        self.process = subprocess.Popen(
            [sys.executable, "-I", "-m", "grader.zygote"], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, env=environment, preexec_fn=processes.die_with_parent,
            cwd="/", text=True, bufsize=1)
        self.lock = threading.Lock()
        reply = self._read(START_TIMEOUT)
        if "ready" not in reply:
            self.close()
            raise RuntimeError(f"the kernel zygote did not start: {reply}")

    def _read(self, timeout: float) -> dict:
        ready, _, _ = select.select([self.process.stdout], [], [], timeout)
        line = self.process.stdout.readline() if ready else ""
        if not line:
            return {"error": "no answer" if not ready else "it exited"}
        return json.loads(line)

    def alive(self) -> bool:
        return self.process.poll() is None

    def spawn(self, request: dict) -> ForkedKernel:
        with self.lock:
            self.process.stdin.write(json.dumps(request) + "\n")
            self.process.stdin.flush()
            reply = self._read(30)
        if "pid" not in reply:
            raise RuntimeError(f"the kernel zygote could not fork: {reply}")
        return ForkedKernel(reply["pid"], request["status_file"])

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


_zygotes: dict[tuple, Zygote] = {}
_failed: set = set()


def zygote_for(environment: dict[str, str]) -> Zygote | None:
    """This process's zygote for kernels with ``environment`` (started on first use), or None
    when it could not start."""
    key = tuple(sorted(environment.items()))
    if key in _failed:
        return None
    zygote = _zygotes.get(key)
    if zygote is not None and zygote.alive() and os.getpid() == zygote.owner:
        return zygote
    try:
        zygote = Zygote(environment)
        zygote.owner = os.getpid()
    except Exception as error:  # noqa: BLE001 (fall back to starting kernels the usual way)
        print(f"autograder: kernels start without a zygote: {error}", file=sys.stderr)
        _failed.add(key)
        return None
    _zygotes[key] = zygote
    return zygote


def zygote_pids() -> set[int]:
    """The pids of this process's zygotes (children of ours that are not strays)."""
    return {zygote.process.pid for zygote in _zygotes.values()}


if __name__ == "__main__":
    serve()
