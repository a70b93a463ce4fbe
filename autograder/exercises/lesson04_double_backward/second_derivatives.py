"""Double backward through the learner's backward: second derivatives against the composed
reference's, and, where they differ, the cause a probe shows (an intermediate saved, a number
kept, a tensor turned into a number, an input autograd finds no path from, a narrower dtype).
Second derivatives wrong only at particular points (nan past an overflow, at beta = 0, at a kink
at x = 0) are named in second_derivative_points."""

import torch
from torch.autograd.gradcheck import GradcheckError
from torch.utils._python_dispatch import TorchDispatchMode

from ...checks import Spec, make_inputs, run_forward
from ...errors import GradingError
from ...explain import _explain_runtime_error
from ...precision import FLOAT32_STEP, rounded_to_float32
from ...probes import _OpLog

ONCE_DIFFERENTIABLE_ERROR = "marked with @once_differentiable"


def _random_like(t: torch.Tensor, seed: int) -> torch.Tensor:
    generator = torch.Generator().manual_seed(seed)
    return torch.randn(t.shape, generator=generator, dtype=t.dtype).to(t.device)


def _second_derivatives(output, inputs: dict, wanted: list, grad_output, directions: dict):
    """First derivatives with create_graph=True, then the derivatives of
    sum(first_i * direction_i) with respect to the wanted inputs and grad_output."""
    firsts = torch.autograd.grad(output, [inputs[n] for n in wanted], grad_output,
                                 create_graph=True, allow_unused=True)
    firsts = dict(zip(wanted, firsts))
    terms = [(first * directions[name]).sum() for name, first in firsts.items()
             if first is not None and first.requires_grad]
    return firsts, terms


def _wrong_first(function, spec: Spec, values: dict, wanted: list, target: str,
                 grad_output: torch.Tensor, directions: dict) -> str | None:
    """Of the gradients backward returns, the one alone whose derivative in ``target`` is off
    (None when one gradient is asked for, or several are off)."""
    wrong = []
    for name in wanted if len(wanted) > 1 else ():
        derivatives = []
        for run in (lambda i: run_forward(function, spec, i).output, lambda i: spec.reference(**i)):
            inputs = make_inputs(values, requires_grad=set(wanted))
            g = grad_output.detach().clone().requires_grad_()
            try:
                first, = torch.autograd.grad(run(inputs), inputs[name], g, create_graph=True)
                there = g if target == "grad_output" else inputs[target]
                got, = torch.autograd.grad((first * directions[name]).sum(), there,
                                           allow_unused=True)
            except RuntimeError:
                return None
            derivatives.append(torch.zeros_like(there) if got is None else got)
        if not torch.allclose(*derivatives, rtol=1e-5, atol=1e-7):
            wrong.append(name)
    return wrong[0] if len(wrong) == 1 else None


