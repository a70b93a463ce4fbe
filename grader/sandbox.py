"""Where a learner's kernel runs while it is graded: a sandbox, and the kernel manager that uses it.

Each grading kernel is started by ``unshare`` in new mount, network and PID namespaces, then by
``sandbox_launch.py`` inside them: a private tmpfs becomes its whole filesystem, holding read-only
binds of what Python needs (the interpreter, the virtual environment, the grading packages, /usr,
/etc) and a copy of the submission's files, and nothing else: not the course root (gradebook,
source notebooks, other submissions), not the repository's lessons. The network namespace has
no interface but a down loopback. The kernel runs as a fresh unprivileged uid (when the grader is
root) or as root of a user namespace with every capability dropped (otherwise), under resource
limits (memory, file size, processes). When the kernel ends, the PID namespace ends, and every
process the learner left behind is killed with it.

Modes (the ``sandbox`` setting, ``grader.settings``): ``auto`` (the default: sandbox when this
machine can, else grade unsandboxed and say why), ``required`` (refuse to grade without it),
``off``.
"""

import functools
import importlib.util
import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from jupyter_client.manager import AsyncKernelManager
from traitlets import Any, Unicode

from . import processes, shared_zygote, zygote

LAUNCHER = Path(__file__).with_name("sandbox_launch.py")
# Packages the kernel imports from this repository (installed editable): bound, nothing else of it.
GRADER_PACKAGES = ("autograder", "widgets")
SYSTEM_PATHS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/sys")
# Fresh uids for sandboxed kernels, one each, no passwd entry: no file on the machine is theirs.
UID_RANGE = (3_000_000, 4_000_000)
HOME = "/home/learner"
NAMESPACES = ("--mount", "--net", "--pid", "--fork", "--kill-child")
PASSED_THROUGH = ("AUTOGRADER_DEVICE", "CUDA_VISIBLE_DEVICES", "LANG", "TZ", "OMP_NUM_THREADS",
                  "MKL_NUM_THREADS")


@dataclass(frozen=True)
class Capability:
    """What this machine can do: ``mode`` is root, userns or none; ``reason`` says why."""

    mode: str
    reason: str

    @property
    def available(self) -> bool:
        return self.mode != "none"


def _namespace_flags(mode: str) -> list[str]:
    return [*(["--user", "--map-root-user"] if mode == "userns" else []), *NAMESPACES]


@functools.cache
def capability() -> Capability:
    """Probe once per process whether kernels can be sandboxed here, and how."""
    if not sys.platform.startswith("linux"):
        return Capability("none", f"sandboxing needs Linux namespaces; this is {sys.platform}")
    if shutil.which("unshare") is None:
        return Capability("none", "util-linux `unshare` is not installed")
    mode = "root" if os.geteuid() == 0 else "userns"
    command = ["unshare", *_namespace_flags(mode), "--", "true"]
    try:
        probe = subprocess.run(command, capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired) as error:
        return Capability("none", f"`{' '.join(command)}` failed: {error}")
    if probe.returncode != 0:
        why = (probe.stderr.strip().splitlines() or [f"exit {probe.returncode}"])[-1]
        hint = "" if mode == "root" else " (unprivileged user namespaces disabled? grade as root)"
        return Capability("none", f"`{' '.join(command)}` failed: {why}{hint}")
    if mode == "root":
        return Capability("root", "namespaces, a private filesystem and a fresh unprivileged uid")
    return Capability("userns", "namespaces and a private filesystem, as a user namespace's root "
                                "without capabilities (not graded as root, so no uid of its own)")


def _package_dirs() -> list[str]:
    dirs = []
    for name in GRADER_PACKAGES:
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.submodule_search_locations:
            dirs.extend(spec.submodule_search_locations)
    return dirs


def read_only_paths() -> list[str]:
    """Everything the kernel may read: the system, this Python, and the grading packages."""
    python = {sys.base_prefix, sys.prefix, os.path.realpath(sys.base_prefix),
              os.path.realpath(sys.prefix), os.path.dirname(os.path.realpath(sys.executable))}
    paths = [*SYSTEM_PATHS, *sorted(python), *_package_dirs()]
    return [path for path in dict.fromkeys(paths) if os.path.lexists(path)]


def gpu_devices() -> list[str]:
    return sorted(name for name in os.listdir("/dev") if name.startswith("nvidia"))


