"""Lesson 05, transfer: what ReversibleCoupling keeps for backward: y1 and y2 through
save_for_backward and nothing else, no input or activation on ctx in any form (a tensor, a
NumPy array, a list), and no op inside forward saving anything while it ran; after backward, the
y1 and y2 the caller holds still readable."""

import numpy as np
import torch

from ...errors import GradingError
from ...probes import reachable


def _kept_arrays(value, path: str):
    """(path, array, form) for what ctx keeps that NumPy reads as numbers: NumPy arrays, byte
    buffers (``.tobytes()``) and lists, however they are wrapped in lists, tuples and dicts."""
    for where, array in reachable(value, path, np.ndarray):
        yield where, array, "NumPy"
    for where, buffer in reachable(value, path, (bytes, bytearray, memoryview)):
        yield where, bytes(buffer), "byte"
    if isinstance(value, (list, tuple)) and value:
        try:
            yield path, np.asarray(value, dtype=np.float64), "list"
        except (TypeError, ValueError, RuntimeError):
            pass
        for i, item in enumerate(value):  # a list inside a tuple, say
            if isinstance(item, (list, tuple)):
                yield from ((w, a, f) for w, a, f in _kept_arrays(item, f"{path}[{i}]")
                            if f == "list")
    elif isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, (list, tuple)):
                yield from ((w, a, f) for w, a, f in _kept_arrays(item, f"{path}[{key!r}]")
                            if f == "list")


def _same_values(kept, tensor: torch.Tensor) -> bool:
    """Whether ``kept`` (an array or bytes) holds ``tensor``'s numbers, whatever its shape:
    compared by value, raveled (``.ravel()``, ``.flatten().tolist()``, ``.tobytes()``)."""
    x = tensor.detach().cpu()
    if isinstance(kept, bytes):
        return any(len(kept) == x.numel() * dtype.itemsize and np.allclose(
            np.frombuffer(kept, dtype=dtype), x.to(torch.float64).numpy().ravel())
            for dtype in (np.dtype(np.float64), np.dtype(np.float32), np.dtype(np.float16)))
    return (kept.dtype.kind == "f" and kept.size == x.numel()
            and np.allclose(kept.ravel(), x.to(torch.float64).numpy().ravel()))


def _check_no_input_copy(forward, inputs: dict) -> None:
    """No copy of x1, x2, f(x2) or g(y1) on ctx, in any shape or form (NumPy, bytes, a list):
    "no input, no activation"."""
    x1, x2, f, g = (inputs[name] for name in ("x1", "x2", "f", "g"))
    with torch.no_grad():
        kept = {"its input x1": x1, "its input x2": x2, "f's activation f(x2)": (fx := f(x2)),
                "g's activation g(y1)": g(x1 + fx)}
    for attribute, value in forward.ctx_attributes.items():
        for path, array, form in _kept_arrays(value, f"ctx.{attribute}"):
            for what, tensor in kept.items():
                if _same_values(array, tensor):
                    raise GradingError(f"ReversibleCoupling keeps a {form} copy of {what} as "
                                       f"{path}: a reversible block keeps no input and no "
                                       "activation in any form or shape; save only y1 and y2",
                                       mistake="ReversibleCoupling/keeps-a-copy-on-ctx")


def _own_saves(forward) -> list | None:
    """What save_for_backward itself holds (the node's saved tensors), or None if unreadable."""
    node = next((o.grad_fn for o in forward.output if isinstance(o, torch.Tensor)
                 and o.grad_fn is not None), None) if isinstance(forward.output, tuple) else None
    try:
        return [t for t in node.saved_tensors if t is not None]
    except (AttributeError, RuntimeError):
        return None


