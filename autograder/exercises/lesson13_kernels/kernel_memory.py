"""Lesson 13: the memory a kernel touches, seen in Triton's interpreter. Every masked load and
store is checked against the storages of the launch's tensors before it happens (on CPU an
access outside them touches memory nobody owns), and each refusal is kept, with the tensor it
went past, for the probes that name why. A masked load without ``other=`` fills its masked-off
lanes with NaN (a GPU leaves them undefined; the interpreter would give 0), so that such lanes
reaching a result, through tl.sum say, show."""

import re
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

import numpy as np
import torch

from ...errors import GradingError
from .kernel_interpreter import interpreting
from .kernel_races import shared_stores


@dataclass(frozen=True)
class Refusal:
    """An access refused: ``what`` ("reads" or "writes"), and the launch's tensor it lies past
    the end of (the nearest below it), by its number of elements (0: below every tensor)."""

    what: str
    past_numel: int
    expanded: bool = False  # inside the flat extent of a stride-0 (expanded) tensor argument
    backward: bool = False  # during autograd's backward pass


_NAN = re.compile(r"\bnan\b", re.IGNORECASE)


def undefined_lanes(ptrs):
    """``other`` for a masked load that gave none: NaN in a floating dtype (bfloat16 is kept
    as uint16 bits by the interpreter), None (the interpreter's 0) otherwise."""
    from triton.runtime import interpreter
    import triton.language as tl

    dtype = ptrs.get_element_ty()
    if dtype == tl.bfloat16:
        data = np.full(ptrs.data.shape, 0x7FC0, dtype=np.uint16)
    elif dtype in (tl.float16, tl.float32, tl.float64):
        data = np.full(ptrs.data.shape, np.nan, dtype=interpreter._get_np_dtype(dtype))
    else:
        return None
    return interpreter.TensorHandle(data, dtype)


def _undefined_lanes_seen(error) -> bool:
    """A failure that NaN from masked-off lanes explains: a non-finite output or gradient, or an
    unnamed failure that shows a nan."""
    mistake = getattr(error, "mistake", "") or ""
    if mistake.endswith(("/non-finite-output", "/non-finite-gradient")):
        return True
    return not mistake and bool(_NAN.search(str(error)))


_REFUSALS: ContextVar[list | None] = ContextVar("lesson13_refusals", default=None)


def refusals() -> list[Refusal]:
    """The accesses refused so far inside the current ``guarded_memory`` (a live list)."""
    return _REFUSALS.get() or []


@contextmanager
def guarded_memory(name: str):
    """In the interpreter, refuse any unmasked load or store outside the kernel's tensors
    before it happens, and name it, whatever error the refusal became on its way out (unless a
    probe proved a cause: a hint with a mistake id stands)."""
    if not interpreting():
        yield
        return
    from triton.runtime import interpreter

    extents, flat, refused, unfilled = [], [], [], []
    init, load, store = (interpreter.GridExecutor._init_args_hst,
                         interpreter.InterpreterBuilder.create_masked_load,
                         interpreter.InterpreterBuilder.create_masked_store)

    def init_args(self, args_dev, kwargs):
        args_hst, kwargs_hst = init(self, args_dev, kwargs)
        tensors = [interpreter._unwrap_tensor(a) for a in [*args_hst, *kwargs_hst.values()]
                   if hasattr(a, "data_ptr")]
        extents[:] = [(s.data_ptr(), s.data_ptr() + s.nbytes(), t.element_size())
                      for t in tensors for s in [t.untyped_storage()]]
        # what a kernel indexing flat memory would read of a broadcast view: numel elements
        # from its start, over a storage smaller than that (stride 0: y.sum()'s gradient)
        flat[:] = [(t.data_ptr(), t.data_ptr() + t.numel() * t.element_size()) for t in tensors
                   if t.numel() * t.element_size() > t.untyped_storage().nbytes()]
        return args_hst, kwargs_hst

    def inside(ptrs, mask, what):
        on = mask.data.astype(bool)
        addresses = ptrs.data[on] if on.shape else ptrs.data
        if on.any() and extents:
            ok = sum(((addresses >= low) & (addresses < high)) for low, high, _ in extents)
            if not ok.all():
                first = int(addresses[~ok.astype(bool)].flat[0])
                below = [(high, (high - low) // size) for low, high, size in extents
                         if high <= first]
                refused.append(Refusal(what, max(below)[1] if below else 0,
                                       any(low <= first < high for low, high in flat),
                                       torch._C._current_autograd_node() is not None))
                raise GradingError(f"{name}'s kernel {what} outside its tensors")

    def masked_load(self, ptrs, mask, other, *rest):
        inside(ptrs, mask, "reads")
        if other is None and not mask.data.all():
            other = undefined_lanes(ptrs)
            if other is not None:
                unfilled.append(True)
        return load(self, ptrs, mask, other, *rest)

    def masked_store(self, ptrs, value, mask, *rest):
        inside(ptrs, mask, "writes")
        return store(self, ptrs, value, mask, *rest)

    def undefined(error) -> GradingError:
        return GradingError(
            f"a masked load without other= feeds a result of {name}: masked-off lanes are "
            "undefined on a GPU (the interpreter gives 0, the grader NaN), and a reduction "
            "such as tl.sum over the block adds them in; give the load the value the sum "
            "needs, tl.load(ptr + offsets, mask=mask, other=0.0)", str(error),
            mistake=f"{name}/masked-load-without-other")

    def named(details: str) -> GradingError:
        if refused[0].expanded and refused[0].backward:
            return GradingError(
                f"{name}'s backward kernel {refused[0].what} outside its tensors, past the end "
                "of an expanded tensor, not for want of a mask: grad_output not made contiguous "
                "(an expanded gradient, such as y.sum().backward() hands over, has stride 0: "
                "its elements share one number in memory, and a kernel indexing it as flat "
                "memory runs past it); make grad_output contiguous on the host before the "
                "backward kernel reads it", details, mistake=f"{name}/grad-output-expanded")
        if refused[0].expanded:
            return GradingError(
                f"{name}'s kernel {refused[0].what} outside its tensors, past the end of an "
                "expanded input, not for want of a mask: an input not made contiguous (an "
                "expanded tensor has stride 0: its elements share memory, and a kernel "
                "indexing it as flat memory runs past it); make the inputs contiguous on the "
                "host", details, mistake=f"{name}/strided-read-as-flat")
        return GradingError(
            f"{name}'s kernel {refused[0].what} outside its tensors on lanes past the end: a "
            "block wider than what is left (the tail, or a row shorter than the block) needs a "
            "mask, e.g. tl.load(ptr + offsets, mask=offsets < n) and the same mask in tl.store",
            details, mistake=f"{name}/unmasked-access")

    interpreter.GridExecutor._init_args_hst = init_args
    interpreter.InterpreterBuilder.create_masked_load = masked_load
    interpreter.InterpreterBuilder.create_masked_store = masked_store
    token = _REFUSALS.set(refused)
    try:
        with shared_stores(name):
            yield
    except Exception as error:
        if refused and not getattr(error, "mistake", ""):
            raise named(str(error)) from error
        if unfilled and _undefined_lanes_seen(error):
            raise undefined(error) from error
        raise
    else:
        if refused:  # refused inside a probe that went on: still a kernel touching others' memory
            raise named("")
    finally:
        _REFUSALS.reset(token)
        interpreter.GridExecutor._init_args_hst = init
        interpreter.InterpreterBuilder.create_masked_load = load
        interpreter.InterpreterBuilder.create_masked_store = store
