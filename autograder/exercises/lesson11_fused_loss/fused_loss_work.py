"""Lesson 11, linear_cross_entropy: what the fused loss does, beyond its values. The FLOPs it
spends when fewer gradients are needed (counted), its saved gradients scaled by any grad_output
and never in place. A weight changed between calls: ``fused_loss_calls``. Its memory: ``fused_loss_memory``;
its precision: ``fused_loss_precision``."""

import math
from contextlib import contextmanager

import torch
import torch.nn.functional as F

from ...checks import Spec, case, make_inputs, run_backward, run_forward
from ...diagnose import diagnose_gradient, diagnose_values
from ...errors import GradingError
from ...explain import _explain_runtime_error
from ...exercise import sample
from ...probes import CountFlops, _role
from .fused_loss_chunks import recognise_chunk_rows

NAME = "linear_cross_entropy"
LCE = Spec(NAME, ("x", "weight", "target", "chunk_size"),
           lambda x, weight, target, chunk_size: F.cross_entropy(F.linear(x, weight), target))


class Called:
    """A function seen as a Function: ``Called(f).apply(...)`` is ``f(...)``, so the shared
    checks, which call ``.apply``, grade a plain function built on a Function."""

    def __init__(self, function):
        self.function = function

    def apply(self, *args):
        return self.function(*args)


def lce_values(N: int, d: int, V: int, chunk_size: int, device, *, seed=0,
               dtype=torch.float64) -> dict:
    target = torch.randint(0, V, (N,), generator=torch.Generator().manual_seed(seed))
    return {"x": sample((N, d), device, seed=seed + 1).to(dtype),
            "weight": (sample((V, d), device, seed=seed + 2) / math.sqrt(d)).to(dtype),
            "target": target.to(device), "chunk_size": chunk_size}


def _sizes(values: dict) -> tuple[int, int, int, int]:
    (N, d), V = values["x"].shape, values["weight"].shape[0]
    return N, d, V, values["chunk_size"]


def _describe(values: dict) -> str:
    N, d, V, chunk = _sizes(values)
    return f"N={N}, d={d}, V={V}, chunk_size={chunk}, {str(values['x'].dtype)[6:]}"


def _truth(values: dict, grad_output=1.0):
    """The loss and (grad_x, grad_weight) by autograd through the composed ops, in float64."""
    x, weight = (values[n].detach().double().requires_grad_() for n in ("x", "weight"))
    loss = LCE.reference(x, weight, values["target"], values["chunk_size"])
    return loss.detach(), torch.autograd.grad(loss * grad_output, (x, weight))


def recognise_chunk_means(function: Called, values: dict) -> str | None:
    """The loss as the mean of each chunk's mean, which is wrong when the last chunk is short."""
    try:
        with torch.no_grad():
            loss = function.apply(*make_inputs(values, requires_grad=False).values())
    except Exception:  # the learner's code may raise anything: the first hint stands
        return None
    x, weight, target, chunk = (values[n] for n in ("x", "weight", "target", "chunk_size"))
    means = [F.cross_entropy(x[s:s + chunk] @ weight.T, target[s:s + chunk])
             for s in range(0, len(target), chunk)]
    if len(target) % chunk and torch.allclose(loss.double(), torch.stack(means).mean().double()):
        return (f"{NAME} averages the chunks' means: its loss is the mean of the {len(means)} "
                f"chunks' means, so the rows of the short last chunk ({len(target) % chunk} of "
                f"N={len(target)}, chunk_size={chunk}) weigh more than the others; the loss "
                "is the mean over the N rows")
    return None


@contextmanager
def naming_chunk_means(function: Called, values: dict):
    """A GradingError raised inside, named as the mean of chunk means, or each chunk's G over
    its own rows, where that is the cause."""
    try:
        yield
    except GradingError as error:
        if hint := recognise_chunk_means(function, values):
            raise GradingError(hint, str(error),
                               mistake="linear_cross_entropy/averages-chunk-means") from error
        if hint := recognise_chunk_rows(function, values):
            raise GradingError(hint, str(error),
                               mistake="linear_cross_entropy/divides-chunk-by-its-rows") from error
        raise


def check_lce_saved(function: Called, values: dict) -> None:
    """O(Nd + Vd): tensors of x's or weight's shape, the inputs, and any tensor no larger than
    the larger of them (per-row numbers, an (N, 2) stack); what the Function's node keeps
    (ctx.save_for_backward), not what an autograd call inside forward saved for its own graph
    and freed when it returned. A chunk of logits or G, (c, V) with c > d, is refused."""
    inputs = make_inputs(values)
    output = function.apply(*inputs.values())
    node = getattr(output, "grad_fn", None)
    N, d, V, _ = _sizes(values)
    shapes = {tuple(values["x"].shape), tuple(values["weight"].shape)}
    for saved in getattr(node, "saved_tensors", ()):
        if (isinstance(saved, torch.Tensor) and _role(saved, inputs, [output]) == "intermediate"
                and tuple(saved.shape) not in shapes and saved.numel() > max(N, N * d, V * d)):
            raise GradingError(f"LinearCrossEntropy saves a tensor of shape {tuple(saved.shape)} "
                               f"({saved.numel()} elements at N={N}, d={d}, V={V}), more than x "
                               "or weight holds: what forward keeps for backward is O(Nd + Vd); "
                               "can backward do without this one?")


