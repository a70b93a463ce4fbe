"""Lessons 04 and 05: a learner's backward that runs inside itself without end.

Backpropagating a graph that leads back into the Function's own node (a saved output, whose
``grad_fn`` is that node) or calling the Function again inside its backward makes the engine
nest deeper and deeper, on new threads, and the cell hangs; no Python signal can interrupt it,
as the main thread waits in C++. While a battery runs, the learner's class refuses to run its
backward nested ``NESTING_LIMIT`` deep in itself: a correct answer of these lessons nests none.
A class whose backward was stopped keeps the guard: the self-check's gradient explorer runs it
again after the battery, and would hang where the battery did.
"""

from contextlib import contextmanager

from ..errors import GradingError

NESTING_LIMIT = 16  # checkpoint_sequential's wrong "recompute on the saved tensors" nests 7 deep


@contextmanager
def limit_nesting(cls, fix: str):
    """``cls.backward`` raises a GradingError ending in ``fix`` when nested too deep in itself."""
    original = vars(cls).get("backward") if isinstance(cls, type) else None
    if original is None:
        yield
        return
    depth, fired = [0], []

    def backward(ctx, *grad_outputs):
        if depth[0] >= NESTING_LIMIT:
            fired.append(True)
            raise GradingError(
                f"{cls.__name__}.backward ran inside itself {NESTING_LIMIT} levels deep: it "
                f"backpropagates a graph that leads back into {cls.__name__} (a saved output, "
                f"whose grad_fn is this very node, or a new {cls.__name__}.apply), so each "
                f"backward starts another, without end (the cell would hang); {fix}")
        depth[0] += 1
        try:
            return original.__get__(None, cls)(ctx, *grad_outputs)
        finally:
            depth[0] -= 1

    cls.backward = staticmethod(backward)
    try:
        yield
    finally:
        if not fired:  # proven endless: the guard stays, so that what runs the class after the
            cls.backward = original  # battery (the self-check's gradient explorer) ends too
