"""Lesson 11: linear_cross_entropy called twice in one graph, each call's gradients its own;
backward's gradients new tensors, never the saved ones, even at grad_output == 1; a weight
changed between calls (in place, and through .data) read afresh by the next call."""

import torch
from torch.autograd.graph import saved_tensors_hooks

from ...checks import case, make_inputs
from ...diagnose import diagnose_gradient, diagnose_values
from ...errors import GradingError
from ...probes import _shares_memory
from .fused_loss_work import NAME, Called, _describe, _truth


def check_returns_new_tensors(function: Called, values: dict) -> None:
    """At grad_output == 1, where multiplying changes nothing, no gradient backward returns
    shares memory with a tensor forward saved: handing the saved gradient itself back lets a
    caller who changes it in place (clipping it, say) change what the next walk of the graph
    reads."""
    inputs = make_inputs(values)
    saved: list[torch.Tensor] = []

    def pack(tensor):
        saved.append(tensor)
        return tensor

    with case(_describe(values) + ", grad_output=1"):
        with saved_tensors_hooks(pack, lambda tensor: tensor):
            output = function.apply(*inputs.values())
        grads = torch.autograd.grad(output, (inputs["x"], inputs["weight"]),
                                    torch.ones_like(output))
        for name, grad in zip(("x", "weight"), grads):
            if any(_shares_memory(grad, kept) for kept in saved):
                raise GradingError(
                    f"{NAME}'s backward returned the tensor forward saved, itself, as "
                    f"grad_{name} at grad_output == 1: a caller who changes that gradient in "
                    "place (clipping it) changes what the next walk of the graph reads; return "
                    f"a new tensor, grad_output * grad_{name}, whatever grad_output is",
                    mistake=f"{NAME}/returns-saved-tensor")


def check_two_calls(function: Called, first: dict, second: dict) -> None:
    """Two calls in one graph (two losses added, one backward), each call's inputs its own
    and of the same shapes: each call's gradients are its own. A buffer kept between calls
    and saved again (grad_weight reused per shape, to save an allocation) fails here, with
    the case named, rather than as PyTorch's bare version-counter error further on."""
    with case(f"two calls in one graph, {_describe(first)}, each call's inputs its own"):
        inputs = [make_inputs(values) for values in (first, second)]
        leaves = [one[n] for one in inputs for n in ("x", "weight")]
        loss = sum(function.apply(*one.values()) for one in inputs)
        try:
            grads = torch.autograd.grad(loss, leaves)
        except RuntimeError as error:
            if "modified by an inplace operation" not in str(error):
                raise
            raise GradingError(
                f"{NAME}'s backward failed with two calls in one graph: the second call's "
                "forward wrote into a tensor the first call had saved for backward, a buffer "
                "both calls share (PyTorch's words: a variable needed for gradient computation "
                "has been modified by an inplace operation)", str(error),
                mistake="linear_cross_entropy/buffer-shared-between-calls") from error
        truths = [grad for values in (first, second) for grad in _truth(values)[1]]
        for k, (got, true) in enumerate(zip(grads, truths)):
            label = f"{'x' if k % 2 == 0 else 'weight'} of the {('first', 'second')[k // 2]} call"
            try:
                diagnose_gradient(label, got.double(), true)
            except GradingError as error:
                raise GradingError(
                    f"{NAME} is right for one call at a time but not for two calls in one "
                    f"graph ({error.hint}): one call changed what the other saved or computes "
                    "with", error.details,
                    mistake=f"{NAME}/state-shared-between-calls") from error


# every weight the between-calls check made, kept alive for the life of the process: a later
# weight cannot take the address (id() or data_ptr()) of one whose copy a cache may still hold
_KEPT: list[torch.Tensor] = []
# the check's weight enters its first call at this _version, which no other weight of the
# battery reaches: a cache keyed on _version cannot mistake it for a freed one at its address
_FIRST_VERSION = 40


def check_weight_changed_between_calls(function: Called, values: dict) -> None:
    """Four calls on one x and weight: as made, after an optimizer step (in place under
    no_grad, which bumps weight._version), after a write through weight.data (same tensor, same
    address, same _version, new values), after one through x.data: each call's loss and
    gradients are those of what x and weight hold at that call. A copy of weight cached between
    calls and keyed on id(), data_ptr() or _version fails here, on purpose, rather than by a
    chance address reuse."""
    inputs = make_inputs(values)
    x, weight, target, chunk = (inputs[n] for n in ("x", "weight", "target", "chunk_size"))
    _KEPT.extend((x, weight))
    with torch.no_grad():
        while weight._version < _FIRST_VERSION:
            weight.add_(0)
    # float16: a few units in the last place of a loss near 2 (0.1% apart): the answers
    # whose chunk loop is wrong are off by more on a first call, and left to the value checks
    tolerance = {2: 3e-3, 4: 1e-5, 8: 1e-6}[x.dtype.itemsize]
    with case(_describe(values) + ", x and weight changed between calls"):
        before = {**values, "x": x.detach().clone(), "weight": weight.detach().clone()}
        try:
            loss = function.apply(x, weight, target, chunk)
            got = (loss, *torch.autograd.grad(loss, (x, weight)))
        except Exception:  # the learner's code may raise anything: the later checks explain it
            return
        true, truth = _truth(before)
        if not all(isinstance(one, torch.Tensor) and one.shape == want.shape and
                   torch.allclose(one.detach().double(), want, rtol=0,
                                  atol=tolerance * want.abs().max().item())
                   for one, want in zip(got, (true, *truth))):
            return  # wrong on a first call: the checks of values name why
        for how, change in (
                ("weight was changed in place under torch.no_grad() (an optimizer step, which "
                 "bumps weight._version)", lambda: weight.mul_(3)),
                ("weight was changed through weight.data (same tensor, same address, same "
                 "_version, as an EMA update or weight.data.copy_ writes)",
                 lambda: weight.data.mul_(-0.5)),
                ("x was changed through x.data (same tensor, same _version)",
                 lambda: x.data.mul_(2))):
            with torch.no_grad():
                change()
            after = {**values, "x": x.detach().clone(), "weight": weight.detach().clone()}
            loss = function.apply(x, weight, target, chunk)
            grads = torch.autograd.grad(loss, (x, weight))
            (stale, _), (true, truth) = _truth(before), _truth(after)
            if not torch.allclose(loss.double(), true, rtol=tolerance) and \
                    torch.allclose(loss.double(), stale, rtol=tolerance):
                raise GradingError(
                    f"{NAME} returned a stale loss, from a cache kept between calls: called "
                    f"again after {how}, it gave {loss.item():.4g}, the loss "
                    f"of the values before the change, where the changed values give "
                    f"{true.item():.4g}; which tensor computed from x or weight outlived the call "
                    "that computed it, and what key told it the input was unchanged?",
                    mistake=f"{NAME}/stale-after-in-place-update")
            diagnose_values(f"{NAME}'s loss on a later call, after {how}",
                            loss.double(), true, rtol=tolerance, atol=tolerance * true.abs())
            for name, grad, want in zip(("x", "weight"), grads, truth):
                diagnose_gradient(name, grad.double(), want, rtol=tolerance,
                                  atol=tolerance * want.abs().max().item())
            before = after