def _grads(function: Called, values: dict, grad_outputs, requires_grad=True):
    """Backpropagate each of ``grad_outputs`` in turn through one forward (the graph
    retained): the list of gradients (of the inputs that require grad) after each."""
    inputs = make_inputs(values, requires_grad=requires_grad)
    try:  # no saved-tensor hooks here: with them autograd does not check saved versions
        output = function.apply(*inputs.values())
    except (NotImplementedError, GradingError):
        raise
    except Exception:
        run_forward(function, LCE, make_inputs(values, requires_grad=requires_grad))
        raise  # run_forward raised its hint above, unless the error came and went
    found = []
    for grad_output in grad_outputs:
        grad_output = torch.tensor(grad_output, dtype=output.dtype, device=output.device)
        wanted = [inputs[n] for n in ("x", "weight") if inputs[n].requires_grad]
        try:
            grads = torch.autograd.grad(output, wanted, grad_output, retain_graph=True)
        except RuntimeError as error:
            if "modified by an inplace operation" in str(error):
                raise GradingError(
                    "LinearCrossEntropy.backward scaled its saved gradients in place: a second "
                    "backward (retain_graph=True, or a loss used twice) finds what forward "
                    "saved changed; in your backward, which tensor holds the product with "
                    "grad_output, and what will the next backward read from it?", str(error),
                    mistake="linear_cross_entropy/scales-saved-in-place") from error
            if _reads_grad_mode_in_forward(function, values, requires_grad):
                raise GradingError(
                    f"{NAME} gave no gradient for an input that requires grad, and gives it when "
                    "torch.is_grad_enabled() answers True inside forward: forward asks it, and "
                    "apply always turns grad mode off around forward; ask in "
                    "linear_cross_entropy, where the caller's grad mode still shows, and hand "
                    "the answer in", str(error)) from error
            raise _explain_runtime_error(LCE, "backward", error, inputs) from error
        found.append(grads)
    return found


def _reads_grad_mode_in_forward(function: Called, values: dict, requires_grad) -> bool:
    """The probe behind that hint: with torch.is_grad_enabled() answering True for one call
    (as it does in the caller while grad mode is on), every needed gradient comes back."""
    inputs = make_inputs(values, requires_grad=requires_grad)
    wanted = [inputs[n] for n in ("x", "weight") if inputs[n].requires_grad]
    real = torch.is_grad_enabled
    torch.is_grad_enabled = lambda: True
    try:
        output = function.apply(*inputs.values())
        grads = torch.autograd.grad(output, wanted, torch.ones_like(output), allow_unused=True)
    except Exception:  # the learner's code may raise anything: the first hint stands
        return False
    finally:
        torch.is_grad_enabled = real
    return all(grad is not None for grad in grads)


def check_scaling(function: Called, values: dict, grad_output: float = 3.0) -> None:
    """A loss multiplied by ``grad_output`` gives that many times the gradients."""
    with case(_describe(values) + f", grad_output={grad_output:g}"):
        (grads,) = _grads(function, values, [grad_output])
        _, unit = _truth(values)
        _, truth = _truth(values, grad_output)
        for name, grad, one, true in zip(("x", "weight"), grads, unit, truth):
            if grad_output != 1 and torch.allclose(grad.double(), one):
                raise GradingError(f"{NAME}'s backward ignores grad_output: a loss multiplied "
                                   f"by {grad_output:g} must give {grad_output:g} times the "
                                   f"gradients; return grad_output * grad_{name}",
                                   mistake="linear_cross_entropy/ignores-grad-output")
            if name == "x":
                check_short_chunk(grad.double(), true, values["chunk_size"])
            with naming_chunk_means(function, values):
                diagnose_gradient(name, grad.double(), true)


def check_short_chunk(grad_x: torch.Tensor, true: torch.Tensor, chunk: int) -> None:
    """grad_x wrong on the rows of a short last chunk only: the loop stopped before it."""
    rows = len(grad_x)
    short = rows % chunk
    if short and rows > short and torch.allclose(grad_x[:-short], true[:-short]) and \
            not torch.allclose(grad_x[-short:], true[-short:]):
        raise GradingError(f"{NAME}'s grad_x is right on every row but the last {short} of "
                           f"{rows}, the short last chunk (chunk_size={chunk}): does the loop "
                           "reach it? Step through range(0, N, chunk_size); the last slice is "
                           "simply shorter", mistake="linear_cross_entropy/misses-short-chunk")


