"""Lesson 13: two programs of one kernel launch storing to one address, seen in Triton's
interpreter. The interpreter runs a launch's programs one after the other, so a
read-modify-write shared between programs gives the right sum on CPU; a GPU runs them at once.

A spin lock (Triton's layer-norm tutorial: ``while tl.atomic_cas(lock, 0, 1) == 1: pass``, the
shared row updated, ``tl.debug_barrier()``, ``tl.atomic_xchg(lock, 0)``) is checked as a GPU
would run it: every program but the launch's first finds its lock taken on its first
compare-and-swap (another program got there first: the swap is refused and returns the value
that program wrote), so a program that goes on without retrying is seen storing to the shared
row without holding the lock. Two programs' stores to one address must both be made holding
one lock, and a lock must not be released after such a store before ``tl.debug_barrier()``.

rms_norm_rows's contract rules out atomic adds (the course's design: per-program partial sums
reduced afterwards): an atomic read-modify-write other than a lock's exchange
(``tl.atomic_add`` above all) is refused there."""

from contextlib import contextmanager

import numpy as np

from ...errors import GradingError

ATOMICS_REFUSED = frozenset({"rms_norm_rows"})  # whose contract asks for partials, not atomics


class _Launch:
    """What the programs of one launch stored, and the locks each holds."""

    def __init__(self):
        self.owners, self.found, self.unsynced = {}, [], []
        self.atomic = self.cas = self.added = False
        self.program, self.held, self.stored, self.faked = None, {}, False, set()

    def enter(self, program) -> None:
        if program != self.program:  # the interpreter runs one program to its end, then the next
            self.program, self.held, self.stored = program, {}, False

    def store(self, addresses) -> None:
        self.stored = self.stored or bool(self.held)
        locks = frozenset(self.held)
        for address in addresses:
            first, common, shared = self.owners.get(address, (self.program, locks, False))
            shared = shared or first != self.program
            common = common & locks
            self.owners[address] = (first, common, shared)
            if shared and not common and not self.found:
                self.found.append((first[0], self.program[0]))

    def race(self):
        """The first two programs storing to one address unguarded, when the launch has no
        atomic operation or takes a lock (tl.atomic_add alone may share addresses)."""
        return self.found[0] if self.found and (self.cas or not self.atomic) else None


def _scalar(handle):
    data = np.asarray(handle.data)
    return data.reshape(-1)[0].item() if data.size == 1 else None


