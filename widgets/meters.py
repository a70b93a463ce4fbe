"""Meters for a training step: the bytes autograd keeps for backward, and the FLOPs done."""

from torch.autograd.graph import saved_tensors_hooks
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils.flop_counter import flop_registry


class _Kept:
    """Stands in for a tensor autograd saved, and tells the meter when autograd drops it. It
    holds a detached alias, never the tensor itself: for an op that saves its own output, the
    tensor would lead back here through its node, a loop that is never freed (the rule in
    ``saved_tensors_hooks``'s documentation)."""

    __slots__ = ("tensor", "drop")

    def __init__(self, tensor, drop):
        self.tensor, self.drop = tensor, drop

    def __del__(self):
        self.drop()


class ActivationBytes(saved_tensors_hooks):
    """Counts the bytes autograd keeps for backward, each storage once and parameters never:
    ``now`` at any moment, ``peak`` since entering."""

    def __init__(self, parameters=()):
        self.skip = {p.untyped_storage().data_ptr() for p in parameters}
        self.holders: dict[int, int] = {}
        self.now = self.peak = 0
        super().__init__(self._pack, lambda kept: kept.tensor if isinstance(kept, _Kept)
                         else kept)

    def __enter__(self):
        super().__enter__()
        return self

    def _pack(self, tensor):
        storage = tensor.untyped_storage()
        key = storage.data_ptr()
        if key in self.skip:
            return tensor.detach()
        nbytes = storage.nbytes()
        if not self.holders.get(key):
            self.now += nbytes
            self.peak = max(self.peak, self.now)
        self.holders[key] = self.holders.get(key, 0) + 1
        return _Kept(tensor.detach(), lambda: self._drop(key, nbytes))

    def _drop(self, key: int, nbytes: int) -> None:
        self.holders[key] -= 1
        if not self.holders[key]:
            self.now -= nbytes


class CountFlops(TorchDispatchMode):
    """Adds up the FLOPs of the ops PyTorch has formulas for (matmuls, convolutions).

    Unlike FlopCounterMode it tracks no modules, so a backward that calls
    torch.autograd.grad does not trip it.
    """

    def __init__(self):
        super().__init__()
        self.total = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        output = func(*args, **kwargs)
        formula = flop_registry.get(func.overloadpacket)
        if formula is not None:
            self.total += formula(*args, **kwargs, out_val=output)
        return output
