"""The op log of a backward: every op dispatched, and each built-in aten ``*_backward`` op
called through torch.ops that decomposes before a TorchDispatchMode sees it
(CompositeImplicitAutograd, such as index_select_backward or cummaxmin_backward), so that a
backward calling one is seen to."""

import functools

import torch
from torch.utils._python_dispatch import TorchDispatchMode

_CALLABLES = (torch._ops.OpOverload, torch._ops.OpOverloadPacket)


@functools.cache
def _composite_backward_name(op) -> str | None:
    """The name of ``op`` (an OpOverload or OpOverloadPacket) when it is an aten ``*_backward``
    op that decomposes before a dispatch mode sees it, else None."""
    packet = getattr(op, "overloadpacket", op)
    name = packet._qualified_op_name
    if not name.startswith("aten::") or "backward" not in name:
        return None
    overloads = [op] if packet is not op else [getattr(packet, o) for o in packet.overloads()]
    composite = any(o.has_kernel_for_dispatch_key(torch._C.DispatchKey.CompositeImplicitAutograd)
                    for o in overloads)
    return packet.__name__ if composite else None


class OpLog(TorchDispatchMode):
    """``ops``: the name of every op dispatched while the mode is active, and of every composite
    aten ``*_backward`` op called through torch.ops then (the mode sees only what it decomposes
    to); torch.ops' call methods are wrapped while the mode is active, and put back after."""

    def __init__(self):
        super().__init__()
        self.ops: list[str] = []
        self._originals = {}

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops.append(func.overloadpacket.__name__)
        return func(*args, **(kwargs or {}))

    def __enter__(self):
        ops = self.ops

        def recording(original):
            def __call__(op, /, *args, **kwargs):
                if (name := _composite_backward_name(op)) is not None:
                    ops.append(name)
                return original(op, *args, **kwargs)
            return __call__

        self._originals = {cls: cls.__call__ for cls in _CALLABLES}
        for cls, original in self._originals.items():
            cls.__call__ = recording(original)
        return super().__enter__()

    def __exit__(self, *exc):
        try:
            return super().__exit__(*exc)
        finally:
            for cls, original in self._originals.items():
                cls.__call__ = original
