"""The memory an in-place forward allocates (lesson 07's ReLUInPlace and AbsInPlace): writing
into x saves the memory of an output, so forward allocates nothing as large as x, neither a
result computed out of place and copied in (``x.copy_(torch.relu(x))``) nor a temporary in x's
dtype (``torch.sign(x)``) on the way to what it keeps."""

import torch

from ...checks import Spec
from ...errors import GradingError
from ...exercise import sample
from ...probes import AllocationLog


class SizedAllocationLog(AllocationLog):
    """AllocationLog that also keeps each new tensor's (op, dtype, shape, bytes)."""

    def __init__(self):
        super().__init__()
        self.made: list[tuple[str, torch.dtype, tuple, int]] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        results = out if isinstance(out, (tuple, list)) else (out,)
        for returned, value in zip(func._schema.returns, results):
            if isinstance(value, torch.Tensor) and returned.alias_info is None:
                nbytes = value.numel() * value.element_size()
                self.bytes += nbytes
                self.ops.append(func.overloadpacket.__name__)
                self.made.append((self.ops[-1], value.dtype, tuple(value.shape), nbytes))
        return out


def check_forward_memory(function, spec: Spec, device, prepare=lambda x: x) -> None:
    """On x of 64 entries (some 0, both signs), in float64, float32, float16 and bfloat16, no
    tensor forward makes is as large as x in bytes: a temporary in x's dtype of x's shape is,
    and so is an int64 one for float64 x, an int32 one for float32 x, or an int16 one for a
    two-byte x (where int8 and bool are not)."""
    for dtype in (torch.float64, torch.float32, torch.float16, torch.bfloat16):
        x = prepare(sample((4, 16), device, seed=21, dtype=dtype))
        inner = x.detach().clone().requires_grad_().clone()  # not a leaf: forward may write it
        with SizedAllocationLog() as log:
            function.apply(inner)
        large = [made for made in log.made if made[3] >= x.numel() * x.element_size()]
        if large:
            op, made_dtype, shape, nbytes = large[0]
            raise GradingError(
                f"{spec.name}'s forward allocates a tensor of shape {shape} "
                f"({str(made_dtype)[6:]}, {nbytes} bytes, by {op}), as large as x itself "
                f"({str(dtype)[6:]}, {x.numel() * x.element_size()} bytes): the contract asks "
                "forward to allocate nothing of x's size, the memory writing in place saves, "
                "for x of every floating dtype. Which op made it, and what could compute the "
                "same without a tensor that large?", mistake=f"{spec.name}/allocates-as-much-as-x")
