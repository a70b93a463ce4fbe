"""Rule 2 of the Function contract on every path through backward: an input that needs no
gradient gets ``None``, also where backward takes a shortcut. A backward that returns
``torch.zeros_like`` for every input when ``grad_output`` is all zeros, when a ReLU layer is
dead everywhere, or when the batch is empty, passes every check that hands it random values on
a typical batch.

What backward returns is recorded before the engine sees it (``probes.record_returned_gradients``),
with each floating input in turn as the only one requiring grad, on a typical batch with a
``grad_output`` of zeros, with every floating input all zeros (the kink of a ReLU, a norm of 0:
where many ops take a path of their own), and on an empty batch (where the reference takes one).
First, on the typical path (random ``grad_output``), every floating input but the one
requiring grad must get ``None``, and so must every integer or bool tensor input (it can never
require grad, and autograd drops what backward returns for it without a word); then each input
that got ``None`` there must get it on these paths too (a tensor of zeros is not ``None``), and
the one requiring grad a tensor, as there."""

import torch

from .checks import make_inputs
from .domain import Domain
from .errors import GradingError
from .function_contract import rule_reference
from .grad_outputs import grad_output_generator
from .narrowed import differentiable_outputs, floating_inputs, narrowed, shapes_of
from .probes import record_returned_gradients
from .returned_dtypes import check_dtypes_returned


def is_function_class(function) -> bool:
    return isinstance(function, type) and issubclass(function, torch.autograd.Function)


def returned_gradients(function, values: dict, wanted: set, grad_output: str = "random",
                       after_forward=None):
    """What ``function``'s backward returned, input by input (a dict, or None where backward
    did not run or raised: other checks name that), with ``wanted`` requiring grad and
    ``grad_output`` "random" or "zeros"; ``after_forward(inputs)`` runs between the two."""
    recorder, calls = record_returned_gradients(function)
    inputs = make_inputs(values, requires_grad=wanted)
    try:
        outputs = differentiable_outputs(recorder.apply(*inputs.values()))
        if not outputs:
            return None
        generator = grad_output_generator(3)
        grad_outputs = [torch.zeros_like(o) if grad_output == "zeros" else torch.randn(
            o.shape, generator=generator, dtype=torch.float64).to(o) for o in outputs]
        if after_forward is not None:
            after_forward(inputs)
        torch.autograd.grad(outputs, [inputs[name] for name in wanted], grad_outputs,
                            allow_unused=True)
    except Exception:  # noqa: BLE001 - a probe: the battery names what raised
        return None
    if not calls or len(calls[-1]) != len(values):
        return None
    return dict(zip(values, calls[-1]))


def _paths(domain: Domain, values: dict, empty: bool) -> list[tuple[str, dict, str]]:
    zeros = {name: torch.zeros_like(value) if name in floating_inputs(values) else value
             for name, value in values.items()}
    paths = [(f"a grad_output of zeros ({shapes_of(values)})", values, "zeros"),
             (f"every floating input all zeros, a kink or a dead unit for many ops "
              f"({shapes_of(values)})", zeros, "random")]
    if empty:
        paths += [(f"an empty batch ({shapes_of(cut)})", cut, "random")
                  for cut in narrowed(domain, values, to=0)[:1]]
    return paths


def check_none_on_every_path(domain: Domain, function, device: torch.device) -> None:
    """Each frozen input backward gives None on the typical path gets None on every path."""
    if not is_function_class(function):
        return  # an operator's backward returns what the engine keeps: nothing to record
    values = domain.values(device)
    names = floating_inputs(values)
    paths = _paths(domain, values, domain.empty_batch)
    for wanted in names:
        typical = returned_gradients(function, values, {wanted})
        if typical is None:
            continue
        integral = [n for n, v in values.items() if isinstance(v, torch.Tensor)
                    and not (v.is_floating_point() or v.is_complex()) and typical[n] is not None]
        if integral:
            raise _integral_error(function, domain, values, typical, integral[0])
        computed = [n for n in names if n != wanted and typical[n] is not None]
        if computed:
            raise _frozen_error(function, domain, values, wanted, computed[0])
        frozen = [n for n, v in typical.items() if n != wanted and v is None
                  and isinstance(values[n], torch.Tensor)]
        if not frozen and typical[wanted] is None:
            continue
        for said, given, grad_output in paths:
            returned = returned_gradients(function, given, {wanted}, grad_output)
            if returned is None:
                continue
            if typical[wanted] is not None and returned[wanted] is None:
                raise GradingError(
                    f"{function.__name__}.backward returned None for {wanted}, which requires "
                    f"grad, with {said}: an input that requires grad gets a tensor on every "
                    f"path, zeros where nothing flows back (with None, torch.autograd.grad "
                    f"raises and .grad stays None) {rule_reference('gradients')}",
                    mistake=f"{domain.spec.name}/none-for-needed-input")
            check_dtypes_returned(domain.spec.name, f"{function.__name__}.backward", given,
                                  returned)  # rule 2's dtype on this path too
            given_back = [n for n in frozen if returned[n] is not None]
            if given_back:
                other = given_back[0]
                what = ("a tensor of zeros" if isinstance(returned[other], torch.Tensor)
                        and not bool(returned[other].any()) else "a tensor")
                raise GradingError(
                    f"{function.__name__}.backward returned {what} for {other}, which needs no "
                    f"gradient, with {said} and only {wanted} requiring grad, where it returns "
                    f"None for {other} with a random grad_output: every path through backward "
                    f"returns None for an input that needs no gradient "
                    f"{rule_reference('gradients')}",
                    mistake=f"{domain.spec.name}/not-none-on-every-path")


def _integral_error(function, domain: Domain, values: dict, returned: dict,
                    name: str) -> GradingError:
    """Backward returned something for an integer or bool tensor input, which can never require
    grad: autograd drops it without a word, so only what backward returns shows it."""
    given = returned[name]
    what = ("a tensor of zeros" if isinstance(given, torch.Tensor) and not bool(given.any())
            else "a tensor" if isinstance(given, torch.Tensor) else repr(given))
    dtype = str(values[name].dtype).removeprefix("torch.")
    return GradingError(
        f"{function.__name__}.backward returned {what} for its {dtype} input {name}: an integer "
        f"or bool tensor never needs a gradient (it cannot require grad), so backward returns "
        f"None for {name} {rule_reference('gradients')}",
        f"inputs: {shapes_of(values)}", mistake=f"{domain.spec.name}/gradient-for-integer-input")


def _frozen_error(function, domain: Domain, values: dict, wanted: str, other: str) -> GradingError:
    """Backward returned a gradient for ``other`` while only ``wanted`` required grad; a gate
    read from ``wanted``'s entry is proven when ``other`` alone gets None for itself."""
    alone = returned_gradients(function, values, {other})
    if alone is not None and alone[other] is None:
        return GradingError(
            f"{function.__name__}.backward computes grad_{other} when only {wanted} requires "
            f"grad, and returns None for {other} when {other} alone does: it decides whether "
            f"to compute grad_{other} from another input's entry of ctx.needs_input_grad: which "
            f"entry is {other}'s? {rule_reference('gradients')}",
            mistake=f"{domain.spec.name}/gate-on-wrong-entry")
    return GradingError(
        f"{function.__name__}.backward returned a gradient for {other} with only {wanted} "
        f"requiring grad ({shapes_of(values)}): {other} needs no gradient (its entry of "
        f"ctx.needs_input_grad is False), so backward returns None for it (computing it is "
        f"work thrown away) {rule_reference('gradients')}",
        mistake=f"{domain.spec.name}/computes-frozen-gradient")
