"""Lesson 04: what a backward puts on ctx. A tensor or NumPy array set on ctx in backward is a
cache autograd does not guard: a plain backward(retain_graph=True) fills it without a graph, and a
later create_graph pass reads it as a constant (wrong second derivatives, silently); an in-place
change of x between two backwards goes unseen by the version counter. Checked after every
backward of one call: the first (plain, retain_graph), a create_graph one after it, and the
backward of any Function the first derivative's graph holds (an inner Function's own ctx)."""

import numpy as np
import torch

from ...checks import Spec, case, make_inputs
from ...errors import GradingError


def _kept(value) -> str | None:
    """'a tensor' or 'a NumPy array' where ``value`` is one or holds one (a tuple, list or dict,
    one level deep)."""
    items = (value.values() if isinstance(value, dict)
             else value if isinstance(value, (tuple, list)) else (value,))
    for item in items:
        if isinstance(item, torch.Tensor):
            return "a tensor"
        if isinstance(item, np.ndarray):
            return "a NumPy array"
    return None


def _new(node, before: dict) -> tuple[str, str] | None:
    for name, value in vars(node).items():
        if before.get(name) is not value and (what := _kept(value)):
            return name, what
    return None


def _custom_nodes(roots) -> list:
    """The custom Functions' nodes (their ctx) in the graphs of ``roots``."""
    found, seen, stack = [], set(), [r.grad_fn for r in roots if r.grad_fn is not None]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if hasattr(node, "_forward_cls"):
            found.append(node)
        stack.extend(n for n, _ in node.next_functions)
    return found


def _raise(spec: Spec, owner: str, name: str, what: str, when: str) -> None:
    raise GradingError(
        f"{owner} sets ctx.{name} ({what}) in backward: the contract keeps tensors only with "
        "ctx.save_for_backward, in forward or backward, and nothing of the kind on a ctx "
        f"attribute ({when}); a cache set in backward is outside autograd's view: a plain "
        "backward(retain_graph=True) fills it with no graph, so a later create_graph=True pass "
        "reads it as a constant and gives wrong second derivatives without an error, and an "
        "in-place change of x between two backwards goes unseen by the version counter; "
        "recompute what backward needs from ctx.saved_tensors on every call",
        mistake=f"{spec.name}/sets-ctx-in-backward")


def _fails_alone(function, values: dict) -> bool:
    """Whether a create_graph=True backward raises on a fresh graph, with no backward before."""
    inputs = make_inputs(values)
    try:
        output = function.apply(*inputs.values())
        torch.autograd.grad(output, [v for v in inputs.values() if v.requires_grad],
                            torch.ones_like(output), create_graph=True, allow_unused=True)
    except Exception:  # the learner's code may raise anything
        return True
    return False


def _consumed(spec: Spec, error: Exception) -> GradingError:
    detail = str(error).splitlines()[0] if str(error) else ""
    return GradingError(
        f"{spec.name}.backward raised {type(error).__name__} the second time it ran on one graph "
        "(a create_graph=True backward after a plain backward(retain_graph=True)), though it runs "
        "on a fresh graph: its first run consumed state it reads (popped from a global or a side "
        "table keyed by ctx or id(ctx)), so a second backward of the same graph cannot find it; "
        "keep tensors with ctx.save_for_backward and read them from ctx.saved_tensors, which "
        f"every run of backward finds (it raised: {detail})", str(error),
        mistake=f"{spec.name}/second-backward-fails")


def check_no_ctx_set_in_backward(function, spec: Spec, values: dict) -> None:
    """One call, every input requiring grad: a plain backward with retain_graph, then a
    create_graph one, then a backward through the first derivatives; after each, no tensor or
    array newly on the Function's ctx or on a ctx the first derivatives' graph holds. A call that
    raises is left to the battery's other checks, but for a non-RuntimeError raised by the
    second backward only (state the first one consumed), named here."""
    inputs = make_inputs(values)
    leaves = [v for v in inputs.values() if v.requires_grad]
    output = function.apply(*inputs.values())
    ctx = output.grad_fn
    if ctx is None:
        return
    before = dict(vars(ctx))
    grad_output = torch.linspace(0.5, 1.5, output.numel(), dtype=output.dtype,
                                 device=output.device).reshape(output.shape)
    try:
        torch.autograd.grad(output, leaves, grad_output, retain_graph=True, allow_unused=True)
    except RuntimeError:
        return
    if found := _new(ctx, before):
        _raise(spec, f"{spec.name}.backward", *found, "seen after a plain backward")
    try:
        firsts = torch.autograd.grad(output, leaves, grad_output.clone().requires_grad_(),
                                     create_graph=True, allow_unused=True)
    except RuntimeError:
        return
    except Exception as error:  # the learner's own error (a KeyError from a side table)
        if _fails_alone(function, values):
            raise
        raise _consumed(spec, error) from error
    if found := _new(ctx, before):
        _raise(spec, f"{spec.name}.backward", *found,
               "seen after a create_graph=True backward that followed a plain one")
    firsts = [f for f in firsts if f is not None and f.grad_fn is not None]
    inner = [(node, dict(vars(node))) for node in _custom_nodes(firsts) if node is not ctx]
    if not inner:
        return
    try:
        torch.autograd.grad([f.sum() for f in firsts], leaves, allow_unused=True)
    except RuntimeError:
        return
    for node, was in inner:
        if found := _new(node, was):
            _raise(spec, f"the Function {node._forward_cls.__name__} that {spec.name}.backward "
                   "calls", *found, "seen after a backward through the first derivative")


def check_backward_ctx_both_dtypes(function, spec: Spec, values, shape: str) -> None:
    """check_no_ctx_set_in_backward in float64 and float32; ``values(dtype)`` gives the inputs."""
    for dtype in (torch.float64, torch.float32):
        with case(f"x of shape {shape}, {str(dtype)[6:]}: a plain backward (retain_graph), a "
                  "create_graph one, then a backward through the first derivative"):
            check_no_ctx_set_in_backward(function, spec, values(dtype))
