"""The rules every process the grader starts follows: die with its parent, no core dumps, a
memory cap, and orphans adopted and reaped. Standard library only: ``sandbox_launch`` loads this
file before anything else exists in a fresh sandbox."""

import ctypes
import resource
import signal

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
LIMITS = {"data": resource.RLIMIT_DATA, "fsize": resource.RLIMIT_FSIZE,
          "core": resource.RLIMIT_CORE, "nproc": resource.RLIMIT_NPROC}

_LIBC = ctypes.CDLL(None)  # loaded now: a preexec_fn must not take locks (dlopen, imports)


def die_with_parent(signum: int = signal.SIGKILL) -> None:
    """This process gets ``signum`` when the process that started it dies."""
    _LIBC.prctl(PR_SET_PDEATHSIG, signum, 0, 0, 0)


def adopt_orphans() -> None:
    """Processes orphaned below this one are re-parented to it (so it can find and reap them)."""
    _LIBC.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def set_limits(limits: dict) -> None:
    """Apply {"data"|"fsize"|"core"|"nproc": bytes or count, or None for no limit}."""
    for name, value in limits.items():
        if value is not None:
            resource.setrlimit(LIMITS[name], (value, value))


def kernel_limits(memory_mb: int) -> dict:
    """The limits of a kernel that runs without a sandbox: no core dumps, and the memory cap."""
    return {"core": 0, "data": memory_mb << 20 if memory_mb else None}


def limited_child(memory_mb: int):
    """A preexec_fn for a kernel without a sandbox: die with the grader, under its limits."""

    def preexec() -> None:
        die_with_parent()
        set_limits(kernel_limits(memory_mb))

    return preexec


def signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"
