"""Lesson 05, transfer: ReversibleCoupling, ``(y1, y2) = (x1 + f(x2), x2 + g(y1))`` (RevNet).
Forward saves only the outputs; backward rebuilds x2 = y2 - g(y1), x1 = y1 - f(x2), recomputes
under grad and lets f's and g's parameters accumulate .grad. Graded with ``.backward()``."""

import torch
from torch import nn

from ...checks import Spec, case, check_is_function, make_inputs, run_forward
from ...contract import EACH_INPUT_ALONE, covers
from ...diagnose import diagnose_gradient, diagnose_values
from ...domain import RECOMPUTES_CLAUSE, Domain
from ...errors import GradingError
from ...explain import _explain_runtime_error
from ...exercise import Exercise, sample
from .checkpoint_blocks import (WIDTH, _linear, check_parameter_grads, clear_grads,
                                coupling_values, custom_nodes, parameters_of, refuse_reentry,
                                watch_calls)
from .reversible_saves import (check_outputs_kept, check_saves_only_outputs,
                               recomputed_in_other_dtype)
from .second_use import check_coupling_second_use
from .frozen_parameters import check_coupling_frozen
from .zero_gradient import check_coupling_zero_gradient


def coupling(x1, x2, f, g):
    y1 = x1 + f(x2)
    return y1, x2 + g(y1)


REVERSIBLE = Spec("ReversibleCoupling", ("x1", "x2", "f", "g"), coupling)


_CALLS: list = []  # (block, its input, under grad) for every call of f or g
_GRAD_ON: list = []  # the blocks called while grad mode was on


def _record(name: str):
    def hook(module, args) -> None:
        _GRAD_ON.extend([name] if torch.is_grad_enabled() else [])
        if args and isinstance(args[0], torch.Tensor):
            _CALLS.append((name, args[0].detach().clone(),
                           torch.is_grad_enabled() and args[0].requires_grad))
    return hook


def _blocks(device, seed: int = 0, dtype=torch.float64):
    f = nn.Sequential(_linear(WIDTH, WIDTH, device, seed), nn.Tanh()).to(dtype)
    g = nn.Sequential(_linear(WIDTH, WIDTH, device, seed + 2), nn.Softplus()).to(dtype)
    for name, block in (("f", f), ("g", g)):
        block.register_forward_pre_hook(_record(name))
    return f, g


REENTERED = (
    "ReversibleCoupling.backward backpropagated a graph that leads back into ReversibleCoupling "
    "itself, so backward re-entered this very backward, without end (the cell would hang): the "
    "saved y1 and y2 belong to this node's graph; backpropagate only what you recomputed from "
    "fresh leaves (x1 and x2 reconstructed, then .detach().requires_grad_()), never y1, y2 or a "
    "tensor computed from them with autograd on")


def _values(shape, device, seed: int = 0, dtype=torch.float64, *,
            transposed: bool = False) -> dict:
    """x1, x2 of ``shape`` (``transposed``: views of a transposed tensor, so that y1 and y2
    come out transposed too) and blocks f and g of their own, all in ``dtype``."""
    f, g = _blocks(device, seed, dtype)

    def made(seed):
        if transposed:
            return sample(shape[::-1], device, seed=seed, dtype=dtype).mT
        return sample(shape, device, seed=seed, dtype=dtype)
    return {"x1": made(seed + 20), "x2": made(seed + 21), "f": f, "g": g}


def _parameters(values: dict) -> dict:
    return {f"{block}.{name}": p for block in ("f", "g")  # a frozen one is no leaf
            for name, p in parameters_of(values[block]).items() if p.requires_grad}


def _reference(values: dict, grad_outputs):
    """The outputs, and the true gradients of x1, x2 and every parameter of f and g."""
    inputs = make_inputs(values)
    outputs = coupling(*inputs.values())
    parameters = _parameters(values)
    leaves = [inputs["x1"], inputs["x2"], *parameters.values()]
    used = [(o, go) for o, go in zip(outputs, grad_outputs) if go is not None]
    grads = torch.autograd.grad([o for o, _ in used], leaves, [go for _, go in used],
                                allow_unused=True)  # None: a parameter the loss never reaches
    return ([o.detach() for o in outputs], dict(zip(("x1", "x2"), grads[:2])),
            dict(zip(parameters, grads[2:])))