def check_retained_backward(function: Called, values: dict) -> None:
    """Two backward calls through one forward (retain_graph) give the same gradients twice."""
    with case(_describe(values) + ", backward twice with retain_graph=True"):
        first, second = _grads(function, values, [2.0, 2.0])
        _, truth = _truth(values, 2.0)
        for name, one, two, true in zip(("x", "weight"), first, second, truth):
            diagnose_gradient(name, one.double(), true)
            if torch.allclose(two.double(), 2 * true):
                raise GradingError(
                    f"{NAME}'s second backward gives twice the gradient of the first: backward "
                    "scaled its saved gradients in place, so the second walk read the first's "
                    "product; in your backward, which tensor holds the product with "
                    "grad_output?", mistake="linear_cross_entropy/scales-saved-in-place")
            diagnose_gradient(name, two.double(), true)


def _flops(call) -> int:
    with CountFlops() as counter:
        call()
    return counter.total


def check_grad_mode(function: Called, values: dict) -> None:
    """The forward's work only (about 2 N d V FLOPs) when neither input requires grad, then
    under no_grad; the loss right either way. That order lets each message name what its
    probe proved: the first case fails only if forward ignores ctx.needs_input_grad; the
    second, once the first passed, only if grad mode never reaches forward."""
    N, d, V, _ = _sizes(values)
    needed = 2 * N * d * V
    reference = LCE.reference(**make_inputs(values, requires_grad=False))
    with case(_describe(values)):
        for situation, grad_mode, requires_grad in (
                ("with neither x nor weight requiring grad", True, False),
                ("under torch.no_grad()", False, True)):
            inputs = make_inputs(values, requires_grad=requires_grad)
            held = {}

            def call():
                with torch.set_grad_enabled(grad_mode):
                    held["loss"] = function.apply(*inputs.values())

            flops = _flops(call)
            diagnose_values(f"{NAME}'s loss {situation}", held["loss"], reference)
            if flops > 1.5 * needed and grad_mode:
                raise GradingError(
                    f"{situation} {NAME} did {flops} FLOPs where the loss alone needs "
                    f"{needed}: forward computes gradients although ctx.needs_input_grad is "
                    "(False, False): which of your gradients does forward compute without "
                    "asking whether it is wanted?",
                    mistake="linear_cross_entropy/ignores-needs-input-grad")
            if flops > 1.5 * needed:
                question = ("one gradient's worth more: does what your code does with the "
                            "caller's grad mode reach both x and weight?" if flops < 2.5 * needed
                            else "where in your code is the caller's grad mode still visible, "
                            "and how could forward learn of it?")
                raise GradingError(
                    f"{situation} {NAME} did {flops} FLOPs where the loss alone needs "
                    f"{needed}: forward skips the gradients when no input requires grad, but "
                    "not under no_grad, where ctx.needs_input_grad still says True and forward "
                    f"cannot see grad mode (Step 3's printout); {question}",
                    mistake="linear_cross_entropy/no-grad-mode-check")


def check_backward_only_scales(function: Called, values: dict) -> None:
    """The work bound: forward and backward together, both gradients needed, at most one matrix
    product beyond the composed loss's three (8 N d V FLOPs): the logits recomputed once, in
    backward or in a second pass, is allowed; more is refused."""
    N, d, V, _ = _sizes(values)
    inputs = make_inputs(values)
    held = {}

    def step():
        held["output"] = run_forward(function, LCE, inputs).output
        run_backward(LCE, held["output"], inputs, torch.ones_like(held["output"]))

    with case(_describe(values)):
        flops = _flops(step)
    budget = 4 * 2 * N * d * V
    if flops > budget + N * d * V:
        raise GradingError(
            f"{NAME}'s forward and backward together did {flops} FLOPs of matrix products "
            f"({flops / (2 * N * d * V):.1f} x 2NdV at {_describe(values)}) where the bound is "
            f"about {budget} (4 x 2NdV: the composed loss's three products and one more): which "
            "product does your Function do more than twice, or which does it do that no "
            "gradient needs?")


def check_one_gradient(function: Called, values: dict) -> None:
    """With one input needing a gradient, about 2 N d V FLOPs fewer than with both. Judged
    only where the counter saw both gradients' work (with both needed, at least 1.5 x 2NdV
    above the loss alone): an unneeded gradient is named only once it was seen computed."""
    N, d, V, _ = _sizes(values)
    product = 2 * N * d * V  # the logits', or one gradient's

    def total(wanted):
        return _flops(lambda: _grads(function, values, [1.0], requires_grad=wanted))

    both = total({"x", "weight"})
    loss_only = _flops(lambda: function.apply(*make_inputs(values, requires_grad=False).values()))
    seen = both - loss_only >= 0.75 * 2 * product
    for name, other in (("x", "weight"), ("weight", "x")):
        with case(_describe(values) + f", only {name} requiring grad"):
            (grads,) = _grads(function, values, [1.0], requires_grad={name})
            _, truth = _truth(values)
            diagnose_gradient(name, grads[0].double(), truth[("x", "weight").index(name)])
            spent = total({name})
            if seen and spent > both - 0.75 * product:
                raise GradingError(
                    f"with only {name} requiring grad, {NAME} did {spent} FLOPs, where both "
                    f"gradients cost {both} and the loss alone {loss_only}: grad_{other}'s "
                    f"{product} are still spent, though {other} does not require grad; what "
                    f"does forward know about which gradients are wanted, and what does your "
                    f"code do with it for grad_{other}?")
