"""The memory an in-place forward allocates (lesson 07's ReLUInPlace and AbsInPlace): writing
into x saves the memory of an output, so forward allocates nothing as large as x, neither a
result computed out of place and copied in (``x.copy_(torch.relu(x))``) nor a temporary in x's
dtype (``torch.sign(x)``) on the way to what it keeps, nor the copy and the int64 positions
that indexing with a boolean mask makes (``x[x < 0] *= -1``: the ``nonzero`` inside the index
kernel, which a dispatch mode never sees, is counted here from the mask; so are the int64
positions ``masked_select``'s kernel makes for every entry of its mask)."""

import itertools

import torch

from ...checks import Spec
from ...errors import GradingError
from ...exercise import sample
from ...probes import AllocationLog


MASK_INDEXING = "boolean-mask indexing"
MASK_SELECT = "masked_select"
_INDEXING = ("index", "index_put", "index_put_", "_index_put_impl_", "_unsafe_index",
             "_unsafe_index_put")


def _fills(name: str, args) -> bool:
    """x[mask] = one value: index_put_ takes masked_fill_'s path, no positions (PyTorch's
    _index_put_impl_ fast path for a lone bool mask and a value of one element)."""
    value = args[2] if len(args) > 2 else None
    return (name != "index" and isinstance(value, torch.Tensor) and value.numel() == 1
            and len(args[1]) == 1 and args[1][0] is not None and args[1][0].dtype == torch.bool)


class SizedAllocationLog(AllocationLog):
    """AllocationLog that also keeps each new tensor's (op, dtype, shape, bytes). Indexing with
    a bool (or uint8) mask runs nonzero inside its kernel: its int64 positions, (count, mask
    dims), are recorded as made by MASK_INDEXING."""

    def __init__(self):
        super().__init__()
        self.made: list[tuple[str, torch.dtype, tuple, int]] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        name = func.overloadpacket.__name__
        if name in _INDEXING and len(args) > 1 and not _fills(name, args):
            for mask in args[1] if isinstance(args[1], (tuple, list)) else ():
                if isinstance(mask, torch.Tensor) and mask.dtype in (torch.bool, torch.uint8):
                    shape = (int(mask.count_nonzero()), max(mask.dim(), 1))
                    self.made.append((MASK_INDEXING, torch.int64, shape, shape[0] * shape[1] * 8))
                    self.bytes += self.made[-1][3]
        if name == "masked_select" and len(args) > 1:
            # the CPU kernel turns the mask, broadcast to x's shape, into int64 positions: 8
            # bytes for every entry of x, selected or not (the profiler's aten::to)
            shape = tuple(torch.broadcast_shapes(args[0].shape, args[1].shape))
            count = int(torch.Size(shape).numel())
            self.made.append((MASK_SELECT, torch.int64, (count,), count * 8))
            self.bytes += self.made[-1][3]
        out = func(*args, **(kwargs or {}))
        results = out if isinstance(out, (tuple, list)) else (out,)
        for returned, value in zip(func._schema.returns, results):
            if isinstance(value, torch.Tensor) and returned.alias_info is None:
                nbytes = value.numel() * value.element_size()
                self.bytes += nbytes
                self.ops.append(func.overloadpacket.__name__)
                self.made.append((self.ops[-1], value.dtype, tuple(value.shape), nbytes))
        return out


def _signs(prepare):
    """The mixed sample, then all negative, then all positive: a copy of the entries of one
    sign (boolean indexing) is as large as x only when every entry has that sign."""
    yield "", prepare
    yield " (every entry negative)", lambda x: -prepare(x).abs() - 1
    yield " (every entry positive)", lambda x: prepare(x).abs() + 1


def check_forward_memory(function, spec: Spec, device, prepare=lambda x: x) -> None:
    """On x of 64 entries (some 0, both signs; then all negative, then all positive), in
    float64, float32, float16 and bfloat16, no tensor forward makes is as large as x in bytes:
    a temporary in x's dtype of x's shape is, and so is an int64 one for float64 x, an int32
    one for float32 x, or an int16 one for a two-byte x (where int8 and bool are not), and so
    are the entries and int64 positions a boolean mask selects when it selects them all."""
    for (signs, prepared), dtype in itertools.product(
            _signs(prepare), (torch.float64, torch.float32, torch.float16, torch.bfloat16)):
        x = prepared(sample((4, 16), device, seed=21, dtype=dtype))
        inner = x.detach().clone().requires_grad_().clone()  # not a leaf: forward may write it
        with SizedAllocationLog() as log:
            function.apply(inner)
        large = [made for made in log.made if made[3] >= x.numel() * x.element_size()]
        masked = [made for made in log.made if made[0] == MASK_INDEXING]
        selected = [made for made in log.made if made[0] == MASK_SELECT]
        if selected and large:
            shape, nbytes = selected[0][2], selected[0][3]
            raise GradingError(
                f"{spec.name}'s forward selects entries of x with masked_select: its kernel "
                f"makes int64 positions for every entry of the mask (shape {shape}, {nbytes} "
                f"bytes, 8 per entry), as large as x itself ({str(dtype)[6:]}, "
                f"{x.numel() * x.element_size()} bytes) on x of shape (4, 16){signs}, besides "
                "the copy of the selected entries: the contract asks forward to allocate "
                "nothing of x's size. Which in-place op writes every entry of x without "
                "selecting any?", mistake=f"{spec.name}/boolean-mask-indexing")
        if masked and large:
            shape, nbytes = masked[0][2], masked[0][3]
            raise GradingError(
                f"{spec.name}'s forward indexes x with a boolean mask (x[mask]): boolean-mask "
                f"indexing copies the selected entries and makes their int64 positions "
                f"(nonzero, shape {shape}, {nbytes} bytes) inside the kernel, as large as x "
                f"itself ({str(dtype)[6:]}, {x.numel() * x.element_size()} bytes) on x of shape "
                f"(4, 16){signs}: the contract asks forward to allocate nothing of x's size. "
                "Which in-place op writes every entry of x without selecting any?",
                mistake=f"{spec.name}/boolean-mask-indexing")
        if large:
            op, made_dtype, shape, nbytes = large[0]
            raise GradingError(
                f"{spec.name}'s forward allocates a tensor of shape {shape} "
                f"({str(made_dtype)[6:]}, {nbytes} bytes, by {op}), as large as x itself "
                f"({str(dtype)[6:]}, {x.numel() * x.element_size()} bytes){signs}: the "
                "contract asks "
                "forward to allocate nothing of x's size, the memory writing in place saves, "
                "for x of every floating dtype. Which op made it, and what could compute the "
                "same without a tensor that large?", mistake=f"{spec.name}/allocates-as-much-as-x")