def _cause(spec: Spec, forward, target: str, reached: bool, inputs: dict,
           culprit: str | None = None) -> str:
    """Why a backward's own derivative is wrong, from what forward kept and whether autograd
    found any path from ``target`` to the gradients backward returned."""
    views = [s for s in forward.saved
             if s.role == f"input {target}" and s.tensor is not inputs.get(target)]
    if views:
        return (f"{spec.name}'s forward saved a view of {target} of shape {views[0].shape} "
                f"(made by .detach(), .expand_as, .view or indexing), not {target} itself: a "
                "view made in "
                "forward, where autograd records nothing, has no link back to "
                f"{target}, so to double backward it is a constant")
    intermediates = [s for s in forward.saved
                     if s.role == "intermediate" and s.dtype.is_floating_point]
    if intermediates:
        kept = intermediates[0]
        return (f"{spec.name} saved an intermediate of shape {kept.shape} (such as "
                "sigmoid(beta * x)) with save_for_backward; forward runs without autograd, so to "
                "double backward it is a constant: what can backward compute it from that "
                "double backward does see?")
    saved_roles = {s.role for s in forward.saved}
    numbers = [name for name, value in forward.ctx_attributes.items()
               if isinstance(value, (float, int)) and not isinstance(value, bool)]
    tensor_inputs = [name for name in spec.input_names[1:] if f"input {name}" not in saved_roles]
    if numbers and tensor_inputs:
        return (f"{spec.name} keeps {tensor_inputs[0]} as a Python number (ctx.{numbers[0]}, "
                f"from .item() or float()): double backward cannot differentiate through a "
                f"number; save the tensor {tensor_inputs[0]} with save_for_backward")
    if not reached:
        return (f"{target} is cut off from autograd in {spec.name}'s backward: autograd finds no "
                f"path from {target} to the gradients backward returned, so to double backward "
                f"{target} is a constant; which use of {target} in backward did autograd not "
                "record?")
    if culprit:
        return (f"the derivative of {spec.name}'s backward with respect to {target} is wrong in "
                f"grad_{culprit}, the gradient it returns for {culprit} (the others' are right): "
                f"double backward differentiates the ops that build grad_{culprit}; which factor "
                "of it does autograd see differently from the derivative you wrote?")
    return (f"the derivative of {spec.name}'s backward with respect to {target} is wrong: "
            "double backward differentiates the ops backward runs; which factor of your gradient "
            "does autograd see differently from the derivative you wrote?")


def _reads_a_number(function, spec: Spec, values: dict, wanted: list) -> str | None:
    """A backward that turns a tensor into a Python number (.item(), float()): its op log holds
    _local_scalar_dense. Run only after a second derivative came out wrong."""
    inputs = make_inputs(values, requires_grad=set(wanted))
    output = run_forward(function, spec, inputs).output
    try:
        with _OpLog() as log:
            torch.autograd.grad(output, [inputs[n] for n in wanted], torch.ones_like(output),
                                create_graph=True, allow_unused=True)
    except RuntimeError:
        return None
    if "_local_scalar_dense" not in log.ops:
        return None
    return (f"{spec.name}'s backward turns a tensor into a Python number (.item() or float()): "
            "autograd cannot differentiate through a number, so double backward loses its "
            "derivative; use the tensor itself (a 0-d tensor broadcasts like a number)")


def _narrower(function, spec: Spec, values: dict, wanted: list) -> str | None:
    """A float64 call whose first derivatives are all float32 numbers where the composed ops'
    are not: backward computes in float32, and the second derivatives inherit its rounding."""
    if any(v.dtype != torch.float64 for v in values.values() if isinstance(v, torch.Tensor)):
        return None
    found = []
    for run in (lambda i: run_forward(function, spec, i).output, lambda i: spec.reference(**i)):
        inputs = make_inputs(values, requires_grad=set(wanted))
        try:
            output = run(inputs)
            found.append(torch.autograd.grad(output, [inputs[n] for n in wanted],
                                             _random_like(output, 11), allow_unused=True))
        except RuntimeError:
            return None
    for name, got, truth in zip(wanted, *found):
        if got is not None and truth is not None and rounded_to_float32(got, truth):
            return (f"{spec.name}'s backward computes in float32 for float64 inputs: every "
                    f"value of grad_{name} is exactly a float32 number, so its derivatives are "
                    f"off in float64's digits too; {FLOAT32_STEP}")
    return None


_NARROW = (torch.float32, torch.float16, torch.bfloat16)
_ALIASES = ("detach", "alias", "view", "_unsafe_view", "expand", "t", "transpose")  # no step


class _NarrowLog(TorchDispatchMode):
    """Each op that returns a floating tensor of a dtype narrower than float64: (op, dtype)."""

    def __init__(self):
        super().__init__()
        self.narrow: list[tuple[str, torch.dtype]] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        result = func(*args, **(kwargs or {}))
        for out in (result if isinstance(result, (tuple, list)) else (result,)):
            if isinstance(out, torch.Tensor) and out.dtype in _NARROW:
                self.narrow.append((func.overloadpacket.__name__, out.dtype))
                break
        return result


