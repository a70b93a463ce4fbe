"""Lesson 13: two programs of one kernel launch storing to one address, seen in Triton's
interpreter. The interpreter runs a launch's programs one after the other, so a
read-modify-write shared between programs gives the right sum on CPU; a GPU runs them at once."""

from contextlib import contextmanager

import numpy as np

from ...errors import GradingError


@contextmanager
def shared_stores(name: str):
    """Inside the block, note the first address that two programs of one launch store to (in
    a launch with no atomic operation: Triton's layer-norm tutorial shares rows behind a
    lock); on leaving without an error, refuse it."""
    from triton.runtime import interpreter

    builder, executor = interpreter.InterpreterBuilder, interpreter.GridExecutor
    originals = (executor._init_args_hst, builder.create_masked_store,
                 builder.create_atomic_cas, builder.create_atomic_rmw)
    init, store, cas, rmw = originals
    owners, atomic, found = {}, [], []

    def init_args(self, *args):
        owners.clear()
        atomic.clear()
        return init(self, *args)

    def masked_store(self, ptrs, value, mask, *rest):
        if not atomic and not found:
            on = np.broadcast_to(mask.data.astype(bool), ptrs.data.shape)
            for address in np.unique(ptrs.data[on]).tolist():
                if owners.setdefault(address, self.grid_idx) != self.grid_idx:
                    found.append((owners[address][0], self.grid_idx[0]))
                    break
        return store(self, ptrs, value, mask, *rest)

    def noted(original):
        def run(self, *args):
            atomic.append(True)
            return original(self, *args)
        return run

    (executor._init_args_hst, builder.create_masked_store, builder.create_atomic_cas,
     builder.create_atomic_rmw) = init_args, masked_store, noted(cas), noted(rmw)
    try:
        yield
    finally:
        (executor._init_args_hst, builder.create_masked_store, builder.create_atomic_cas,
         builder.create_atomic_rmw) = originals
    if found:
        first, second = found[0]
        raise GradingError(
            f"{name}: programs {first} and {second} of one kernel launch store to the same "
            "address (most likely a read-modify-write of one shared row: tl.load, add, "
            "tl.store): a race. Triton's interpreter runs the programs one after the other, so "
            "on CPU the sum comes out right; a GPU runs them at once, and one program's update "
            "can overwrite another's. Give each program its own row of partials and sum them "
            "afterwards (or add with tl.atomic_add: no update is lost, though the order of the "
            "additions varies from run to run)", mistake=f"{name}/shared-row-race")