def _backward(outputs, grad_outputs, inputs: dict) -> None:
    used = [(o, go) for o, go in zip(outputs, grad_outputs) if go is not None]
    try:
        backward = torch.autograd.backward  # bound before watch_calls: not the learner's call
        with refuse_reentry(custom_nodes(outputs, whole_graph=False), REENTERED), watch_calls():
            backward([o for o, _ in used], [go for _, go in used])
    except (NotImplementedError, GradingError):
        raise
    except RuntimeError as error:
        if "does not require grad and does not have a grad_fn" in str(error):
            raise GradingError(
                "ReversibleCoupling.backward recomputed f and g with gradients off (autograd "
                "disables them inside backward): recompute inside torch.enable_grad()",
                str(error), mistake="ReversibleCoupling/recomputes-without-grad") from error
        if (cast := recomputed_in_other_dtype(_CALLS, inputs)) is not None:
            raise cast from error
        raise _explain_runtime_error(REVERSIBLE, "backward", error, inputs) from error


def check_coupling(function, values: dict, *, unused: int | None = None,
                   accumulate: bool = False) -> None:
    """Outputs, what forward saved, then the gradients of x1, x2 and the parameters."""
    parameters = _parameters(values)
    generator = torch.Generator().manual_seed(5)
    x1 = values["x1"]
    grad_outputs = [torch.randn(x1.shape, generator=generator, dtype=x1.dtype).to(x1.device)
                    for _ in range(2)]
    if unused is not None:
        grad_outputs[unused] = None
    expected, truth, parameter_truth = _reference(values, grad_outputs)
    clear_grads(parameters)
    inputs = make_inputs(values)
    _GRAD_ON.clear()
    forward = run_forward(function, REVERSIBLE, inputs)
    outputs = forward.output
    if not (isinstance(outputs, tuple) and len(outputs) == 2):
        raise GradingError("ReversibleCoupling must return the two outputs (y1, y2) as a tuple")
    for name, got, want in zip(("y1", "y2"), outputs, expected):
        diagnose_values(f"ReversibleCoupling's {name}", got, want)
    check_saves_only_outputs(forward, inputs, list(_GRAD_ON))
    _CALLS.clear()
    _backward(outputs, grad_outputs, inputs)
    calls = list(_CALLS)  # backward's own calls of f and g, before any probe's
    check_outputs_kept(outputs)
    known = {"x1": values["x1"], "x2": values["x2"], "y1": expected[0], "y2": expected[1]}
    try:
        for name in ("x1", "x2"):
            diagnose_gradient(name, inputs[name].grad, truth[name])
    except GradingError as error:
        grads = [inputs[name].grad for name in ("x1", "x2")]
        grads = grads if all(isinstance(g, torch.Tensor) for g in grads) else None
        if hint := (_inversion_hint(calls, known, grads, truth)
                    or _dropped_path_hint(values, grad_outputs, grads, truth)
                    or _lost_path_hint(values, grad_outputs, grads, truth)
                    or _recorded_inversion_hint(values, grads, truth)
                    or _rebuilt_wrong_hint(calls, known, values)):
            raise GradingError(hint, str(error), mistake={
                "x1 and x2 swapped": "ReversibleCoupling/gradients-swapped",
                "so the inputs it rebuilt": "ReversibleCoupling/inverts-wrong-tensor",
                "never ran g under grad": "ReversibleCoupling/g-not-under-grad",
                "a loss that ignores": "ReversibleCoupling/drops-an-output-gradient",
                "was recorded": "ReversibleCoupling/records-inversion",
                "misses grad_y2's direct term": "ReversibleCoupling/drops-direct-term",
                "not on the rebuilt z1": "ReversibleCoupling/g-on-own-leaf",
                "rebuilt x1 wrong": "ReversibleCoupling/wrong-inverse",
                "rebuilt x2 wrong": "ReversibleCoupling/wrong-inverse"}) from error
        raise
    _check_parameters(parameters, parameter_truth)
    if accumulate:
        before = {name: p.grad.clone() for name, p in parameters.items()}
        inputs = make_inputs(values)
        _backward(function.apply(*inputs.values()), grad_outputs, inputs)
        _check_parameters(parameters, parameter_truth, before)