class Sandbox:
    """The private folders of one sandboxed kernel and the command that enters them.

    ``comm`` (connection file, IPC sockets, seal key) is the only folder shared with the kernel;
    ``work`` holds the copy of the submission's files that the kernel finds in its home.
    """

    def __init__(self, work_source: Path, capability: Capability, *, memory_mb: int,
                 file_size_mb: int = 256, tmpfs_mb: int = 512, processes: int = 256):
        self.capability = capability
        self.base = Path(tempfile.mkdtemp(prefix="autograder-sandbox-"))
        self.comm, self.root = self.base / "comm", self.base / "root"
        self.comm.mkdir(mode=0o700)
        self.root.mkdir(mode=0o700)
        self.work_source = Path(work_source)
        self.work = f"{HOME}/{self.work_source.name or 'work'}"
        self.uid = secrets.randbelow(UID_RANGE[1] - UID_RANGE[0]) + UID_RANGE[0] \
            if capability.mode == "root" else None
        self.limits = {"data": memory_mb << 20 if memory_mb else None,
                       "fsize": file_size_mb << 20, "core": 0,
                       "nproc": processes if self.uid is not None else None}
        self.tmpfs_mb = tmpfs_mb

    def environment(self, extra: dict[str, str]) -> dict[str, str]:
        environment = {
            "PATH": f"{os.path.dirname(sys.executable)}:/usr/local/bin:/usr/bin:/bin",
            "HOME": HOME, "USER": "learner", "LOGNAME": "learner", "LANG": "C.UTF-8",
            "PYTHONDONTWRITEBYTECODE": "1", "MPLCONFIGDIR": f"{HOME}/.config/matplotlib",
            "MPLBACKEND": "module://matplotlib_inline.backend_inline",
            "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
        }
        environment.update({name: os.environ[name] for name in PASSED_THROUGH
                            if name in os.environ})
        environment.update(extra)
        return environment

    def command(self, kernel_command: list[str], environment: dict[str, str]) -> list[str]:
        """``kernel_command`` wrapped so that it starts inside this sandbox."""
        spec = {
            "root": str(self.root), "tmpfs_size": f"{self.tmpfs_mb}m",
            "read_only": read_only_paths(), "read_write": [str(self.comm)],
            "devices": gpu_devices(), "home": HOME, "work": self.work,
            "work_source": str(self.work_source), "copy_into_home": _matplotlib_cache(),
            "uid": self.uid, "gid": self.uid, "limits": self.limits,
            "env": self.environment(environment),
        }
        spec_file = self.base / "spec.json"
        spec_file.write_text(json.dumps(spec))
        return ["unshare", *_namespace_flags(self.capability.mode), "--",
                sys.executable, "-I", "-S", str(LAUNCHER), str(spec_file), "--", *kernel_command]

    def cleanup(self) -> None:
        shutil.rmtree(self.base, ignore_errors=True)


@functools.cache
def _matplotlib_cache() -> dict[str, str]:
    """matplotlib's font list, built once here and copied into each sandbox home, so that a
    kernel's first ``import matplotlib.pyplot`` does not rebuild it (seconds) in its fresh home.
    Where matplotlib has one already, it is found without importing matplotlib (a second of
    CPU in every grading process; a kernel forked from the zygote has it imported anyway)."""
    found = sorted(_matplotlib_cache_dir().glob("fontlist-*.json"))
    if not found:
        try:
            import matplotlib
            from matplotlib import font_manager  # noqa: F401 (builds the font list on import)
        except ImportError:
            return {}
        found = sorted(Path(matplotlib.get_cachedir()).glob("fontlist-*.json"))
    return {f".config/matplotlib/{path.name}": str(path) for path in found}


def _matplotlib_cache_dir() -> Path:
    """Where matplotlib (``get_cachedir``, on Linux) keeps its cache: MPLCONFIGDIR, else
    matplotlib/ in the XDG cache folder."""
    configured = os.environ.get("MPLCONFIGDIR")
    if configured:
        return Path(configured).resolve()
    try:
        return (Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
                / "matplotlib").resolve()
    except RuntimeError:  # no home folder
        return Path("/nonexistent")


def zygote_environment() -> dict[str, str]:
    """The environment a zygote imports torch in (its kernels get their own)."""
    environment = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8",
                   "HOME": os.environ.get("HOME", "/"), "PYTHONDONTWRITEBYTECODE": "1",
                   "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
                   "MPLBACKEND": "module://matplotlib_inline.backend_inline"}
    environment.update({name: os.environ[name] for name in PASSED_THROUGH if name in os.environ})
    return environment


