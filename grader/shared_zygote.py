"""One zygote for many grading processes: a batch's workers, or every grading command a test
run starts, import torch once instead of once each.

``shared_zygote(environment)`` starts a zygote (``grader.zygote``'s imports and forks) that
listens on an abstract Unix socket, and names the socket in ``SOCKET_VARIABLE`` for the
processes started inside it. A grading process takes its sandboxed kernels from there when the
name carries the key of the environment its own zygote would import in (``shared_for``), and
starts its own zygote otherwise. Only sandboxed kernels come from a shared zygote: each is in
PID and network namespaces of its own, so it neither needs the grading process as its
subreaper nor can reach the socket (an abstract socket lives in the network namespace it was
made in); the zygote refuses a kernel without a sandbox.
"""

import contextlib
import hashlib
import json
import os
import secrets
import select
import socket
import subprocess
import sys

from . import processes
from .zygote import START_TIMEOUT, ForkedKernel, fork_supervisor, preload

SOCKET_VARIABLE = "GRADER_ZYGOTE_SOCKET"
SANDBOXED = ("root", "userns")


def environment_key(environment: dict[str, str]) -> str:
    return hashlib.sha256(json.dumps(sorted(environment.items())).encode()).hexdigest()[:16]


def _serve(name: str) -> None:
    error = preload()
    if error is not None:
        print(json.dumps({"error": error}), flush=True)
        return
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind("\0" + name)
    listener.listen(64)
    print(json.dumps({"ready": os.getpid()}), flush=True)
    while True:
        connection, _ = listener.accept()
        with connection, connection.makefile("rw") as stream:
            line = stream.readline()
            if not line:
                continue
            request = json.loads(line)
            if request.get("mode") not in SANDBOXED:
                reply = {"error": "a shared zygote forks sandboxed kernels only"}
            else:
                reply = {"pid": fork_supervisor(request)}
            stream.write(json.dumps(reply) + "\n")


class SharedZygote:
    """A grading process's handle on a shared zygote (the ``spawn`` of ``zygote.Zygote``)."""

    def __init__(self, name: str):
        self.name = name

    def spawn(self, request: dict) -> ForkedKernel:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
            connection.settimeout(30)
            connection.connect("\0" + self.name)
            with connection.makefile("rw") as stream:
                stream.write(json.dumps(request) + "\n")
                stream.flush()
                reply = json.loads(stream.readline() or '{"error": "no answer"}')
        if "pid" not in reply:
            raise RuntimeError(f"the shared kernel zygote could not fork: {reply}")
        return ForkedKernel(reply["pid"], request["status_file"])


def shared_for(environment: dict[str, str]) -> SharedZygote | None:
    """The shared zygote this process was started under, if it imported in ``environment``."""
    name = os.environ.get(SOCKET_VARIABLE, "")
    return SharedZygote(name) if name.endswith(f"-{environment_key(environment)}") else None


@contextlib.contextmanager
def shared_zygote(environment: dict[str, str]):
    """Inside, the grading processes started from here share one zygote importing in
    ``environment`` (one already shared is kept); where it cannot start, each starts its own."""
    if os.environ.get(SOCKET_VARIABLE):
        yield
        return
    name = f"autograder-zygote-{secrets.token_hex(8)}-{environment_key(environment)}"
    zygote = subprocess.Popen(
        [sys.executable, "-I", "-m", "grader.shared_zygote", name], stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, env=environment, preexec_fn=processes.die_with_parent, cwd="/",
        text=True)
    ready, _, _ = select.select([zygote.stdout], [], [], START_TIMEOUT)
    started = ready and "ready" in json.loads(zygote.stdout.readline() or "{}")
    if started:
        os.environ[SOCKET_VARIABLE] = name
    try:
        yield
    finally:
        if started:
            del os.environ[SOCKET_VARIABLE]
        zygote.kill()
        zygote.wait()
        zygote.stdout.close()


if __name__ == "__main__":
    _serve(sys.argv[1])
