"""Lesson 13's operators seen by the checks a domain generates (``autograder.properties``).

Those checks run after the battery, outside ``kernel_battery``. Where TRITON_INTERPRET=1 (a
machine without a GPU: autograder.devices sets it) nothing more is needed: the operator is
called as it is, so what its own autograd node saved is what the saved-dtype check reads. On a
machine with a GPU the CPU pass must interpret the learner's kernels, forward and backward:
each call then runs inside ``kernel_battery``, its backward too, through a wrapping Function.
An exercise whose contract launches each kernel once (silu_mul) has its launches counted, by
the same wrapping Function, on the domain's large case (past 2**20 elements, the largest block
Triton accepts: where a launch per chunk of the input would show), forward and backward apart.
"""

from contextlib import contextmanager, nullcontext

import torch

from ...domain import Domain, Operator

# rule 3's generic memory check measures NumPy's arrays too: under Triton's interpreter those are
# the interpreter's host copies of every argument, not the learner's; kernel_memory grades a
# kernel's own buffers
KERNEL_MEMORY_CLAUSE = ("each kernel holds a block of a row or of the input at a time (its "
                        "buffers are graded by the kernel's own memory checks)")
from ...errors import GradingError
from ...function_contract import rule_reference
from .kernel_checks import NAMESPACE, counting_launches, explain, kernel_battery
from .kernel_interpreter import interpreting


def _launched_once(name: str, phase: str, launched: list, numel: int) -> None:
    """One launch of one kernel in ``phase`` (the contract's "one kernel, launched once")."""
    if len(launched) > 1:
        raise GradingError(
            f"{name}'s {phase} launched {len(launched)} Triton kernels "
            f"({', '.join(dict.fromkeys(launched))}) on {numel:,} elements: a launch per chunk "
            "of the input, or a kernel per gradient? The contract's pass over memory is one "
            "kernel launched once, its grid covering every element, however large",
            mistake=f"{name}/more-than-one-launch")


class _Interpreted(torch.autograd.Function):
    """``submission(*args)`` with forward and backward inside ``kernel_battery`` on the
    arguments' device (the CPU pass of a machine that compiles Triton for its GPU, when
    ``interpret``), their kernel launches counted when ``count``: one each."""

    @staticmethod
    def forward(ctx, name, submission, interpret, count, *args):
        device = next(a.device for a in args if isinstance(a, torch.Tensor))
        leaves = [a.detach().requires_grad_(a.requires_grad)
                  if isinstance(a, torch.Tensor) and a.is_floating_point() else a for a in args]
        numel = max(a.numel() for a in args if isinstance(a, torch.Tensor))
        with torch.enable_grad(), (kernel_battery(name, submission, device) if interpret
                                   else nullcontext()), counting_launches() as launched:
            output = submission(*leaves)
        if count:
            _launched_once(name, "forward", launched, numel)
        ctx.run = name, submission, device, leaves, output, interpret, count, numel
        return output.detach()

    @staticmethod
    def backward(ctx, grad_output):
        name, submission, device, leaves, output, interpret, count, numel = ctx.run
        wanted = [i for i, a in enumerate(leaves)
                  if isinstance(a, torch.Tensor) and a.requires_grad]
        with (kernel_battery(name, submission, device) if interpret
              else nullcontext()), counting_launches() as launched:
            grads = torch.autograd.grad(output, [leaves[i] for i in wanted], grad_output,
                                        allow_unused=True)
        if count:
            _launched_once(name, "backward", launched, numel)
        by_position = dict(zip(wanted, grads))
        return None, None, None, None, *(by_position.get(i) for i in range(len(leaves)))


@contextmanager
def _backward_calls():
    """Each call of the registered backward of an operator in the course's namespace: the
    operator's argument names, ``ctx.needs_input_grad`` and what it returned, before the
    autograd engine drops a gradient returned for an input that needs none (which hides it)."""
    from torch._library.custom_ops import OPDEFS

    ops = [op for qualname, op in list(OPDEFS.items())
           if qualname.startswith(f"{NAMESPACE}::") and op._backward_fn is not None]
    calls: list = []

    def recording(op, backward):
        names = [argument.name for argument in op._opoverload._schema.arguments]

        def wrapper(ctx, *grads):
            result = backward(ctx, *grads)
            calls.append((names, tuple(ctx.needs_input_grad),
                          result if isinstance(result, tuple) else (result,)))
            return result
        return wrapper

    originals = [(op, op._backward_fn) for op in ops]
    for op, backward in originals:
        op._backward_fn = recording(op, backward)
    try:
        yield calls
    finally:
        for op, backward in originals:
            op._backward_fn = backward


