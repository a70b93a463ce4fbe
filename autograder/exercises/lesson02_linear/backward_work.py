"""What a lesson 02 backward does besides what it returns: a bias gradient summed for a bias
that needs none (then returned as None, so only the ops show it), and F.linear called for
the products (it decomposes to a matrix product, so only the Python call shows it)."""

import itertools
import math

import torch
import torch.nn.functional as F
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

from ...checks import Spec, make_inputs, run_backward, run_forward
from ...errors import GradingError


class _Reductions(TorchDispatchMode):
    """The ops run inside the block that reduce a tensor to ``shape`` (size-1 dims aside, so
    that ``ones(1, rows) @ G`` counts): each op's name, once per call."""

    def __init__(self, shape: tuple):
        super().__init__()
        self.shape, self.ops = shape, []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        result = func(*args, **kwargs)
        if not func.is_view:
            largest = max((t.numel() for value in (*args, *kwargs.values())
                           for t in (value if isinstance(value, (list, tuple)) else (value,))
                           if isinstance(t, torch.Tensor)), default=0)
            for out in result if isinstance(result, (list, tuple)) else (result,):
                if (isinstance(out, torch.Tensor) and largest > out.numel()
                        and tuple(s for s in out.shape if s != 1) == self.shape):
                    self.ops.append(func.overloadpacket.__name__)
        return result


def check_frozen_bias_not_summed(function, spec: Spec, values: dict) -> None:
    """A bias passed but frozen, every other input requiring grad: backward may not reduce a
    tensor to the bias's shape (out,), grad_bias's work. Values with leading dimensions, so
    that no other gradient has that shape. Run after the checks of what backward returns, so
    that only an answer that computes grad_bias and then returns None reaches it."""
    bias = values["bias"]
    inputs = make_inputs(values, requires_grad=set(values) - {"bias"})
    forward = run_forward(function, spec, inputs)
    with _Reductions(tuple(bias.shape)) as reductions:
        run_backward(spec, forward.output, inputs, torch.ones_like(forward.output))
    position = list(values).index("bias")
    if reductions.ops:
        raise GradingError(
            f"{spec.name}.backward reduced a tensor to the bias's shape {tuple(bias.shape)} (in "
            f"aten.{reductions.ops[0]}) when bias was passed but does not require grad: that is "
            "grad_bias's work, done for nobody, even if backward then returns None for it; "
            f"compute grad_bias only when ctx.needs_input_grad[{position}] is True, not "
            "whenever there is a bias", mistake=f"{spec.name}/computes-frozen-gradient")
    unused = _unused_work(function, spec, make_inputs(values, requires_grad=set(values) - {"bias"}))
    if unused is not None:
        name, shape = unused
        raise GradingError(
            f"{spec.name}.backward computed a tensor of shape {shape} (in aten.{name}) that "
            "reaches none of the gradients it returns, when bias was passed but does not "
            "require grad and every other input does: work done for nobody, grad_bias's when "
            "only the bias is frozen, even if backward then returns None for it; compute it "
            f"only when ctx.needs_input_grad[{position}] is True",
            mistake=f"{spec.name}/computes-frozen-gradient")


class _Flow(TorchDispatchMode):
    """Every op run inside the block, as (name, shape, the storages it wrote, the storages it
    read); its results are held, so that no storage is freed and its address reused."""

    def __init__(self):
        super().__init__()
        self.ops, self.held = [], []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        result = func(*args, **kwargs)
        outs = [t for t in tree_flatten(result)[0] if isinstance(t, torch.Tensor)]
        ins = [t for t in tree_flatten((args, kwargs))[0] if isinstance(t, torch.Tensor)]
        self.held.extend(outs)
        self.ops.append((func.overloadpacket.__name__, tuple(outs[0].shape) if outs else (),
                         {_key(t) for t in outs}, {_key(t) for t in ins}, func.is_view))
        return result


def _key(tensor: torch.Tensor) -> int:
    return tensor.untyped_storage().data_ptr() if tensor.numel() else id(tensor)


def _unused_work(function, spec: Spec, inputs: dict):
    """The first op of ``function``'s backward (run from inside it, as the engine runs it) whose
    result reaches none of the gradients it returns, of more than one element: (name, shape),
    or None."""
    return next(iter(_backward_flow(function, spec, inputs).unused), None)


