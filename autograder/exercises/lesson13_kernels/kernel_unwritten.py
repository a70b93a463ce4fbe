"""Lesson 13: memory no kernel wrote. A buffer from torch.empty holds whatever its memory held
before (often zeros on a fresh page, sometimes the last tensor's values), so an answer that
reads one before a kernel writes it (partial rows summed although no program ran) passes or
fails by chance. While ``poisoned_allocations`` is on, every floating tensor that
empty, empty_like, empty_strided or new_empty allocates, the learner's operators' included, is
filled with ``value`` (NaN by default): such a read then fails every time, and
``reads_unwritten`` names it from two fillings that give different results."""

import math
from contextlib import contextmanager

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

from .kernel_checks import NAMESPACE

_EMPTY = frozenset({"empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided"})


class _Poisoned(TorchDispatchMode):
    """Fills what the empty-family ops return; looks inside the course's custom operators (run
    below the Python key with this mode still on), as kernel_checks' launch probe does."""

    def __init__(self, value: float):
        super().__init__()
        self.value = value

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func.namespace == NAMESPACE:
            tensors = [t for t in tree_leaves((args, kwargs)) if isinstance(t, torch.Tensor)]
            cuda = any(t.device.type == "cuda" for t in tensors)
            keys = torch._C.DispatchKeySet(torch._C.DispatchKey.CUDA if cuda
                                           else torch._C.DispatchKey.CPU)
            with self:
                return func.redispatch(keys, *args, **kwargs)
        result = func(*args, **kwargs)
        if (func.namespace == "aten" and func.overloadpacket.__name__ in _EMPTY
                and isinstance(result, torch.Tensor) and result.is_floating_point()
                and result.device.type in ("cpu", "cuda") and type(result) is torch.Tensor):
            result.fill_(self.value)
        return result


@contextmanager
def poisoned_allocations(value: float = math.nan):
    """Every floating tensor the empty family allocates inside the block is filled with
    ``value``: an answer that reads memory before any kernel wrote it reads that."""
    with _Poisoned(value):
        yield


def reads_unwritten(results) -> bool:
    """Whether ``results()`` (a call's output and gradients) differs when fresh buffers are
    filled with 1 and when they are filled with 2: it read memory that no kernel wrote."""
    try:
        with poisoned_allocations(1.0):
            ones = [t.detach().clone() for t in results()]
        with poisoned_allocations(2.0):
            twos = [t.detach().clone() for t in results()]
    except Exception:  # noqa: BLE001 -- a probe: the battery's own message stands
        return False
    return any(a.shape == b.shape and not torch.allclose(a, b, rtol=0, atol=0, equal_nan=True)
               for a, b in zip(ones, twos))