def _frozen_probe(call, args: tuple, wanted: list[int], flipped: bool):
    """One call on fresh leaves, only the inputs in ``wanted`` requiring grad when forward
    runs (every other floating input made to require grad after it when ``flipped``), and
    the backward for ``wanted``: the registered backwards' calls, or None where the call
    raised."""
    leaves = [a.detach().clone().requires_grad_(i in wanted) if isinstance(a, torch.Tensor)
              else a for i, a in enumerate(args)]
    # identity hooks: what the probe saves stays out of a trace it runs inside; not when
    # flipped, where the backward must find the very tensors whose requires_grad changed
    hooks = (nullcontext() if flipped else torch.autograd.graph.saved_tensors_hooks(
        lambda tensor: tensor, lambda tensor: tensor))
    try:
        with _backward_calls() as calls, hooks:
            output = call(*leaves)
            if flipped:
                for leaf in leaves:
                    if isinstance(leaf, torch.Tensor) and leaf.is_floating_point():
                        leaf.requires_grad_(True)
            torch.autograd.grad(output, [leaves[i] for i in wanted], torch.ones_like(output))
    except Exception:  # noqa: BLE001 -- a probe: the other checks' own message stands
        return None
    return calls


def check_frozen_inputs_get_none(name: str, call, args: tuple) -> None:
    """Rule 2 on an operator's registered backward: with each floating tensor input alone
    requiring grad, every other input gets None, read from ctx.needs_input_grad (an input made
    to require grad after forward still gets None). (A gradient in a wider dtype than its
    input is accepted: the engine casts it back, and the caller sees the same tensor.)"""
    floating = [i for i, a in enumerate(args)
                if isinstance(a, torch.Tensor) and a.is_floating_point()]
    for flipped in (False, True):
        for wanted in floating:
            probe = _frozen_probe(call, args, [wanted], flipped)
            if probe is None:
                return
            calls = probe
            dtype = str(args[wanted].dtype)[6:]
            for names, needs, returned in calls:
                given = [i for i, (needed, gradient) in enumerate(zip(needs, returned))
                         if not needed and isinstance(gradient, torch.Tensor)]
                if not given:
                    continue
                other = names[given[0]] if given[0] < len(names) else f"input {given[0]}"
                needing = [n for n, needed in zip(names, needs) if needed]
                if flipped:
                    raise GradingError(
                        f"{name}'s registered backward returns a tensor for {other} when "
                        f"{other} needed no gradient as forward ran and was made to require "
                        f"grad before backward ({dtype} inputs): its ctx.needs_input_grad entry "
                        f"is False, so the gradient is thrown away. Does your backward read "
                        f"{other}.requires_grad? Autograd fixes which inputs need a gradient "
                        f"when forward runs and records it in ctx.needs_input_grad "
                        f"{rule_reference('gradients')}",
                        mistake=f"{name}/reads-requires-grad")
                raise GradingError(
                    f"{name}'s registered backward returns a tensor for {other}, whose "
                    f"ctx.needs_input_grad entry is False (only "
                    f"{' and '.join(needing) or 'another input'} requires grad, "
                    f"{dtype} inputs): return None for an input that "
                    f"needs no gradient (autograd throws the tensor away) "
                    f"{rule_reference('gradients')}",
                    mistake=f"{name}/computes-frozen-gradient")


def check_default_device_frozen(spec, call, values: dict, device) -> None:
    """Rule 1's default device (autograder.default_device, which runs every input requiring
    grad) with each floating input frozen in turn: the placeholder a backward operator makes
    for a gradient not needed is made only then."""
    from ...default_device import _check_case

    if device.type != "cpu":
        return  # on a GPU the default device is the CPU already: every check sees it there
    names = list(values)
    for frozen, value in values.items():
        if not (isinstance(value, torch.Tensor) and value.is_floating_point()):
            continue
        index = names.index(frozen)

        def partly_frozen(*args, index=index):
            return call(*(a.detach() if i == index else a for i, a in enumerate(args)))
        _check_case(Domain(spec, lambda device: values), Operator(partly_frozen), device, values,
                    f"forward and backward on CPU inputs of shape {tuple(value.shape)}, "
                    f"{frozen} requiring no grad, with the default device another one, as on a "
                    "GPU, where the inputs are on cuda and the default device is the CPU")


def kernel_operator(name: str, *, launches_counted_past: int | None = None):
    """``Domain.prepare`` for a lesson 13 operator called ``name``: its call's errors quoted
    as the battery quotes them (``explain``), the case and clause then added to them; a call
    with more than ``launches_counted_past`` elements has its launches counted (one each)."""
    def prepare(submission):
        def on_device(*args):
            count = launches_counted_past is not None and any(
                isinstance(a, torch.Tensor) and a.numel() > launches_counted_past for a in args)
            try:
                here = interpreting() or all(not isinstance(a, torch.Tensor)
                                             or a.device.type == "cuda" for a in args)
                if here and not count:
                    return submission(*args)
                return _Interpreted.apply(name, submission, not here, count, *args)
            except (GradingError, NotImplementedError):
                raise
            except Exception as error:
                raise explain(name, "call", error) from error
        on_device.__name__ = name
        return Operator(on_device)
    return prepare
