"""Worker processes forked from this one (torch and the grader already imported, so a worker
starts in milliseconds), each grading one task at a time. A task past its deadline, or one that
takes its worker down, costs that worker: it is killed and another forked in its place."""

import multiprocessing
import os
import resource
import time
from collections import deque
from collections.abc import Callable, Iterator
from multiprocessing.connection import wait

from grader.processes import die_with_parent

MEMORY_LIMIT = 6 << 30  # bytes of data a worker may hold: a runaway mutant stops here
TASKS_PER_WORKER = 100  # a fresh worker after this many: what mutants leave behind is dropped

TIMED_OUT, DIED = "timed out", "died"


def _serve(connection, work: Callable) -> None:
    die_with_parent()
    resource.setrlimit(resource.RLIMIT_DATA, (MEMORY_LIMIT, MEMORY_LIMIT))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    quiet = os.open(os.devnull, os.O_WRONLY)
    os.dup2(quiet, 1)  # kernels and compilers print from C too
    os.dup2(quiet, 2)
    while (task := connection.recv()) is not None:
        connection.send(work(task))


class _Worker:
    def __init__(self, work: Callable):
        context = multiprocessing.get_context("fork")
        self.connection, child = context.Pipe()
        self.process = context.Process(target=_serve, args=(child, work), daemon=True)
        self.process.start()
        child.close()
        self.done = 0
        self.task: tuple[int, object, float] | None = None  # (index, task, deadline)

    def give(self, index: int, task, seconds: float) -> None:
        self.connection.send(task)
        self.task = (index, task, time.monotonic() + seconds)

    def stop(self, kill: bool = False) -> None:
        if kill:
            self.process.kill()
        else:
            self.connection.send(None)
        self.process.join()
        self.connection.close()


def run(tasks: list, work: Callable, workers: int,
        timeout: Callable[[object], float]) -> Iterator[tuple[int, object]]:
    """Yield (index, work(task)) as each task finishes, or (index, TIMED_OUT or DIED)."""
    pending = deque(enumerate(tasks))
    idle = [_Worker(work) for _ in range(min(workers, len(tasks)))]
    busy: dict = {}
    while pending or busy:
        while idle and pending:
            worker = idle.pop()
            index, task = pending.popleft()
            worker.give(index, task, timeout(task))
            busy[worker.connection] = worker
        deadline = min(worker.task[2] for worker in busy.values())
        for connection in wait(list(busy), timeout=max(0.0, deadline - time.monotonic())):
            worker = busy.pop(connection)
            try:
                result = connection.recv()
            except (EOFError, ConnectionError):
                result = DIED
            yield worker.task[0], result
            idle.append(_recycled(worker, work, died=result is DIED))
        for connection, worker in list(busy.items()):
            if time.monotonic() > worker.task[2]:
                del busy[connection]
                yield worker.task[0], TIMED_OUT
                worker.stop(kill=True)
                idle.append(_Worker(work))
    for worker in idle:
        worker.stop()


def _recycled(worker: _Worker, work: Callable, died: bool) -> _Worker:
    worker.done += 1
    if died or worker.done >= TASKS_PER_WORKER:
        worker.stop(kill=True)
        return _Worker(work)
    return worker
