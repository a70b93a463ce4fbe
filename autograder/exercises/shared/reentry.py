"""Lessons 04 and 05: a learner's backward that runs inside itself without end.

Backpropagating a graph that leads back into the Function's own node (a saved output, whose
``grad_fn`` is that node) or calling the Function again inside its backward makes the engine
nest deeper and deeper, on new threads, and the cell hangs; no Python signal can interrupt it,
as the main thread waits in C++. While a battery runs, the learner's class refuses to run its
backward nested ``NESTING_LIMIT`` deep in itself, with a hint that names this lesson's fix: a
correct answer of these lessons nests none. ``autograder.nesting`` stops every class a little
deeper, with a general hint, in every battery and view.
"""

from contextlib import contextmanager

from ...errors import GradingError

NESTING_LIMIT = 16  # checkpoint_sequential's wrong "recompute on the saved tensors" nests 7 deep


@contextmanager
def limit_nesting(cls, fix: str):
    """``cls.backward`` raises a GradingError ending in ``fix`` when nested too deep in itself."""
    original = vars(cls).get("backward") if isinstance(cls, type) else None
    if original is None:
        yield
        return
    depth = [0]

    def backward(ctx, *grad_outputs):
        if depth[0] >= NESTING_LIMIT:
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

    backward.__wrapped__ = original.__get__(None, cls)  # probes inspect.unwrap to the answer's
    cls.backward = staticmethod(backward)
    try:
        yield
    finally:
        cls.backward = original
