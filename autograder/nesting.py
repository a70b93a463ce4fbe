"""A backward that starts itself without end stops with an error instead of hanging the kernel.

Backpropagating a graph that leads back into a Function's own node (a saved output, whose
``grad_fn`` is that node) or calling the Function again inside its backward makes the engine
nest deeper and deeper, past 60 levels on new threads, until the machine runs out of memory. No
Python signal can interrupt it: the main thread waits in C++. While ``stopping_endless_backward``
is active, every custom Function's backward refuses to run ``NESTING_LIMIT`` deep inside its own
class: batteries run under it, and the views install it for the whole kernel.
"""

import threading
from contextlib import contextmanager

from torch.autograd.function import BackwardCFunction

from .errors import GradingError

NESTING_LIMIT = 24  # above exercises.shared.reentry's 16, so that its lesson-specific hints come first


class EndlessBackward(GradingError):
    """A custom Function's backward ran ``NESTING_LIMIT`` deep inside its own class."""


_lock = threading.Lock()
_depths: dict[type, int] = {}  # custom Function class -> backwards of it now running
_holders = [0]
_engine_apply = [BackwardCFunction.apply]  # what the engine called before the guard went in


def _guarded_apply(node, *grad_outputs):
    """``BackwardCFunction.apply``, counting how deep each class's backwards are nested."""
    cls = node._forward_cls
    with _lock:
        depth = _depths.get(cls, 0)
        if depth >= NESTING_LIMIT:
            raise EndlessBackward(
                f"{cls.__name__}.backward ran inside itself {NESTING_LIMIT} levels deep, so it "
                f"was stopped before the kernel hung: it backpropagates a graph that leads back "
                f"into {cls.__name__} (a saved output, whose grad_fn is this very node, or a "
                f"new {cls.__name__}.apply), and each backward starts another without end")
        _depths[cls] = depth + 1
    try:
        return _engine_apply[0](node, *grad_outputs)
    finally:
        with _lock:
            _depths[cls] -= 1


def _hold() -> None:
    with _lock:
        if _holders[0] == 0:
            _engine_apply[0] = BackwardCFunction.apply
            BackwardCFunction.apply = _guarded_apply
        _holders[0] += 1


def _release() -> None:
    with _lock:
        _holders[0] -= 1
        if _holders[0] == 0:
            BackwardCFunction.apply = _engine_apply[0]


@contextmanager
def stopping_endless_backward():
    """Within the block, a backward nested ``NESTING_LIMIT`` deep in its own class raises
    ``EndlessBackward``; blocks nest, and the last to leave takes the guard out."""
    _hold()
    try:
        yield
    finally:
        _release()


def install() -> None:
    """Keep the guard in for the rest of this process (a notebook kernel showing views)."""
    _hold()