def _narrow_step(function, spec: Spec, values: dict, wanted: list) -> str | None:
    """A float64 call whose backward runs an op that returns a float32 (or narrower) tensor: the
    dtype of backward's own intermediates, seen op by op, proves a narrower step even where the
    gradients backward returns are cast back to float64 (so no value is a float32 number)."""
    if any(v.dtype != torch.float64 for v in values.values()
           if isinstance(v, torch.Tensor) and v.is_floating_point()):
        return None
    inputs = make_inputs(values, requires_grad=set(wanted))
    try:
        output = run_forward(function, spec, inputs).output
        with _NarrowLog() as log:  # backward's ops only
            torch.autograd.grad(output, [inputs[n] for n in wanted], torch.ones_like(output),
                                create_graph=True, allow_unused=True)
    except RuntimeError:
        return None
    if not log.narrow:
        return None
    first, dtype = log.narrow[0]
    narrow = str(dtype).removeprefix("torch.")
    method = {torch.float32: ".float()", torch.float16: ".half()"}.get(dtype, f".{narrow}()")
    how = (f"cast ({method} or .to(torch.{narrow}))" if first == "_to_copy" else f"op {first}")
    later = list(dict.fromkeys(op for op, _ in log.narrow[1:] if op not in _ALIASES + (first,)))
    then = f", and its {', '.join(later)} then ran in {narrow}" if later else ""
    return (f"{spec.name}'s backward computes in {narrow} for float64 inputs: with every input "
            f"float64, its {how} returned a {narrow} tensor{then}, so its gradients carry "
            f"{narrow}'s rounding (relative steps of {torch.finfo(dtype).eps:.0e}, where "
            f"float64's are {torch.finfo(torch.float64).eps:.0e}) and double backward "
            f"differentiates {narrow} ops: keep every step of a float64 input in float64")

def _detached_alone(function, spec: Spec, values: dict, wanted: list, name: str) -> str | None:
    """The message for a gradient with no graph when only ``wanted`` require grad, where with
    every input requiring grad the same gradient has one: a no_grad or detach on one path only."""
    every = [n for n in spec.input_names if n in values]
    if set(wanted) >= set(every):
        return None
    inputs = make_inputs(values, requires_grad=set(every))
    try:
        output = run_forward(function, spec, inputs).output
        first = torch.autograd.grad(output, inputs[name], torch.ones_like(output),
                                    create_graph=True, allow_unused=True)[0]
    except RuntimeError:
        return None
    if first is None or not first.requires_grad:
        return None
    fixed = " and ".join(n for n in every if n not in wanted)
    return (f"with {' and '.join(wanted)} alone requiring grad ({fixed} not), your gradient for "
            f"{name} has no graph (computed under torch.no_grad or from detached tensors on "
            f"that path only): its second derivatives, with respect to {name} and grad_output, "
            f"are lost, while with {fixed} requiring grad too it has one; the contract asks "
            "for second derivatives whichever inputs require grad: compute "
            f"grad_{name} with the same recorded tensor ops in every case")


