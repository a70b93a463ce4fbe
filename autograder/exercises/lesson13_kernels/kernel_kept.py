"""Lesson 13: a buffer kept from one call to the next, seen by where it lives rather than by the
values it gives. Every tensor a kernel launch is handed during one call (forward and backward)
is followed by a weak reference; once the call's inputs, outputs and gradients are dropped,
each of them should be gone. One still alive is held outside the call: a staging buffer or a
workspace cached in a module global, a closure or a class, which the value checks only see
when stale contents leak into a result (a fully overwritten workspace never does). Run in
Triton's interpreter, where launches pass through one Python function."""

import inspect
import weakref
from contextlib import contextmanager

import torch

from ...errors import GradingError
from ...memory import survivors
from .kernel_interpreter import interpreting

# half first: a staging buffer for float16/bfloat16 alone is the likeliest cache
KEPT_DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64)


@contextmanager
def _launch_arguments():
    """A live list of weak references to every tensor a kernel launch is handed (and the base
    of a view), while the block runs."""
    from triton.runtime import interpreter

    original, followed = interpreter.GridExecutor._init_args_hst, []

    def init_args(self, args_dev, kwargs):
        for arg in [*args_dev, *kwargs.values()]:
            tensor = interpreter._unwrap_tensor(arg)
            for t in (tensor, getattr(tensor, "_base", None)):
                if isinstance(t, torch.Tensor) and t.numel():
                    followed.append(weakref.ref(t))
        return original(self, args_dev, kwargs)

    interpreter.GridExecutor._init_args_hst = init_args
    try:
        yield followed
    finally:
        interpreter.GridExecutor._init_args_hst = original


def _where(function, kept: torch.Tensor) -> str | None:
    """Where the answer holds ``kept``: a module global or a closed-over variable (a dict or
    list in one, two levels deep), by name; else a place the scan does not reach."""
    raw = inspect.unwrap(getattr(function, "_init_fn", function))
    spaces = [("the module global", getattr(raw, "__globals__", {}))]
    cells = dict(zip(raw.__code__.co_freevars, raw.__closure__ or ())) if hasattr(
        raw, "__code__") else {}
    spaces.append(("the closed-over variable", {k: c.cell_contents for k, c in cells.items()
                                                if _filled(c)}))
    pointer = kept.untyped_storage().data_ptr()

    def holds(value, depth=0) -> bool:
        if isinstance(value, torch.Tensor):
            return value.numel() > 0 and value.untyped_storage().data_ptr() == pointer
        if depth > 1 or not isinstance(value, (dict, list, tuple)):
            return False
        items = value.values() if isinstance(value, dict) else value
        return any(holds(item, depth + 1) for item in list(items)[:1000])

    for what, names in spaces:
        for key, value in list(names.items()):
            if not key.startswith("__") and holds(value):
                return f"in {what} {key}"
    return None


def _filled(cell) -> bool:
    try:
        cell.cell_contents
    except ValueError:
        return False
    return True


def check_no_tensor_kept(name: str, function, calls) -> None:
    """Each ``call()`` runs one forward and backward of ``function`` on fresh inputs, keeps
    nothing and returns the output and the gradients: every tensor its kernel launches were
    handed, those returned aside, must be gone afterwards."""
    if not interpreting():
        return
    for label, call in calls:
        with _launch_arguments() as followed:
            try:
                returned = call()
            except Exception:  # noqa: BLE001 -- a probe: the battery's own checks name it
                return
        # an output (or gradient) kept and returned again is named by the per-call checks,
        # by what a later call does to it
        returned = {t.untyped_storage().data_ptr() for t in returned if t.numel()}
        alive = survivors(lambda: [t for t in (ref() for ref in followed) if t is not None
                                   and t.untyped_storage().data_ptr() not in returned])
        if not alive:
            continue
        # the one a global holds, where one does (it may hold others alive: inputs saved
        # by an output it keeps)
        kept, where = next(((t, w) for t in alive for w in [_where(function, t)] if w),
                           (alive[0], "outside the call (a closure, a class attribute or a "
                                      "cache)"))
        del alive
        raise GradingError(
            f"{name} keeps a buffer from one call to the next: a {kept.dtype} tensor of shape "
            f"{tuple(kept.shape)} that a kernel was handed during a call on {label} is still "
            f"held {where} after that call's inputs, outputs and gradients are gone. The "
            "contract keeps no buffer between calls (a cached buffer grows with every new "
            "size, and two calls at once write into the same memory): allocate it in the call "
            "(PyTorch's caching allocator makes torch.empty cheap)",
            mistake=f"{name}/buffer-kept-between-calls")


def stale_input(call, tensors: dict) -> str | None:
    """The name of an input whose change in place between two calls the second call's output
    ignores (a copy cached by data_ptr from the first call), or None. A diagnosis run only once
    gradcheck has failed: gradcheck perturbs each entry in place."""
    for name in tensors:
        values = {n: t.detach().clone() for n, t in tensors.items()}
        try:
            call(*values.values())
            values[name].data.add_(0.25)  # as gradcheck does: no version bump
            again, fresh = call(*values.values()), call(*(t.clone() for t in values.values()))
        except Exception:  # noqa: BLE001 -- a diagnosis: gradcheck's own message stands
            return None
        if not torch.allclose(again, fresh, rtol=1e-9, atol=1e-12, equal_nan=True):
            return name
    return None


def raise_if_stale(name: str, call, tensors: dict) -> None:
    """Name a copy of an input kept from an earlier call (see stale_input)."""
    if (stale := stale_input(call, tensors)) is not None:
        raise GradingError(
            f"{name} keeps a copy of {stale} from an earlier call: changed in place between two "
            f"calls, {stale} gives the second call the first call's values (a cache keyed by "
            "data_ptr, or by _version, which a change through .data leaves alone?). gradcheck, "
            "which perturbs entries in place through .data, fails on that stale copy. "
            "The contract keeps no buffer from one call to the next: copy or convert the input "
            "in every call", mistake=f"{name}/buffer-kept-between-calls")