def check_saves_only_outputs(forward, inputs: dict | None = None, tracked=()) -> None:
    """Only y1 and y2 go to save_for_backward; no tensor, nor NumPy copy of an input, on ctx;
    and no op inside forward saved anything while it ran (``tracked``: the blocks that ran
    with grad on during forward, as f's and g's pre-hooks saw)."""
    if inputs is not None:
        _check_no_input_copy(forward, inputs)
    own = _own_saves(forward)
    # save_for_backward packs last, once forward has returned: what comes before, ops saved
    mine = forward.saved[len(forward.saved) - len(own):] if own is not None else forward.saved
    for saved in mine:
        if saved.role.startswith("input"):
            name = saved.role.removeprefix("input ")
            raise GradingError(
                f"ReversibleCoupling saved its input {name}: a reversible block keeps no input; "
                "save only the outputs y1 and y2, and let backward compute the inputs back "
                "from them (solve the two equations in the order that leaves one unknown each)",
                mistake="ReversibleCoupling/saves-input")
        copies = [(n, y) for n, y in zip(("y1", "y2"), forward.output if isinstance(
            forward.output, tuple) else ()) if isinstance(y, torch.Tensor)
            and y.shape == saved.shape
            and torch.equal(y.detach().to(saved.dtype), saved.tensor.detach())]
        if saved.role != "output" and copies:
            name, output = copies[0]
            kind = (f"a {str(saved.dtype)[6:]} copy of its {str(output.dtype)[6:]} output"
                    if saved.dtype != output.dtype else "a copy of its output")
            raise GradingError(
                f"ReversibleCoupling saved {kind} {name}, a new tensor kept besides the one "
                "the caller holds: save the outputs themselves, as they are, "
                "ctx.save_for_backward(y1, y2)", mistake="ReversibleCoupling/saves-output-copy")
        given = [(n, x) for n, x in ((n, (inputs or {}).get(n)) for n in ("x1", "x2"))
                 if isinstance(x, torch.Tensor) and x.shape == saved.shape
                 and torch.equal(x.detach().to(saved.dtype), saved.tensor.detach())]
        if saved.role != "output" and given:
            name, x = given[0]
            kind = (f"a {str(saved.dtype)[6:]} copy of its {str(x.dtype)[6:]} input"
                    if saved.dtype != x.dtype else "a copy of its input")
            raise GradingError(
                f"ReversibleCoupling saved {kind} {name} (a tensor equal to {name} in "
                f"{'another dtype' if saved.dtype != x.dtype else 'a new tensor'}): a reversible "
                "block keeps no input in any form, not even a rounded one; save only the outputs "
                "y1 and y2, and let backward compute the inputs back from them",
                mistake="ReversibleCoupling/saves-input")
        if saved.role != "output":
            raise GradingError(
                f"ReversibleCoupling saved an activation of shape {saved.shape} (such as f(x2)): "
                "save only the outputs y1 and y2 and recompute the rest in backward",
                mistake="ReversibleCoupling/saves-activation")
    if forward.ctx_tensor_attributes:
        raise GradingError(f"ReversibleCoupling stores a tensor as "
                           f"{forward.ctx_tensor_attributes[0]}: save only y1 and y2, through "
                           "ctx.save_for_backward", mistake="ReversibleCoupling/tensor-on-ctx")
    recorded = forward.saved[:len(forward.saved) - len(mine)]
    if recorded:  # a pack hook ran for a tensor save_for_backward does not hold: an op saved it
        among = [s.role[6:] for s in recorded if s.role.startswith("input")][:1]
        ran = f"ran {' and '.join(sorted(set(tracked)))}" if tracked else "recorded ops"
        raise GradingError(
            f"ReversibleCoupling's forward {ran} with grad on, so autograd saved {len(recorded)} "
            f"tensor{'s' * (len(recorded) > 1)} ({sum(s.nbytes for s in recorded)} bytes"
            f"{''.join(', ' + n + ' among them' for n in among)}) while it ran, and a "
            "reversible block keeps no activation of f or g, not even for a moment "
            "(save_for_backward(y1, y2) is right): apply runs forward with grad off, so leave "
            "out torch.enable_grad() there", mistake="ReversibleCoupling/records-graph-in-forward")


def recomputed_in_other_dtype(calls: list, inputs: dict) -> GradingError | None:
    """Backward raised: did it run f or g on tensors of another dtype than forward's inputs (a
    cast of the rebuilt inputs, such as .float())? ``calls``: (block, its input, under grad)."""
    dtype = inputs["x1"].dtype
    cast = next(((name, seen.dtype) for name, seen, _ in calls if seen.dtype != dtype), None)
    if cast is None:
        return None
    return GradingError(
        f"ReversibleCoupling.backward ran {cast[0]} on {cast[1]} tensors, where forward ran it "
        f"on the {dtype} inputs: the rebuilt inputs were cast before the recomputation, so it "
        "is not the computation forward ran (and f's parameters are still in the inputs' dtype)",
        mistake="ReversibleCoupling/recomputes-in-another-dtype")


def check_outputs_kept(outputs) -> None:
    """The y1 and y2 the caller holds are still readable after backward (a backward that
    writes into them in place is the generic layer's: ``autograder.twice``)."""
    for name, output in zip(("y1", "y2"), outputs):
        if output.untyped_storage().nbytes() < (output.storage_offset() + output.numel()) \
                * output.element_size():  # reading it now would read freed memory
            raise GradingError(
                f"ReversibleCoupling's backward freed the memory of {name}, which the caller "
                "holds (a saved output shares its memory with the tensor forward returned): "
                "reading it after backward reads freed memory; leave that storage alone",
                mistake="ReversibleCoupling/frees-saved-outputs")