class SandboxKernelManager(AsyncKernelManager):
    """A kernel manager for grading kernels: always this Python's ipykernel in isolated mode
    (``-I``: no current folder on sys.path, no PYTHON* variables), in a :class:`Sandbox` when one
    is given (then over IPC sockets, since the kernel has no network), with its own environment.
    Kernels are forked from a zygote (``grader.zygote``) that has already imported torch,
    or started the ordinary way when there is none."""

    sandbox = Any(None, allow_none=True)
    kernel_environment = Any(None, allow_none=True)
    log_path = Unicode("")
    memory_mb = Any(0)  # the cap without a sandbox (a sandbox sets its own)
    use_zygote = Any(True)
    launcher_is_kernel = Any(False)  # whether the process we started is the kernel itself

    def format_kernel_cmd(self, extra_arguments=None):
        self._kernel_arguments = ["-f", self.connection_file, *(extra_arguments or [])]
        command = [sys.executable, "-I", "-m", "ipykernel_launcher", *self._kernel_arguments]
        if self.sandbox is None:
            return command
        return self.sandbox.command(command, dict(self.kernel_environment or {}))

    def _zygote_request(self, kw) -> dict:
        request = {"argv": self._kernel_arguments, "log": self.log_path or os.devnull,
                   "status_file": f"{self.log_path}.status" if self.log_path else
                   str(Path(tempfile.mkdtemp(prefix="autograder-status-")) / "status")}
        if self.sandbox is not None:
            return {**request, "mode": self.sandbox.capability.mode,
                    "spec": str(self.sandbox.base / "spec.json")}
        environment = dict(os.environ)
        environment.update(self.kernel_environment or {})
        return {**request, "mode": "none", "env": environment, "cwd": kw.get("cwd") or os.getcwd(),
                "memory_mb": int(self.memory_mb or 0)}

    async def _async_launch_kernel(self, kernel_cmd, **kw):
        factory = None
        if self.use_zygote:
            environment = zygote_environment()
            shared = shared_zygote.shared_for(environment) if self.sandbox is not None else None
            factory = shared or zygote.zygote_for(environment)
        if factory is not None:
            try:
                process = factory.spawn(self._zygote_request(kw))
            except Exception as error:  # noqa: BLE001 (start it the ordinary way instead)
                self.log.warning("the zygote could not fork a kernel: %s", error)
            else:
                provisioner = self.provisioner
                provisioner.process, provisioner.pid = process, process.pid
                provisioner.pgid, provisioner.cwd = process.pid, kw.get("cwd")
                self.launcher_is_kernel = False
                self._reconcile_connection_info(provisioner.connection_info)
                return
        self.launcher_is_kernel = self.sandbox is None
        kw["preexec_fn"] = processes.die_with_parent
        if self.sandbox is None:
            kw["preexec_fn"] = processes.limited_child(int(self.memory_mb or 0))
            environment = dict(os.environ)
            environment.update(self.kernel_environment or {})
            environment.update(kw.get("env") or {})
            kw["env"] = environment
        if self.log_path:
            log = open(self.log_path, "ab")
            kw["stdout"] = kw["stderr"] = log
        return await super()._async_launch_kernel(kernel_cmd, **kw)


def sandboxed_kernel_manager(work: Path, capability: Capability, *, memory_mb: int,
                             environment: dict[str, str], log_path: str = "",
                             use_zygote: bool = True) -> SandboxKernelManager:
    """A kernel manager whose kernel runs sandboxed, with ``work``'s files in its home."""
    sandbox = Sandbox(work, capability, memory_mb=memory_mb)
    return SandboxKernelManager(
        kernel_name="python3", sandbox=sandbox, kernel_environment=environment,
        transport="ipc", ip=str(sandbox.comm / "kernel"),
        connection_file=str(sandbox.comm / "connection.json"), log_path=log_path,
        use_zygote=use_zygote)


def kernel_processes(km) -> tuple:
    """(the kernel's process, the processes below it), via psutil; (None, []) if gone."""
    import psutil

    process = getattr(getattr(km, "provisioner", None), "process", None)
    if process is None:
        return None, []
    try:
        launched = psutil.Process(process.pid)
        if getattr(km, "launcher_is_kernel", False):
            return launched, launched.children(recursive=True)
        kernels = launched.children()
        if not kernels:
            return None, []
        return kernels[0], kernels[0].children(recursive=True) + kernels[1:]
    except psutil.Error:
        return None, []
