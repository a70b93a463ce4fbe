"""Live-tensor accounting: what a Function allocates while it runs.

``TensorAccounting`` is a dispatch mode that sees every op (forward and backward alike, on any
device). For each op it records the tensors that own *new* memory (not views, not in-place
results), keeps their storage bytes while they are alive, and so knows the peak of live bytes,
the largest tensor created, and every matrix product with its shapes. Where ``probes`` records
what a Function *saved*, this records what it *created*: FlashAttention's point is that its
peak stays small even though it works on an ``Lq x Lk`` problem. ``kept_bytes`` is the
lessons' own measure of what autograd keeps for backward.
"""

import gc
from collections.abc import Callable
from dataclasses import dataclass, field

import torch
from torch.autograd.graph import saved_tensors_hooks
from torch.multiprocessing.reductions import StorageWeakRef
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

# matrix products and where their two factors sit among the op's arguments
_MATMULS = {"mm": 0, "bmm": 0, "addmm": 1, "baddbmm": 1, "addbmm": 1}


@dataclass(frozen=True)
class Product:
    """One matrix product: (..., rows, inner) @ (..., inner, cols)."""

    rows: int
    inner: int
    cols: int
    batch: int  # how many such products the op did at once

    @property
    def outputs(self) -> int:
        return self.batch * self.rows * self.cols


@dataclass
class Allocation:
    shape: tuple
    dtype: torch.dtype
    op: str

    @property
    def numel(self) -> int:
        n = 1
        for size in self.shape:
            n *= size
        return n


@dataclass
class Accounting:
    """What one phase (e.g. a forward) allocated."""

    peak: int = 0  # bytes of live tensors at the worst moment, beyond what lived before
    largest: Allocation | None = None
    products: list[Product] = field(default_factory=list)
    ops: list[str] = field(default_factory=list)
    shapes: set = field(default_factory=set)  # the shape of every tensor created


class TensorAccounting(TorchDispatchMode):
    """``with TensorAccounting() as books:`` then ``books.phase`` (an ``Accounting``).

    Call ``books.start(name)`` to begin a new phase; tensors still alive from an earlier phase
    count towards the live bytes of the next one, as they occupy memory then too."""

    def __init__(self):
        super().__init__()
        self.live: dict[int, tuple[StorageWeakRef, int]] = {}
        self.now = 0
        self.phases: dict[str, Accounting] = {}
        self.phase = self.start("all")

    def start(self, name: str) -> Accounting:
        self._sweep()
        self.phase = self.phases[name] = Accounting()
        self._base = self.now
        return self.phase

    def live_bytes(self) -> int:
        """Bytes of the tensors created under the mode that are alive now. Read this rather
        than ``now`` between ops: memory freed since the last op is only swept at the next."""
        self._sweep()
        return self.now

    def _sweep(self) -> None:
        for key in [k for k, (ref, _) in self.live.items() if ref.expired()]:
            self.now -= self.live.pop(key)[1]

    def _record(self, func, out) -> None:
        returns = func._schema.returns
        aliasing = any(r.alias_info is not None for r in returns)
        for tensor in tree_flatten(out)[0]:
            if not isinstance(tensor, torch.Tensor) or aliasing or tensor.numel() == 0:
                continue
            try:
                storage = tensor.untyped_storage()
            except (RuntimeError, NotImplementedError):  # e.g. tensors without storage
                continue
            key = storage.data_ptr()
            if key in self.live:  # a view of something already counted (_unsafe_view, ...)
                continue
            self.live[key] = (StorageWeakRef(storage), storage.nbytes())
            self.now += storage.nbytes()
            self.phase.shapes.add(tuple(tensor.shape))
            largest = self.phase.largest
            if largest is None or tensor.numel() > largest.numel:
                self.phase.largest = Allocation(tuple(tensor.shape), tensor.dtype,
                                                func.overloadpacket.__name__)
        self.phase.peak = max(self.phase.peak, self.now - self._base)

    def _product(self, func, args) -> None:
        position = _MATMULS.get(func.overloadpacket.__name__)
        if position is None:
            return
        a, b = args[position], args[position + 1]
        batch = a.shape[0] if a.dim() == 3 and func.overloadpacket.__name__ != "addbmm" else 1
        self.phase.products.append(Product(a.shape[-2], a.shape[-1], b.shape[-1], batch))

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        self._sweep()
        self.phase.ops.append(func.overloadpacket.__name__)
        self._product(func, args)
        self._record(func, out)
        return out


def _warm_matrix_products(device) -> None:
    """cuBLAS takes a 32 MiB workspace at a thread's first product on a device (the caller's
    and autograd's backward thread each): taken here, it is no step's peak."""
    leaf = torch.ones(2, 2, device=device, requires_grad=True)
    (leaf @ leaf).sum().backward()


def cuda_peak(step, device) -> int:
    """Bytes allocated on a CUDA ``device`` at the peak of ``step()``, above what was allocated
    before it (``torch.cuda.max_memory_allocated``)."""
    _warm_matrix_products(device)
    torch.cuda.synchronize(device)
    torch.cuda.reset_peak_memory_stats(device)
    base = torch.cuda.memory_allocated(device)
    step()
    torch.cuda.synchronize(device)
    return torch.cuda.max_memory_allocated(device) - base


def kept_bytes(f, *args) -> int:
    """Bytes autograd keeps for backward while ``f(*args)`` runs: each piece of memory packed by
    a saved-tensor hook counted once, the tensor arguments left out (the caller holds them)."""
    own = {a.untyped_storage().data_ptr() for a in args if isinstance(a, torch.Tensor)}
    kept = {}

    def pack(tensor):
        key = tensor.untyped_storage().data_ptr()
        if key not in own:
            kept[key] = tensor.untyped_storage().nbytes()
        return tensor.detach()  # not the tensor itself: a saved output would hold its own graph

    with saved_tensors_hooks(pack, lambda tensor: tensor):
        f(*args)
    return sum(kept.values())


def survivors(find: Callable[[], object]):
    """``find()``, once the garbage collector has run where it finds anything: a reference
    cycle (a ctx that refers to its own output, say) is freed only by the collector, which
    takes half a second in a process that has imported torch, so it runs only when needed."""
    found = find()
    if found:
        gc.collect()
        found = find()
    return found
