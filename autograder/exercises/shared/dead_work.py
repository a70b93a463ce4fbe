"""Work backward did that no returned gradient holds: an op whose result reaches neither a
gradient backward returned nor a number Python read (a branch), such as a copy of grad_output
made for a gradient nobody asked for."""

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from .backward_reads import SHAPE_ONLY

# ops that hand a value to Python (an `if`, a `.item()`): their inputs decided something
_TO_PYTHON = frozenset({"_local_scalar_dense", "is_nonzero", "equal"})


def _storages(values) -> set[int]:
    found = set()
    for value in values:
        for tensor in value if isinstance(value, (list, tuple)) else (value,):
            if isinstance(tensor, torch.Tensor):
                found.add(tensor.untyped_storage().data_ptr())
    return found


class OpsFlow(TorchDispatchMode):
    """Every op run inside the block (views and shape reads aside), with the earlier ops whose
    results it read: results are followed by storage, so that in-place writes chain."""

    def __init__(self):
        super().__init__()
        self.ops: list[tuple[str, tuple, set[int]]] = []  # (name, result shape, read ops)
        self.writer: dict[int, int] = {}  # storage -> the last op that wrote it

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        result = func(*args, **kwargs)
        name = func.overloadpacket.__name__
        if func.is_view or name in SHAPE_ONLY:
            return result
        reads = {self.writer[s] for s in _storages((*args, *kwargs.values())) if s in self.writer}
        shape = tuple(result.shape) if isinstance(result, torch.Tensor) else ()
        self.ops.append((name, shape, reads))
        for storage in _storages((result,)):
            self.writer[storage] = len(self.ops) - 1
        return result

    def unused(self, returned) -> list[tuple[str, tuple]]:
        """The ops none of whose results reach ``returned`` or a value handed to Python."""
        live = [self.writer[s] for s in _storages(returned) if s in self.writer]
        live += [i for i, (name, _, _) in enumerate(self.ops) if name in _TO_PYTHON]
        reached = set()
        while live:
            op = live.pop()
            if op not in reached:
                reached.add(op)
                live.extend(self.ops[op][2])
        return [(name, shape) for i, (name, shape, _) in enumerate(self.ops)
                if i not in reached]


def unused_backward_work(output, grad_output) -> list[tuple[str, tuple]]:
    """Call the backward of ``output``'s node (the learner's own, nothing of the engine's)
    on ``grad_output``; the ops it ran whose results it did not return."""
    with OpsFlow() as flow:
        returned = output.grad_fn.apply(grad_output)
    return flow.unused(returned if isinstance(returned, tuple) else (returned,))
