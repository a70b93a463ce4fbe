"""Every kernel and server the tests start runs bounded: one compute thread and a memory cap,
so that two pytest workers on a loaded 2-core machine cannot starve each other."""

import os

import nbformat
from nbclient import NotebookClient

from grader import processes

KERNEL_MEMORY_MB = 3072  # a lesson's kernel peaks near 500 MiB of data; a runaway one stops here
THREADS = {name: "1" for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                                  "TORCHINDUCTOR_COMPILE_THREADS")}


def bounded_environment(**extra: str) -> dict[str, str]:
    """This process's environment with the thread bounds (and ``extra``) on top."""
    return {**os.environ, **THREADS, **extra}


def bounded_process():
    """A ``preexec_fn`` for a kernel or server the tests start: dies with the test process and
    may not take more than ``KERNEL_MEMORY_MB`` of data (a server's kernels inherit the cap)."""
    return processes.limited_child(KERNEL_MEMORY_MB)


def run_notebook(notebook: nbformat.NotebookNode, cwd, *, env: dict[str, str] | None = None,
                 **options) -> nbformat.NotebookNode:
    """Execute ``notebook`` in place in a bounded kernel started in ``cwd``; return it."""
    client = NotebookClient(notebook, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(cwd)}}, **options)
    client.execute(env=env or bounded_environment(), preexec_fn=bounded_process())
    return notebook
