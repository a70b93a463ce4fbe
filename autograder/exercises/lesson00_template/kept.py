"""Lesson 00: where backward finds what it needs (ctx.saved_tensors, not a copy kept aside),
whether it can run twice on one graph (gradcheck runs it once per output entry), and empty
inputs, which 'any shape' includes."""

import torch

from ...checks import Spec, check_gradcheck, check_values_and_gradients, make_inputs
from ...checks import reference_gradients
from ...errors import GradingError
from ...mistakes import RAISED, mistake_of

# what the saved-tensor hooks below hand backward for each floating tensor forward saved:
# that tensor times 2 (exact in floating point); every gradient of Square and Outer is linear
# in what backward reads from what was saved, so a backward that reads it doubles too
SCALE = 2.0


def check_backward_reads_saved(function, spec: Spec, values: dict, kept: str) -> None:
    """Under saved-tensor hooks whose unpack hands backward each saved floating tensor times 2,
    every gradient must double. One that stays the true gradient came from values backward
    kept elsewhere: a copy in a global keyed by id(ctx), on an attribute, a closure. (Where
    state sits cannot be enumerated; what backward does with doctored saved tensors can.)"""
    inputs = make_inputs(values)
    with torch.autograd.graph.saved_tensors_hooks(
            lambda tensor: tensor,
            lambda tensor: tensor * SCALE if tensor.is_floating_point() else tensor):
        output = function.apply(*inputs.values())
    grad_output = 0.5 + torch.rand(output.shape, dtype=output.dtype,
                                   generator=torch.Generator().manual_seed(3)).to(output.device)
    wanted = [n for n, v in inputs.items() if isinstance(v, torch.Tensor) and v.requires_grad]
    grads = torch.autograd.grad(output, [inputs[n] for n in wanted], grad_output,
                                allow_unused=True)
    truth = reference_gradients(spec, inputs, grad_output)
    for name, grad in zip(wanted, grads):
        if (isinstance(grad, torch.Tensor) and grad.shape == truth[name].shape
                and torch.allclose(grad, truth[name])
                and not torch.allclose(grad, SCALE * truth[name])):
            raise GradingError(
                f"{spec.name}'s backward reads {kept} from somewhere other than "
                "ctx.saved_tensors: handed other values for what forward saved (saved-tensor "
                "hooks may give backward a tensor moved to the CPU and back, or recomputed), "
                f"your gradient for {name} stayed the one of the values forward saw, so "
                "backward used a copy kept aside (on the class, in a global, in a dict keyed by "
                f"id(ctx)); read {kept} from ctx.saved_tensors, and keep no other copy",
                mistake=f"{spec.name}/bypasses-saved-tensors")


def gradcheck_named(function, spec: Spec, values: dict) -> None:
    """check_gradcheck, last in a battery: an error the learner's code raises there, after every
    single backward passed, comes from gradcheck's repeated backward on one graph (once per
    output entry), or its inputs changed in place between calls: named so, not a bare KeyError."""
    try:
        check_gradcheck(function, spec, values)
    except (GradingError, NotImplementedError):
        raise
    except Exception as error:  # noqa: BLE001 - the learner's own error, named
        text = (str(error).strip().splitlines() or [""])[0]
        raise GradingError(
            f"{spec.name} raised {type(error).__name__} ({text}) inside gradcheck, after "
            "every other check passed: gradcheck calls backward again and again on one graph "
            "(once per output entry); does your backward use up something forward left (an "
            "entry popped from a dict, an attribute deleted)? ctx.saved_tensors can be read "
            "any number of times", str(error), mistake=f"{spec.name}/backward-runs-once"
        ) from error


def check_empty_shapes(function, spec: Spec, cases: list, what: str) -> None:
    """Values and gradients for each (values, description) of ``cases``, inputs with a size 0:
    an error the learner's code raises there comes after every non-empty shape passed, and is
    named so (a loop over the entries that joins them with torch.stack has nothing to join)."""
    for values, shapes in cases:
        try:
            check_values_and_gradients(function, spec, values)
        except NotImplementedError:
            raise
        except Exception as error:  # noqa: BLE001 - the learner's error, named with its shape
            if isinstance(error, GradingError) and not mistake_of(error).startswith(RAISED):
                raise GradingError(error.hint, error.details, shapes,
                                   mistake=error.mistake) from error
            said = (error.hint if isinstance(error, GradingError) else
                    f"{spec.name} raised {type(error).__name__} with {shapes}: "
                    + (str(error).strip().splitlines() or [""])[0])
            raise GradingError(
                f"{said}. Every non-empty shape passed: the contract holds for {what} of any "
                "shape, an empty one (a size 0) included, whose gradient is an empty tensor; "
                "tensor operations (*, +, .sum) take an empty dimension, and a loop over one "
                "runs zero times, leaving nothing for torch.stack or torch.cat to join",
                getattr(error, "details", ""), mistake=f"{spec.name}/fails-on-empty-input"
            ) from error
