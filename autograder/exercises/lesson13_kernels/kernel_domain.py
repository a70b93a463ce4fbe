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

from ...domain import Operator

# rule 3's generic memory check measures NumPy's arrays too: under Triton's interpreter those are
# the interpreter's host copies of every argument, not the learner's; kernel_memory grades a
# kernel's own buffers
KERNEL_MEMORY_CLAUSE = ("each kernel holds a block of a row or of the input at a time (its "
                        "buffers are graded by the kernel's own memory checks)")
from ...errors import GradingError
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
def _backward_results():
    """What the registered backward of each operator in the course's namespace returns, before
    the autograd engine casts a gradient to its input's dtype (which hides a wrong one)."""
    from torch._library.custom_ops import OPDEFS

    ops = [op for qualname, op in list(OPDEFS.items())
           if qualname.startswith(f"{NAMESPACE}::") and op._backward_fn is not None]
    returned: list = []

    def recording(backward):
        def wrapper(ctx, *grads):
            result = backward(ctx, *grads)
            returned.extend(result if isinstance(result, tuple) else (result,))
            return result
        return wrapper

    originals = [(op, op._backward_fn) for op in ops]
    for op, backward in originals:
        op._backward_fn = recording(backward)
    try:
        yield returned
    finally:
        for op, backward in originals:
            op._backward_fn = backward


def check_gradient_dtypes(name: str, call, args: tuple) -> None:
    """The gradients a backward returns have its inputs' dtype (one dtype for every tensor
    input here): a float32 gradient for a float16 weight is cast back by the engine, but the
    backward operator's output is then not what its contract says."""
    dtype = next(a.dtype for a in args if isinstance(a, torch.Tensor))
    leaves = [a.detach().clone().requires_grad_() if isinstance(a, torch.Tensor) else a
              for a in args]
    try:  # identity hooks: what the probe saves stays out of a trace it runs inside
        with _backward_results() as returned, torch.autograd.graph.saved_tensors_hooks(
                lambda tensor: tensor, lambda tensor: tensor):
            output = call(*leaves)
            torch.autograd.grad(output, [a for a in leaves if isinstance(a, torch.Tensor)],
                                torch.ones_like(output))
    except Exception:  # noqa: BLE001 -- a probe: the generated check's own message stands
        return
    wrong = [t for t in returned if isinstance(t, torch.Tensor) and t.is_floating_point()
             and t.dtype != dtype]
    if wrong:
        raise GradingError(
            f"{name}'s registered backward returns a gradient of dtype {wrong[0].dtype} "
            f"(shape {tuple(wrong[0].shape)}) for {dtype} inputs: autograd casts it back to "
            f"{dtype}, but the backward's gradients must have their inputs' dtype (cast it "
            "before returning it)", mistake=f"{name}/wrong-gradient-dtype")


def kernel_operator(name: str, *, launches_counted_past: int | None = None):
    """``Domain.prepare`` for a lesson 13 operator called ``name``: its call's errors quoted
    as the battery quotes them (``explain``), the case and clause then added to them; a call
    with more than ``launches_counted_past`` elements has its launches counted (one each)."""
    def prepare(submission):
        probed: set = set()

        def on_device(*args):
            dtype = next(a.dtype for a in args if isinstance(a, torch.Tensor))
            if dtype not in probed and any(isinstance(a, torch.Tensor) and a.requires_grad
                                           for a in args):
                probed.add(dtype)
                check_gradient_dtypes(name, on_device, args)
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
