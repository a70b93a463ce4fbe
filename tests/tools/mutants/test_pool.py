"""Forked workers: a result comes back; a task past its deadline or one that kills its worker
is reported as such, and the other tasks still run."""

import os
import time

from tools.mutants import pool


def _work(task):
    if task == "sleep":
        time.sleep(60)
    if task == "die":
        os._exit(3)
    return task * 2


def test_results_timeouts_and_deaths_come_back_by_index():
    """Does each task's outcome come back under its own index, whatever the others did?"""
    tasks = [1, "sleep", 2, "die", 3]
    started = time.monotonic()
    results = dict(pool.run(tasks, _work, workers=2, timeout=lambda task: 2.0))
    assert results == {0: 2, 1: pool.TIMED_OUT, 2: 4, 3: pool.DIED, 4: 6}
    assert time.monotonic() - started < 30