def check_differentiable_backward(function, spec: Spec, values: dict, wanted: list) -> None:
    """Second derivatives through the learner's backward against the composed reference."""
    inputs = make_inputs(values, requires_grad=set(wanted))
    forward = run_forward(function, spec, inputs)
    grad_output = _random_like(forward.output, 11).requires_grad_()
    directions = {name: _random_like(inputs[name], 12 + i) for i, name in enumerate(wanted)}
    try:
        firsts, terms = _second_derivatives(forward.output, inputs, wanted, grad_output,
                                            directions)
    except RuntimeError as error:
        raise _explain_runtime_error(spec, "backward", error, inputs) from error
    for name, first in firsts.items():
        if first is not None and not first.requires_grad:
            alone = _detached_alone(function, spec, values, wanted, name)
            if alone:
                raise GradingError(alone, mistake=f"{spec.name}/backward-detached-alone")
            raise GradingError(
                f"grad_{name} from {spec.name}'s backward is cut off from autograd (a "
                ".detach(), .data or torch.no_grad): with "
                "create_graph=True autograd must record backward's ops; use plain tensor ops on "
                "ctx.saved_tensors and grad_output", mistake=f"{spec.name}/backward-detached")
    if not terms:
        raise GradingError(f"{spec.name}'s backward returned no gradient for "
                           f"{' or '.join(wanted)}: return grad_{wanted[0]}")
    targets = [inputs[n] for n in wanted] + [grad_output]
    try:  # backward(), not grad(): only a full backward runs once_differentiable's error node
        torch.autograd.backward(sum(terms))
    except RuntimeError as error:
        if ONCE_DIFFERENTIABLE_ERROR in str(error):
            raise GradingError(
                f"{spec.name}'s backward is marked @once_differentiable, so it cannot be "
                "differentiated again: a second backward through it raised the mark's error, "
                "where the contract asks for second derivatives; which op of your backward "
                "could autograd not record, that it needs the mark?", str(error),
                mistake=f"{spec.name}/once-differentiable") from error
        if "modified by an inplace operation" in str(error):
            raise GradingError(
                f"an in-place op in {spec.name}.backward (such as s.mul_(1 - s)) overwrote a "
                "tensor the recorded graph of backward needs: with create_graph=True autograd "
                "records backward, so use out-of-place ops (s * (1 - s))", str(error),
                mistake=f"{spec.name}/in-place-in-backward") from error
        raise _explain_runtime_error(spec, "backward", error, inputs) from error
    got = [target.grad for target in targets]

    fresh = make_inputs(values, requires_grad=set(wanted))
    reference_grad_output = grad_output.detach().clone().requires_grad_()
    _, reference_terms = _second_derivatives(spec.reference(**fresh), fresh, wanted,
                                             reference_grad_output, directions)
    expected = torch.autograd.grad(sum(reference_terms),
                                   [fresh[n] for n in wanted] + [reference_grad_output],
                                   allow_unused=True)
    for target, tensor, mine, truth in zip([*wanted, "grad_output"], targets, got, expected):
        truth = torch.zeros_like(tensor) if truth is None else truth
        reached, mine = mine is not None, torch.zeros_like(truth) if mine is None else mine
        if not torch.allclose(mine, truth, rtol=1e-5, atol=1e-7):
            raise GradingError(_reads_a_number(function, spec, values, wanted)
                               or _narrower(function, spec, values, wanted)
                               or _narrow_step(function, spec, values, wanted)
                               or _cause(spec, forward, target, reached, inputs, _wrong_first(
                                   function, spec, values, wanted, target, grad_output,
                                   directions)),
                               f"largest error in the second derivative with respect to "
                               f"{target}: {(mine - truth).abs().max().item():.3g}", mistake={
                                   "saved an intermediate": "SwishFunction/saves-intermediate",
                                   "forward saved a view of": "SwishFunction/saves-input-view",
                                   "as a Python number (ctx.": "SwishFunction/beta-as-number",
                                   "backward turns a tensor into a Python number":
                                       "SwishFunction/number-in-backward",
                                   "is cut off from autograd in": "SwishFunction/input-cut-off",
                                   "for float64 inputs: ": "SwishFunction/float32-step"})


def check_gradgradcheck(function, spec: Spec, values: dict, wanted: list) -> None:
    """torch.autograd.gradgradcheck in float64 on the inputs in ``wanted``."""
    inputs = make_inputs(values, requires_grad=set(wanted))

    def apply(*tensors):
        call = dict(inputs)
        call.update(zip(wanted, tensors))
        return function.apply(*call.values())

    try:
        torch.autograd.gradgradcheck(apply, tuple(inputs[n] for n in wanted), eps=1e-6,
                                     atol=1e-5)
    except GradcheckError as error:
        raise GradingError(
            f"gradgradcheck failed for {spec.name}: the derivatives of your backward differ "
            "from the numerical ones", str(error)) from error
