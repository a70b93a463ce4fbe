"""Lesson 05: CheckpointFunction differentiated the way it is used, ``loss.backward()``, its
errors turned into hints; and the same through ``torch.autograd.grad`` for the checks generated
from its domain (PyTorch's own reentrant checkpoint refuses autograd.grad by design)."""

import re

import torch

from ...checks import Spec, check_is_function
from ...diagnose import diagnose_gradient
from ...errors import GradingError
from ...explain import _explain_runtime_error
from ...exercise import sample
from .checkpoint_blocks import (WIDTH, ThroughBackward, check_parameter_grads, custom_nodes,
                                refuse_reentry, watch_calls)

CHECKPOINT = Spec("CheckpointFunction", ("run_fn", "x"), lambda run_fn, x: run_fn(x))
_COUNT = re.compile(r"returned an incorrect number of gradients \(expected (\d+), got (\d+)\)")
REENTERED = ("CheckpointFunction.backward backpropagated a graph that leads back into its own "
             "node, so it re-entered this very backward, without end (the cell would hang): "
             "backpropagate only the output recomputed from fresh leaves (t.detach())")


def _spec_for(values: dict) -> Spec:
    return Spec(CHECKPOINT.name, tuple(values), CHECKPOINT.reference)


def _backward(spec: Spec, output, inputs: dict, grad_output) -> tuple:
    """``output.backward(grad_output)`` through the learner's CheckpointFunction, turning errors
    into hints; return each input's .grad (None for the rest). An input's .grad accumulated
    twice means backward also wrote into it itself."""
    accumulated = {}
    handles = [value.register_post_accumulate_grad_hook(
                   lambda t, name=name: accumulated.__setitem__(name, accumulated.get(name, 0) + 1))
               for name, value in inputs.items()
               if isinstance(value, torch.Tensor) and value.requires_grad]
    try:
        backward = torch.autograd.backward  # bound before watch_calls: not the learner's call
        with refuse_reentry(custom_nodes([output], whole_graph=False), REENTERED), watch_calls():
            backward(output, grad_output)
    except (NotImplementedError, GradingError):
        raise
    except RuntimeError as error:
        message = str(error)
        if "does not require grad and does not have a grad_fn" in message:
            raise GradingError(
                "CheckpointFunction.backward recomputed run_fn with gradients off (autograd "
                "disables them inside backward): wrap the recomputation in torch.enable_grad()",
                message, mistake="CheckpointFunction/recomputes-without-grad") from error
        if "only Tensors of floating point" in message:
            raise GradingError(
                "CheckpointFunction.backward asked for gradients of a non-float input (e.g. a "
                "boolean mask): a fresh leaf should ask for a gradient only where the input it "
                "copies did", message, mistake="CheckpointFunction/leaf-for-non-float") from error
        others = [n for n, v in inputs.items() if n != "run_fn" and not torch.is_tensor(v)]
        if (match := _COUNT.search(message)) and int(match[2]) == int(match[1]) - 1 and not others:
            raise GradingError(
                f"backward returned {match[2]} gradients for {match[1]} inputs: the first "
                "input is run_fn, so return None for it first: (None, *input_grads)",
                message, mistake="CheckpointFunction/no-none-for-run-fn") from error
        if match:  # which ones are missing, the count cannot tell: name every None owed
            raise GradingError(
                f"backward returned {match[2]} gradients for {match[1]} inputs: return None "
                f"for each non-tensor ({', '.join(['run_fn', *others])}) and a gradient or None "
                "for each tensor, in forward's order", message,
                mistake="CheckpointFunction/no-none-for-non-tensors") from error
        raise _explain_runtime_error(spec, "backward", error, inputs) from error
    finally:
        for handle in handles:
            handle.remove()
    for name, count in accumulated.items():
        if count > 1:
            raise GradingError(
                f"CheckpointFunction's backward wrote into the .grad of the caller's tensor "
                f"{name}: recompute on detached copies (fresh leaves), not on the saved tensors",
                mistake="CheckpointFunction/recomputes-on-saved-tensors")
    return tuple(value.grad if isinstance(value, torch.Tensor) and value.requires_grad else None
                 for value in inputs.values())


def _check_no_gradient_unasked(inputs: dict, returned: list) -> None:
    """None for a tensor argument that does not require grad, as run_fn run plainly gives it
    none: a gradient computed for it is work nobody reads (a frozen input, a batch of data)."""
    tensors = [name for name, value in inputs.items() if torch.is_tensor(value)]
    for name, grad in zip(tensors, returned[0] if returned else ()):
        if grad is not None and not inputs[name].requires_grad:
            raise GradingError(
                f"CheckpointFunction's backward returned a gradient for {name}, which does not "
                f"require grad: run_fn run plainly gives {name} none, and computing it is work "
                f"nobody reads (think of a frozen input, or a batch of data); what does your backward "
                f"return in {name}'s place, and where does it come from?", mistake="CheckpointFunction/gradient-not-required")


def through_backward(submission) -> type:
    """``submission`` with an ``apply`` graded through ``.backward()``; a subclass, so that an
    attribute forward or backward sets on the learner's class is still seen."""
    function = check_is_function(submission, CHECKPOINT)

    def backward(output, leaves, grad_output):
        inputs = {"run_fn": None, **{f"x{i}" if i else "x": leaf
                                     for i, leaf in enumerate(leaves[1:])}}
        return _backward(_spec_for(inputs), output, inputs, grad_output)

    return type(function.__name__, (function,), {"apply": staticmethod(
        lambda run_fn, *args: ThroughBackward.apply(function.apply, backward, run_fn, *args))})


def _domain_values(device, dtype=torch.float64, seed: int = 0) -> dict:
    """x of shape (3, 5) and a run_fn of its own per seed, computing in x's dtype."""
    weight = sample((WIDTH, WIDTH), device, seed=seed + 40) / 2

    def run_fn(x):
        return torch.tanh(x @ weight.to(x.dtype)) * x

    return {"run_fn": run_fn, "x": sample((3, WIDTH), device, seed=seed, dtype=dtype)}


def _check_input_grads(inputs: dict, grads: tuple, truth: dict) -> None:
    for name, grad in zip(inputs, grads):
        if name in truth:
            diagnose_gradient(name, grad, truth[name])


def _check_parameter_grads(parameters: dict, truth: dict, *, before: dict | None = None,
                           function_run_fn: bool = False) -> None:
    """With ``function_run_fn``, run_fn is a plain function (a closure over a module): it has
    no .parameters() an answer could list."""
    check_parameter_grads(
        "CheckpointFunction", "run_fn", parameters, truth, before=before,
        missing="the parameters used inside run_fn got no gradient (.grad is None)"
        + (" when run_fn is a plain function (a closure over a Linear), which has no "
           ".parameters() to list" if function_run_fn else ""),
        overwrite_mistake="CheckpointFunction/overwrites-parameter-grad")
