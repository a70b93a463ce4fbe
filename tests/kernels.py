"""Every kernel and server the tests start runs bounded: one compute thread and a memory cap,
so that two pytest workers on a loaded 2-core machine cannot starve each other."""

import json
import os
import tempfile
from pathlib import Path

import nbformat
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_core.utils import run_sync
from jupyter_client.manager import AsyncKernelManager
from nbclient import NotebookClient

from grader import processes
from tests.built_once import built_once

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


def write_kernel_spec(kernels: Path, name: str, python: Path, display_name: str,
                      env: dict[str, str] | None = None) -> Path:
    """A kernel spec ``kernels/name`` that starts ``python``'s ipykernel (with ``env`` added)."""
    spec = kernels / name
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": display_name, "language": "python", **({"env": env} if env else {})}))
    return spec


def _kernel_manager(python: Path, specs: Path) -> AsyncKernelManager:
    """A kernel manager that starts ``python``'s ipykernel (another environment's kernel)."""
    spec = write_kernel_spec(specs / "kernels", "other", python, f"Python ({python})")
    return AsyncKernelManager(kernel_name="other",
                              kernel_spec_manager=KernelSpecManager(kernel_dirs=[str(spec.parent)]))


def run_notebook(notebook: nbformat.NotebookNode, cwd, *, env: dict[str, str] | None = None,
                 python: Path | None = None, **options) -> nbformat.NotebookNode:
    """Execute ``notebook`` in place in a bounded kernel started in ``cwd`` (with ``python``'s
    ipykernel when given, else this environment's); return it."""
    with tempfile.TemporaryDirectory(prefix="kernelspec-") as specs:
        if python is not None:
            options["km"] = _kernel_manager(python, Path(specs))
        client = NotebookClient(notebook, timeout=300, kernel_name="python3",
                                resources={"metadata": {"path": str(cwd)}}, **options)
        try:
            client.execute(env=env or bounded_environment(), preexec_fn=bounded_process())
        finally:
            manager = options.get("km")
            if manager is not None and manager.has_kernel:  # nbclient stops only its own
                run_sync(manager.shutdown_kernel)(now=True)
    return notebook


WIDGETS_DEMO = Path(__file__).parent / "data" / "widgets_demo.ipynb"


def executed_widgets_demo(tmp_path_factory) -> Path:
    """The widget demo run as a build runs it (widget state stored, widget ids seeded), once
    per test run: the browser test opens it, the ids test runs it again and compares."""
    def build(folder: Path) -> None:
        notebook = nbformat.read(WIDGETS_DEMO, as_version=4)
        run_notebook(notebook, WIDGETS_DEMO.parent, store_widget_state=True,
                     env=bounded_environment(WIDGETS_SEED="0"))
        nbformat.write(notebook, folder / WIDGETS_DEMO.name)

    return built_once(tmp_path_factory, "executed-widgets-demo", build) / WIDGETS_DEMO.name
