"""Build an expensive test fixture once per test run, whichever worker asks first.

pytest-xdist workers share the parent of their base temporary folder (a run without workers
keeps it in its own base folder: the parent then is every run's); the first worker to ask
for ``key`` builds it there under a file lock, and every later request (from any worker, or
from the same worker after pytest tore a module-scoped fixture down) reuses the finished folder;
a build that failed is not tried again in that run: later requests fail at once, saying why.
"""

import os
from collections.abc import Callable
from pathlib import Path

from filelock import FileLock


def built_once(tmp_path_factory, key: str, build: Callable[[Path], None],
               timeout: float = 1800) -> Path:
    """The folder ``key``, filled by ``build(folder)`` once in the whole test run."""
    base = tmp_path_factory.getbasetemp()
    shared = (base.parent if "PYTEST_XDIST_WORKER" in os.environ else base) / "built-once"
    shared.mkdir(exist_ok=True)
    folder, done, failed = shared / key, shared / f"{key}.done", shared / f"{key}.failed"
    with FileLock(str(shared / f"{key}.lock"), timeout=timeout):
        if failed.exists():  # building it again would fail again, and take as long
            raise RuntimeError(f"building {key} failed earlier in this run: {failed.read_text()}")
        if not done.exists():
            folder.mkdir()
            try:
                build(folder)
            except BaseException as error:
                failed.write_text(f"{type(error).__name__}: {error}")
                raise
            done.touch()
    return folder
