"""Probes of a learner's backward for what a Jacobian comparison cannot show: the shape
backward itself returned (before the engine sums an expandable gradient), and whether a
gradient changes or goes missing when one input alone requires grad."""

import torch

from autograder.probes import record_returned_gradients

from .functions import apply, input_names, is_function_class

RTOL, ATOL = 1e-3, 1e-5  # gradcheck's defaults


def float64_copy(value):
    """A float64 copy of a floating tensor, anything else unchanged."""
    if isinstance(value, torch.Tensor) and value.is_floating_point():
        return value.detach().to(torch.float64).clone()
    return value


def floating_outputs(function, args: list) -> list[torch.Tensor]:
    """Every floating output of ``function(*args)``, in order."""
    output = apply(function, *args)
    outputs = output if isinstance(output, (tuple, list)) else (output,)
    tensors = [o for o in outputs if isinstance(o, torch.Tensor) and o.is_floating_point()]
    if not tensors:
        raise TypeError(f"forward returned {type(output).__name__}: return a floating tensor")
    return tensors


def flat_output(function, args: list) -> torch.Tensor:
    """Every floating output of ``function(*args)``, flattened into one vector."""
    return torch.cat([o.reshape(-1) for o in floating_outputs(function, args)])


def _leaves(args: list, wrt: list[int], requiring) -> list:
    return [value.detach().clone().requires_grad_(i in requiring) if i in wrt else value
            for i, value in enumerate(args)]


def _backward_once(function, args: list, wrt: list[int], requiring: list[int]):
    """(what backward returned, autograd's gradients for ``requiring``) for one seeded
    grad_output, with only the inputs at ``requiring`` requiring grad."""
    probe, returned = record_returned_gradients(function)
    leaves = _leaves(args, wrt, set(requiring))
    output = flat_output(probe, leaves)
    grad_output = torch.randn(output.shape, generator=torch.Generator().manual_seed(0),
                              dtype=output.dtype)
    grads = torch.autograd.grad(output, [leaves[i] for i in requiring], grad_output,
                                allow_unused=True)
    return (returned[-1] if returned else ()), dict(zip(requiring, grads))


def backward_notes(function, *inputs, names=None) -> list[str]:
    """What backward itself returned that the Jacobians cannot show: a gradient of the wrong
    shape (the engine sums it), and a gradient that changes, or goes missing, when one input
    alone requires grad. Plain sentences; [] when there is nothing to say."""
    if not is_function_class(function):
        return []
    names = list(names) if names is not None else input_names(function, len(inputs))
    args = [float64_copy(value) for value in inputs]
    wrt = [i for i, value in enumerate(args)
           if isinstance(value, torch.Tensor) and value.is_floating_point()]
    notes = []
    try:
        raw, every = _backward_once(function, args, wrt, wrt)
        for i in wrt:
            got = raw[i] if i < len(raw) else None
            if isinstance(got, torch.Tensor) and tuple(got.shape) != tuple(args[i].shape):
                notes.append(f"backward returned grad_{names[i]} of shape {tuple(got.shape)} for "
                             f"{names[i]} of shape {tuple(args[i].shape)}; the engine summed it "
                             "to the input's shape, so the heatmaps agree (Function contract, rule 2, "
                             "accepts that unless the exercise asks for the input's exact shape).")
        for i in wrt if len(wrt) > 1 else []:
            returned, alone = _backward_once(function, args, wrt, [i])
            unasked = [names[j] for j in wrt if j != i and j < len(returned)
                       and isinstance(returned[j], torch.Tensor)]
            if unasked and not any("nobody asked for" in note for note in notes):
                notes.append(f"with {names[i]} alone requiring grad, backward still computed a "
                             f"gradient for {', '.join(unasked)}, which nobody asked for "
                             "(autograd throws it away: Function contract, rule 2, "
                             "returns None there; read ctx.needs_input_grad).")
            if alone[i] is None and every[i] is not None:
                notes.append(f"with {names[i]} alone requiring grad, backward returns None for "
                             f"it, yet a gradient when every input does: it reads another "
                             f"input's entry of ctx.needs_input_grad (entry {i} is {names[i]}'s).")
            elif (alone[i] is not None and every[i] is not None
                  and not torch.allclose(alone[i], every[i], rtol=RTOL, atol=ATOL)):
                notes.append(f"with {names[i]} alone requiring grad, backward gives it a "
                             "different gradient than when every input does.")
    except Exception:  # the learner's Function may raise anything: the heatmaps report it
        return notes
    return notes