@contextmanager
def shared_stores(name: str):
    """Inside the block, note the first address that two programs of one launch store to (in
    a launch with no atomic operation, or one taking a lock, where both stores must hold it),
    and a lock released after a store with no tl.debug_barrier(); on leaving without an
    error, refuse them."""
    from triton.runtime import interpreter

    builder, executor = interpreter.InterpreterBuilder, interpreter.GridExecutor
    originals = (executor._init_args_hst, builder.create_masked_store,
                 builder.create_atomic_cas, builder.create_atomic_rmw, builder.create_barrier)
    init, store, cas, rmw, barrier = originals
    launch, races, unsynced, added = [_Launch()], [], [], []

    def finish():
        if launch[0].added and not added:
            added.append(True)
        if launch[0].race() and not races:
            races.append(launch[0].race() + (launch[0].cas,))
        unsynced.extend(launch[0].unsynced[:1])

    def init_args(self, *args):
        finish()
        launch[0] = _Launch()
        return init(self, *args)

    def masked_store(self, ptrs, value, mask, *rest):
        now = launch[0]
        now.enter(self.grid_idx)
        on = np.broadcast_to(mask.data.astype(bool), ptrs.data.shape)
        now.store(np.unique(ptrs.data[on]).tolist())
        return store(self, ptrs, value, mask, *rest)

    def atomic_cas(self, ptr, compare, value, *rest):
        now = launch[0]
        now.enter(self.grid_idx)
        now.atomic = now.cas = True
        address, free, taken = _scalar(ptr), _scalar(compare), _scalar(value)
        if address is not None and self.grid_idx != (0, 0, 0) \
                and (self.grid_idx, address) not in now.faked:
            now.faked.add((self.grid_idx, address))  # another program holds it: refused
            return interpreter.TensorHandle(np.full_like(np.asarray(compare.data), taken),
                                            compare.dtype.scalar)
        result = cas(self, ptr, compare, value, *rest)
        if address is not None and _scalar(result) == free and taken != free:
            now.held[address] = free
        return result

    def atomic_rmw(self, op, ptr, value, *rest):
        now = launch[0]
        now.enter(self.grid_idx)
        now.atomic = True
        address = _scalar(ptr)
        now.added = now.added or op != interpreter._ir.ATOMIC_OP.XCHG
        if op == interpreter._ir.ATOMIC_OP.XCHG and address in now.held:
            if now.stored and not now.unsynced:
                now.unsynced.append(self.grid_idx[0])
            del now.held[address]
        return rmw(self, op, ptr, value, *rest)

    def synced(self):
        launch[0].enter(self.grid_idx)
        launch[0].stored = False
        return barrier(self)

    (executor._init_args_hst, builder.create_masked_store, builder.create_atomic_cas,
     builder.create_atomic_rmw, builder.create_barrier) = (init_args, masked_store, atomic_cas,
                                                           atomic_rmw, synced)
    try:
        yield
        finish()
    finally:
        (executor._init_args_hst, builder.create_masked_store, builder.create_atomic_cas,
         builder.create_atomic_rmw, builder.create_barrier) = originals
    if added and name in ATOMICS_REFUSED:
        raise GradingError(
            f"{name}'s kernel adds into shared memory with an atomic operation (tl.atomic_add): "
            "the contract's weight gradient uses no atomic adds (the course's design: "
            "per-program partial sums reduced afterwards). Atomic adds lose no update, but a "
            "GPU applies them in whatever order the programs arrive, and a float sum's last "
            "bits depend on that order: the gradient changes from run to run, and every "
            "program waits on the same addresses. Let each program store its own partial row "
            "with tl.store, and add the partial rows up afterwards (the same bits every run, "
            "no contention)",
            mistake=f"{name}/atomic-add")
    if races and races[0][2]:
        first, second, _ = races[0]
        raise GradingError(
            f"{name}: programs {first} and {second} of one kernel launch store to the same "
            "address, and not both holding one lock: a race. On a GPU a program's "
            "tl.atomic_cas(lock, 0, 1) can find the lock taken (it returns 1 and changes "
            "nothing), and the grader makes it so on each program's first try: a program must "
            "loop until its own swap succeeds (while tl.atomic_cas(lock, 0, 1) == 1: pass), "
            "and release with tl.atomic_xchg(lock, 0), the value the next swap compares with",
            mistake=f"{name}/lock-not-held")
    if races:
        first, second, _ = races[0]
        raise GradingError(
            f"{name}: programs {first} and {second} of one kernel launch store to the same "
            "address (most likely a read-modify-write of one shared row: tl.load, add, "
            "tl.store): a race. Triton's interpreter runs the programs one after the other, so "
            "on CPU the sum comes out right; a GPU runs them at once, and one program's update "
            "can overwrite another's. Give each program its own row of partials and sum them "
            "afterwards (or add with tl.atomic_add: no update is lost, though the order of the "
            "additions varies from run to run)", mistake=f"{name}/shared-row-race")
    if unsynced:
        raise GradingError(
            f"{name}: program {unsynced[0]} releases its lock (tl.atomic_xchg) after storing "
            "to the shared row with no tl.debug_barrier() in between: a GPU program's threads "
            "store their lanes independently, so the lock can be free before every lane's "
            "store has landed, and the next program reads a stale row. Call tl.debug_barrier() "
            "before releasing the lock (as Triton's layer-norm tutorial does)",
            mistake=f"{name}/lock-released-before-barrier")