def _backward_flow(function, spec: Spec, inputs: dict) -> "_Flow":
    """``function``'s backward run from inside it, as the engine runs it: its ops, the
    gradients it returned (``grads``) and the ops whose results reach none of them
    (``unused``: (name, shape), of more than one element; a view computes nothing)."""
    flow = _Flow()
    flow.grads, flow.unused = (), []

    def backward(ctx, *grad_outputs):
        with flow:
            grads = function.backward(ctx, *grad_outputs)
        live = {_key(g) for g in tree_flatten(grads)[0] if isinstance(g, torch.Tensor)}
        used = [False] * len(flow.ops)
        for index in reversed(range(len(flow.ops))):
            _, _, wrote, read, _ = flow.ops[index]
            if wrote & live:
                used[index] = True
                live |= read
        flow.unused = [(name, shape) for (name, shape, _, _, view), on in zip(flow.ops, used)
                       if not on and not view and math.prod(shape) > 1]
        flow.grads = grads if isinstance(grads, tuple) else (grads,)
        return grads

    watched = type(function.__name__, (function,), {"backward": staticmethod(backward)})
    forward = run_forward(watched, spec, inputs)
    run_backward(spec, forward.output, inputs, torch.ones_like(forward.output))
    return flow


def check_no_work_for_frozen(function, spec: Spec, values: dict) -> None:
    """Every subset of two or more inputs requiring grad, the rest passed but frozen (one input
    alone is probed by what backward reads): backward returns None for each frozen input and
    computes nothing that reaches none of the gradients it returns, whatever its ops (FLOP
    counts see matrix products only); with the bias passed, then without it."""
    if "bias" in values:
        check_no_work_for_frozen(function, spec, {n: v for n, v in values.items() if n != "bias"})
    names = list(values)
    for count in range(2, len(names)):
        for wanted in itertools.combinations(names, count):
            flow = _backward_flow(function, spec, make_inputs(values, requires_grad=set(wanted)))
            frozen = [n for n in names if n not in wanted]
            only = " and ".join(wanted)
            returned = [n for n, g in zip(names, flow.grads) if n in frozen and g is not None]
            if returned:
                raise GradingError(
                    f"{spec.name}.backward returned a gradient for {returned[0]} when only "
                    f"{only} require grad: the contract asks for None there, and for no work "
                    f"done for it. Which entry of ctx.needs_input_grad decides whether "
                    f"grad_{returned[0]} is computed?",
                    mistake=f"{spec.name}/computes-frozen-gradient")
            if flow.unused:
                op, shape = flow.unused[0]
                whose = [n for n in frozen if tuple(values[n].shape) == shape]
                work = (f"grad_{whose[0]}'s work, done for nobody" if whose else "work for a "
                        f"gradient nobody asked for ({' and '.join(frozen)} frozen)")
                raise GradingError(
                    f"{spec.name}.backward computed a tensor of shape {shape} (in aten.{op}) "
                    f"that reaches none of the gradients it returns, when only {only} require "
                    f"grad: {work}, even if backward then returns None for it. Which entry "
                    "of ctx.needs_input_grad does that computation wait for?",
                    mistake=f"{spec.name}/computes-frozen-gradient")


class _Calls(TorchFunctionMode):
    """The torch functions called inside the block, as the functions themselves."""

    def __init__(self):
        super().__init__()
        self.called = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.called.append(func)
        return func(*args, **(kwargs or {}))


def _is_linear(func) -> bool:
    """F.linear under any of its names: torch._C._nn.linear (F.linear itself), and the aten
    op torch.ops.aten.linear and its overloads, which a function mode sees by that name (a
    dispatch mode sees only what linear decomposes to, the matrix product)."""
    return func is F.linear or (isinstance(func, (torch._ops.OpOverload,
                                                  torch._ops.OpOverloadPacket))
                                and func.__name__.split(".")[0] == "linear")


def _spelling(func) -> str:
    return "" if func is F.linear else f" (as torch.ops.{func})"


def check_no_linear_in_backward(function, spec: Spec, values: dict) -> None:
    """Backward may not call F.linear, under any name: the exercise is the formulas for its gradients. A
    function mode set around autograd.grad does not reach a custom Function's backward, which
    the engine runs, so the mode is set inside it, by a subclass."""
    calls = []

    def backward(ctx, *grad_outputs):
        with _Calls() as mode:
            try:
                return function.backward(ctx, *grad_outputs)
            finally:
                calls.extend(mode.called)

    watched = type(function.__name__, (function,), {"backward": staticmethod(backward)})
    inputs = make_inputs(values)
    forward = run_forward(watched, spec, inputs)
    run_backward(spec, forward.output, inputs, torch.ones_like(forward.output))
    spelled = next((_spelling(func) for func in calls if _is_linear(func)), None)
    if spelled is not None:
        raise GradingError(
            f"{spec.name}.backward calls F.linear{spelled}: backward is where the formulas you derived "
            "go, each gradient a product of grad_output with a saved tensor; write each product "
            "with @ (or matmul, or einsum) instead of reusing the forward's function",
            mistake=f"{spec.name}/linear-in-backward")
