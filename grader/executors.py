"""Where jobs run: local worker processes that die with the batch, or a Dask cluster."""

import concurrent.futures
import logging
import multiprocessing
import signal
import sys

from . import processes


def _exit_cleanly(signum, frame) -> None:
    logging.getLogger("asyncio").setLevel(logging.CRITICAL)  # the unfinished cell's tasks
    raise SystemExit(128 + signum)  # unwinds: kernels stopped, temporary folders removed


def _die_with_parent() -> None:
    """Pool initializer: a worker (and so its kernels) dies with the batch, cleaning up."""
    signal.signal(signal.SIGTERM, _exit_cleanly)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    processes.die_with_parent(signal.SIGTERM)


def local_executor(workers: int):
    context = multiprocessing.get_context("fork" if sys.platform.startswith("linux") else "spawn")
    return concurrent.futures.ProcessPoolExecutor(max_workers=workers, mp_context=context,
                                                  initializer=_die_with_parent)


def dask_executor(scheduler: str, workers: int):
    """A concurrent.futures executor on a Dask cluster: ``local`` starts a LocalCluster of
    ``workers`` single-threaded processes; anything else is a scheduler address."""
    from distributed import Client, LocalCluster

    if scheduler == "local":
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                               dashboard_address=None)
        client = Client(cluster)
    else:
        cluster, client = None, Client(scheduler)
    executor = client.get_executor(pure=False)

    def close():
        client.close()
        if cluster is not None:
            cluster.close()

    executor.close = close
    return executor
