"""Lesson 05: what CheckpointFunction's forward keeps: its tensor arguments themselves, no
activation, no copy, and no tensor on ctx, however wrapped."""

import weakref

import torch
from torch.autograd.graph import saved_tensors_hooks

from ...errors import GradingError
from ...memory import survivors
from ...probes import ForwardTrace, reachable


def _kept_after_apply(function, inputs: dict) -> int:
    """Bytes of saved activations (not inputs, not uint8 random states) still held once
    ``apply`` has returned, its output alive: a graph run_fn recorded in forward is freed
    unless something (ctx, a view's base) still refers to it. Pack hands autograd a detached
    alias and keeps only a weak reference, so nothing here keeps anything alive."""
    given = {v.untyped_storage().data_ptr() for v in inputs.values()
             if isinstance(v, torch.Tensor)}
    held = []

    def pack(tensor):
        alias = tensor.detach()
        held.append(weakref.ref(alias))
        return alias

    with saved_tensors_hooks(pack, lambda alias: alias):
        output = function.apply(*inputs.values())
    kept = survivors(lambda: {
        t.untyped_storage().data_ptr(): t.untyped_storage().nbytes()
        for t in (ref() for ref in held) if t is not None and t.dtype != torch.uint8
        and t.untyped_storage().data_ptr() not in given})
    del output
    return sum(kept.values())


def check_saves_only_inputs(forward: ForwardTrace, inputs: dict, function=None) -> None:
    """Forward keeps the tensor arguments and nothing else: no activations, in save_for_backward
    or on ctx (a random-number-generator state, a uint8 tensor, is fine in either). A forward
    whose run_fn recorded a graph that apply then dropped is told so, not that it kept it."""
    extra = [s for s in forward.saved  # a random-number-generator state (uint8) is no activation
             if not s.role.startswith("input") and s.dtype != torch.uint8]
    copies = [(s, name) for s in extra for name, value in inputs.items()
              if isinstance(value, torch.Tensor) and s.shape == tuple(value.shape)
              and s.dtype == value.dtype and torch.equal(s.tensor.detach(), value.detach())]
    if copies:
        saved, name = copies[0]
        raise GradingError(
            f"CheckpointFunction saved a copy of its argument {name} ({saved.nbytes} bytes, a "
            "new tensor with the same values, such as t.clone()), kept besides the tensor the "
            "caller holds: that is one more copy of every input per checkpoint, where the caller's "
            "own tensor would do (autograd's version counter already tells backward if the "
            "caller changed one in place)",
            mistake="CheckpointFunction/saves-input-copy")
    if extra:
        total = sum(s.nbytes for s in extra)
        given = sum(v.numel() * v.element_size() for v in inputs.values()
                    if isinstance(v, torch.Tensor))
        try:  # a second forward, on a failing answer only (its own error: say what was saved)
            dropped = function is not None and _kept_after_apply(function, inputs) == 0
        except Exception:  # noqa: BLE001
            dropped = False
        if dropped:
            raise GradingError(
                f"CheckpointFunction's forward recorded run_fn's graph: its ops saved {total} "
                f"bytes of activations ({len(extra)} tensor{'' if len(extra) == 1 else 's'}) "
                "while forward ran, time and peak memory a checkpoint must not spend, for a "
                "graph apply then threw away (had run_fn returned a view, it would have been "
                "kept): apply runs forward with grad off, and something in your forward "
                "switched it back on", mistake="CheckpointFunction/records-graph-in-forward")
        raise GradingError(
            f"CheckpointFunction kept {total} bytes of activations ({len(extra)} "
            f"tensor{'' if len(extra) == 1 else 's'}) "
            f"besides its {given} bytes of inputs: tensors run_fn computed, which a checkpoint "
            "recomputes in backward instead of keeping",
            mistake="CheckpointFunction/keeps-activations")
    for name, value in forward.ctx_attributes.items():
        for path, tensor in reachable(value, f"ctx.{name}", inputs=list(inputs.values())):
            if tensor.dtype != torch.uint8:
                hidden = ("" if path == f"ctx.{name}" or path.startswith(f"ctx.{name}[") else
                          " (a functools.partial, a closure or an object on ctx keeps its "
                          "tensors as surely as an attribute does)")
                raise GradingError(
                    f"CheckpointFunction stores a tensor as {path}{hidden}: pass the tensor "
                    "arguments through ctx.save_for_backward, so autograd checks them for "
                    "in-place changes", mistake="CheckpointFunction/tensor-on-ctx")