def _close(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.shape == b.shape and torch.allclose(a, b, rtol=1e-6, atol=1e-9)


def _inversion_hint(calls: list, known: dict, grads, truth: dict) -> str | None:
    """The cause of wrong input gradients, when what backward did proves it: which tensor f
    and g were called on (f should see x2, g should see y1), or the two gradients swapped.
    ``grads``: x1's and x2's, None unless both are tensors."""
    if grads is not None and _close(grads[0], truth["x2"]) \
            and _close(grads[1], truth["x1"]) and not _close(truth["x1"], truth["x2"]):
        return ("ReversibleCoupling.backward returned the gradients of x1 and x2 swapped: "
                "return them in the order of forward's inputs, (grad_x1, grad_x2, None, None)")
    right = {"f": "x2", "g": "y1"}
    for block, seen, _ in calls:
        for wrong in ("y2", "y1", "x1", "x2"):
            if wrong != right[block] and _close(seen, known[wrong]) \
                    and not _close(seen, known[right[block]]):
                equation = "y1 = x1 + f(x2)" if block == "f" else "y2 = x2 + g(y1)"
                return (f"ReversibleCoupling.backward called {block} on {wrong}, but {block} "
                        f"takes {right[block]} ({equation}), so the inputs it rebuilt are "
                        "not the ones forward saw: check which tensor each equation feeds "
                        f"{block}, and which equation has a single unknown first")
    if any(block == "g" for block, _, _ in calls) and \
            not any(block == "g" and tracked for block, _, tracked in calls):
        return ("ReversibleCoupling.backward never ran g under grad on a tensor that requires "
                "grad, so no gradient flows through g to x1, x2 or f's parameters: in your "
                "recomputation, what is g's input built from, and is autograd recording then?")
    return None


def _dropped_path_hint(values: dict, grad_outputs: list, grads, truth: dict) -> str | None:
    """Proved only when both returned gradients are exactly those of the same loss with one
    incoming gradient set to zero (and that loss's gradients differ from the true ones)."""
    if None in grad_outputs or grads is None:
        return None
    for dropped, kept in ((0, 1), (1, 0)):
        partial = list(grad_outputs)
        partial[dropped] = None
        _, without, _ = _reference(values, partial)
        if all(_close(g, without[n]) and not _close(without[n], truth[n])
               for g, n in zip(grads, ("x1", "x2"))):
            return (f"ReversibleCoupling.backward returned the gradients of a loss that ignores "
                    f"y{dropped + 1}: grad_y{dropped + 1} never reached the recomputed graph, "
                    f"only grad_y{kept + 1} did. Both outputs carry a gradient: backpropagate "
                    "both recomputed outputs, each with its own incoming gradient")
    return None


def _lost_path_hint(values: dict, grad_outputs: list, grads, truth: dict) -> str | None:
    """Proved only when the returned gradients are exactly those of a known lost path: x2's
    without grad_y2's direct term (x1's right), or both without grad_y2's path through g (g
    recomputed on a leaf of its own), and differ from the true ones. One vjp of f at most."""
    if None in grad_outputs or grads is None:
        return None
    grad_y1, grad_y2 = grad_outputs
    if _close(grads[0], truth["x1"]) and _close(grads[1], truth["x2"] - grad_y2) \
            and not _close(grad_y2, torch.zeros_like(grad_y2)):
        return ("ReversibleCoupling.backward's gradient for x2 misses grad_y2's direct term "
                "(x1's is right): x2 reaches y2 directly, y2 = x2 + g(y1), as well as through "
                "f, so its gradient is grad_y2 plus f's vector-Jacobian product with y1's total "
                "gradient; yours is that product alone")
    if not _close(grads[0], grad_y1) or _close(grad_y1, truth["x1"]):
        return None
    x2 = values["x2"].detach().requires_grad_()
    with torch.enable_grad():
        through_f, = torch.autograd.grad(values["f"](x2), x2, grad_y1)
    if not _close(grads[1], grad_y2 + through_f):
        return None
    return ("ReversibleCoupling.backward's gradients are those of a graph where g ran on a leaf "
            "of its own, not on the rebuilt z1 = x1 + f(x2): grad_y2's path through g stops at "
            "that leaf and never reaches x1 or x2 (x1's gradient came out as grad_y1 alone): "
            "which tensor of your rebuilt graph should g be fed, so that both paths meet?")


def _recorded_inversion_hint(values: dict, grads, truth: dict) -> str | None:
    """Proved only when x1's gradient is right and x2's is exactly the true one minus f's
    vector-Jacobian product with it: what a recorded rebuild of x1 from x2 adds."""
    if grads is None or not _close(grads[0], truth["x1"]):
        return None
    x2 = values["x2"].detach().requires_grad_()
    with torch.enable_grad():
        through_x1, = torch.autograd.grad(values["f"](x2), x2, truth["x1"])
    if _close(through_x1, torch.zeros_like(through_x1)) \
            or not _close(grads[1], truth["x2"] - through_x1):
        return None
    return ("ReversibleCoupling.backward's gradient for x2 is the true one minus f's "
            "vector-Jacobian product with x1's gradient, which is what autograd adds when the "
            "step that rebuilt x1 from x2 was recorded: x2's gradient then also flows back "
            "through that step. Does the reconstruction belong in the graph you differentiate? "
            "(Hint 1 of the exercise asks it)")


def _near(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Equal but for rounding (the inverse's and the recomputation's, in float32 too)."""
    return a.shape == b.shape and torch.allclose(a, b, rtol=1e-4, atol=1e-6)


def _rebuilt_wrong_hint(calls: list, known: dict, values: dict) -> str | None:
    """The input backward rebuilt wrong, from what the recomputation (under grad) fed f and g:
    f must see x2 itself, g the rebuilt x1 + f(x2), which is y1 where x1 was rebuilt right."""
    fed = {block: seen for block, seen, tracked in calls if tracked}  # the last call of each
    if "f" not in fed:
        return None
    with torch.no_grad():
        f_x2, g_y1 = values["f"](known["x2"]), values["g"](known["y1"])
    if not _near(fed["f"], known["x2"]):
        sign = _near(fed["f"], known["y2"] + g_y1)
        return ("ReversibleCoupling.backward rebuilt x2 wrong: the recomputation ran f on "
                + ("x2 rebuilt as y2 + g(y1), not" if sign else "a tensor that is not")
                + " the x2 forward saw: from y2 = x2 + g(y1), which x2 gives back the y2 "
                "forward saved?")
    if "g" not in fed or _near(fed["g"], known["y1"]):
        return None
    sign = _near(fed["g"] - f_x2, known["y1"] + f_x2)
    return ("ReversibleCoupling.backward rebuilt x1 wrong: the recomputation ran g on x1 + f(x2) "
            + ("with x1 rebuilt as y1 + f(x2), not" if sign else "with an x1 that is not")
            + " the x1 forward saw (x2 was rebuilt right): from y1 = x1 + f(x2), which x1 gives "
            "back the y1 forward saved?")


def _check_parameters(parameters: dict, truth: dict, before: dict | None = None) -> None:
    check_parameter_grads("ReversibleCoupling", "f and g", parameters, truth, before=before,
                          missing="the parameters of f and g got no gradient ({name}.grad is None)")


def check_each_input_alone(function, values: dict) -> None:
    """x1, then x2, as the only input that requires grad, through ``.backward()`` (not
    contract.check_each_input_alone: its FLOP counter's hooks on f and g would reject a correct
    backward that calls autograd.grad on the parameters itself)."""
    covers(EACH_INPUT_ALONE)
    generator = torch.Generator().manual_seed(6)
    grad_outputs = [torch.randn(values["x1"].shape, generator=generator,
                                dtype=values["x1"].dtype).to(values["x1"].device) for _ in range(2)]
    _, truth, _ = _reference(values, grad_outputs)
    for name in ("x1", "x2"):
        inputs = make_inputs(values, requires_grad={name})
        with case(f"{name} alone requiring grad"):
            outputs = run_forward(function, REVERSIBLE, inputs).output
            _backward(outputs, grad_outputs, inputs)
            diagnose_gradient(name, inputs[name].grad, truth[name])


def full(submission, device) -> None:
    function = check_is_function(submission, REVERSIBLE)
    for seed, shape in enumerate([(4, WIDTH), (2, 3, WIDTH)]):
        with case(f"x1 and x2 of shape {shape}"):
            check_coupling(function, _values(shape, device, seed), accumulate=seed == 0)
    covers("parameters accumulate .grad")
    # what forward saves, where a copy of an output is a new tensor: float32 outputs (a float64
    # copy saved "for accuracy" is one) and transposed ones (so is a .contiguous() copy)
    with case("x1 and x2 in float32, of shape (3, 5)"):
        check_coupling(function, _values((3, WIDTH), device, 5, torch.float32))
    with case("x1 and x2 transposed views, of shape (4, 5)"):
        check_coupling(function, _values((4, WIDTH), device, 6, transposed=True))
    for unused, name in ((1, "y2"), (0, "y1")):
        with case(f"a loss that does not use {name}"):
            check_coupling(function, _values((3, WIDTH), device, 3), unused=unused)
    covers("one output unused")
    check_each_input_alone(function, _values((3, WIDTH), device, 4))
    check_coupling_second_use(function, lambda: _values((3, WIDTH), device, 8))
    with case("f = Linear then Tanh with its Linear frozen (requires_grad=False), shape (3, 5)"):
        check_coupling_frozen(function, _values((3, WIDTH), device, 9), check_coupling)
    for dtype in (torch.float64, torch.float32):
        values = _values((3, WIDTH), device, 10, dtype)
        check_coupling_zero_gradient(function, values, _parameters(values))


LATER_IN_LESSON = True  # the lesson's transfer exercise, after checkpoint_sequential
EXERCISES = [
    Exercise("ReversibleCoupling", "05_checkpointing", full,
             contract=("parameters accumulate .grad", "one output unused"),
             domain=Domain(REVERSIBLE, coupling_values, by_hand=False,
                           by_hand_clause=RECOMPUTES_CLAUSE)),
]
