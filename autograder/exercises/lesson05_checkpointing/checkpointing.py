"""Lesson 05: CheckpointFunction, graded the way it is used: ``loss.backward()``.

(PyTorch's own reentrant checkpoint refuses ``torch.autograd.grad`` by design, so the battery
never calls it on the learner's Function, and the checks generated from its domain reach it
through ``checkpoint_backward.through_backward``.)"""

import torch
from torch import nn

from ...checks import case, check_is_function, make_inputs, run_forward
from ...contract import EACH_INPUT_ALONE, covers
from ...diagnose import diagnose_values
from ...domain import RECOMPUTES_CLAUSE, Domain
from ...errors import GradingError
from ...exercise import Exercise, sample
from ...function_contract import rule_reference
from ...none_paths import returned_gradients
from .checkpoint_backward import (CHECKPOINT, _backward, _check_input_grads,
                                  _check_no_gradient_unasked, _check_parameter_grads,
                                  _domain_values, _spec_for, through_backward)
from .checkpoint_blocks import (WIDTH, _linear, clear_grads, fork_rng, layer_stack,
                                learner_raised, mlp_block, parameters_of, reference)
from .random_state import check_random_state
from .checkpoint_calls import check_two_calls
from .checkpoint_reuse import check_reuse
from .argument_order import name_arguments_out_of_order, recording_arguments
from .argument_probes import (check_argument_dtypes, check_ignored_input,
                              check_recompute_dtypes, check_repeated_argument)
from .checkpoint_saves import check_saves_only_inputs
from .second_use import check_checkpoint_second_use
from .frozen_parameters import (check_checkpoint_eval_mode, check_checkpoint_frozen,
                                check_frozen_with_dummy, check_identity_run_fn)
from .zero_gradient import check_checkpoint_zero_gradient

__all__ = ["CHECKPOINT", "WIDTH", "layer_stack", "mlp_block"]


def _check_leaves_require_grad(inputs: dict, grads: tuple, calls: list) -> None:
    """A None gradient for an input that requires grad, where the probe saw the recomputation
    (run_fn's last call, in backward) given that argument not requiring grad: the fresh leaf
    was never made to require grad, so the recomputation could not give it a gradient."""
    if len(calls) < 2:  # run_fn not seen recomputing: nothing proven
        return
    tensors = [name for name, value in inputs.items() if torch.is_tensor(value)]
    for name, grad, required in zip(tensors, (g for n, g in zip(inputs, grads)
                                              if torch.is_tensor(inputs[n])), calls[-1]):
        if grad is None and inputs[name].requires_grad and not required:
            raise GradingError(
                f"backward returned None for {name}: the recomputation ran run_fn on a copy of "
                f"{name} that did not require grad, so it gave {name} no gradient: which of "
                "the fresh leaves must require grad, and where does backward read which inputs "
                "needed a gradient? (Function contract, rule 2)",
                mistake="CheckpointFunction/leaves-without-grad")


def check_block(function, run_fn, values: dict, wanted: set, parameters: dict, *,
                accumulate: bool = False) -> None:
    """Forward against run_fn, then the gradients of the inputs and of the parameters used
    inside run_fn; with ``accumulate`` a second call must add to the parameters' .grad."""
    spec = _spec_for(values)
    arguments = {name: value for name, value in values.items() if name != "run_fn"}
    expected, grad_output, truth, parameter_truth = reference(run_fn, arguments, wanted,
                                                               parameters)
    clear_grads(parameters)
    inputs = make_inputs(values, requires_grad=wanted)
    calls, dtypes = [], []  # requires_grad and dtype of the tensor arguments, at each call
    hook = (run_fn.register_forward_pre_hook(lambda _, args: calls.append(
                [a.requires_grad for a in args if torch.is_tensor(a)]) or dtypes.append(
                [a.dtype for a in args if torch.is_tensor(a)]))
            if isinstance(run_fn, nn.Module) else None)
    returned = []  # what backward returned for the tensor arguments, as autograd got it
    handles = [] if hook is None else [hook]
    try:
        forward = run_forward(function, spec, inputs)
        diagnose_values("CheckpointFunction's output", forward.output, expected)
        check_saves_only_inputs(forward, inputs, function)
        node = getattr(forward.output, "grad_fn", None)
        if isinstance(node, torch.autograd.function.BackwardCFunction):
            handles.append(node.register_hook(lambda given, _: returned.append(given)))
        try:
            grads = _backward(spec, forward.output, inputs, grad_output)
        except GradingError as error:
            check_recompute_dtypes(dtypes, error)
            raise
    finally:
        for handle in handles:
            handle.remove()
    check_recompute_dtypes(dtypes)
    _check_leaves_require_grad(inputs, grads, calls)
    _check_input_grads(inputs, grads, truth)
    _check_parameter_grads(parameters, parameter_truth,
                           function_run_fn=not isinstance(run_fn, nn.Module))
    _check_no_gradient_unasked(inputs, returned)
    if accumulate:
        before = {name: p.grad.clone() for name, p in parameters.items()}
        inputs = make_inputs(values, requires_grad=wanted)
        forward = run_forward(function, spec, inputs)
        _backward(spec, forward.output, inputs, grad_output)
        _check_parameter_grads(parameters, parameter_truth, before=before)


# --------------------------------------------------------------------------- CheckpointFunction
def _several_inputs(device, *, seed: int = 0, b_requires_grad: bool = True):
    """run_fn(a, scale, b, use_tanh, keep): tensors (b transposed, so a copy of it made with
    .contiguous() is a new tensor), a float, a bool and a boolean mask."""
    layer = _linear(WIDTH, WIDTH, device, seed)

    def run_fn(a, scale, b, use_tanh, keep):
        h = layer(a) * scale + b * a
        h = torch.tanh(h) if use_tanh else h
        return h * keep

    values = {"run_fn": run_fn, "a": sample((3, WIDTH), device, seed=seed + 5), "scale": 0.7,
              "b": sample((WIDTH, 3), device, seed=seed + 6).t(), "use_tanh": True,
              "keep": sample((3, WIDTH), device, seed=seed + 7) > -0.5}
    wanted = {"a", "b"} if b_requires_grad else {"a"}
    return run_fn, values, wanted, parameters_of(layer)


SEVERAL = ("run_fn(a, scale, b, use_tanh, keep): tensors (b transposed), a float, a bool and a "
           "boolean mask")


def _none_before_a_tensor(device, *, seed: int = 3):
    """run_fn(bias, x) with bias None: an optional argument left out, before a tensor."""
    layer = _linear(WIDTH, WIDTH, device, seed)

    def run_fn(bias, x):
        h = layer(x)
        return h if bias is None else h + bias

    values = {"run_fn": run_fn, "bias": None, "x": sample((3, WIDTH), device, seed=seed + 5)}
    return run_fn, values, {"x"}, parameters_of(layer)


def check_none_argument(function, device) -> None:
    """A None argument before a tensor is passed back as None, the tensor as the tensor: a None
    used to mark where the tensors sat cannot be told from it."""
    run_fn, values, wanted, parameters = _none_before_a_tensor(device)
    with case("run_fn(bias, x) with bias None (an optional argument left out), x of shape (3, 5)"):
        with learner_raised(lambda error: GradingError(
                f"CheckpointFunction raised {type(error).__name__} when an argument is None "
                "(run_fn(None, x)): args may hold None like any other non-tensor, and the "
                "recomputation must get it back in its place; if None marks where a tensor "
                "sat, a None argument looks the same, so keep which positions hold tensors "
                "apart (a list of flags)", str(error),
                mistake="CheckpointFunction/none-taken-for-tensor")):
            check_block(function, run_fn, values, wanted, parameters)


def checkpoint_full(CheckpointFunction, device) -> None:
    device = torch.device(device)
    function = check_is_function(CheckpointFunction, CHECKPOINT)
    with fork_rng(device):
        for seed, shape in enumerate([(4, WIDTH), (2, 3, WIDTH), (WIDTH,)]):
            block = mlp_block(device, seed=seed)
            with case(f"run_fn = a Linear-Tanh-Linear block, x of shape {shape}"):
                check_block(function, block,
                            {"run_fn": block, "x": sample(shape, device, seed=seed)},
                            {"x"}, parameters_of(block), accumulate=seed == 0)
        for b_requires_grad in (True, False):
            run_fn, values, wanted, parameters = _several_inputs(
                device, b_requires_grad=b_requires_grad)
            run_fn, calls = recording_arguments(run_fn)
            with case(f"{SEVERAL}, b {'' if b_requires_grad else 'not '}requiring grad"):
                try:
                    check_block(function, run_fn, dict(values, run_fn=run_fn), wanted,
                                parameters)
                except (NotImplementedError, GradingError) as error:
                    if not isinstance(error, NotImplementedError):
                        name_arguments_out_of_order(calls, list(values)[1:], error)
                    raise
                except Exception as error:  # noqa: BLE001  (the learner's code raised)
                    name_arguments_out_of_order(calls, list(values)[1:], error)
                    raise
        check_none_argument(function, device)
        with case("run_fn(x, dummy) ignoring dummy, a 0-d tensor requiring grad, x of shape "
                  "(4, 5)"):
            check_ignored_input(function, device)
        check_repeated_argument(function, device)
        check_argument_dtypes(function, device)
        covers("parameters accumulate .grad")
        covers("1-D x")
        covers("non-tensor arguments")
        covers("an argument not requiring grad")
        for seed in (0, 1):
            with case("dropout inside run_fn, x of shape (4, 5)"):
                check_random_state(function, device, seed=seed)
        with case("dropout inside run_fn, a function calling a block (no module), x of shape "
                  "(4, 5)"):
            check_random_state(function, device, closure=True)
        with case("dropout drawn by F.dropout inside run_fn, a module with no nn.Dropout "
                  "among its modules, x of shape (4, 5)"):
            check_random_state(function, device, seed=2, functional=True)
        covers("dropout: the forward's random state")
        shared = _linear(WIDTH, WIDTH, device, 21)

        def twice(x):  # a parameter reached by two paths of the rebuilt graph
            return shared(torch.tanh(shared(x)))

        with case("run_fn(x) = shared(tanh(shared(x))), one Linear used twice inside run_fn"):
            check_block(function, twice, {"run_fn": twice, "x": sample((3, WIDTH), device,
                                                                         seed=22)},
                        {"x"}, parameters_of(shared))
        small = nn.Sequential(_linear(3, 3, device, 7), nn.Tanh())
        with case("run_fn = Linear(3, 3) then Tanh, x of shape (2, 3)"):
            check_block(function, small, {"run_fn": small, "x": sample((2, 3), device, seed=8)},
                        {"x"}, parameters_of(small))
        check_each_input_alone(function, device)
        check_two_calls(function, device)
        check_reuse(function, device)
        check_checkpoint_second_use(function, device)
        with case("run_fn = Linear (frozen: requires_grad=False), Tanh, Linear, x of shape "
                  "(3, 5)"):
            check_checkpoint_frozen(function, device, check_block)
        with case("run_fn = Linear (frozen), Tanh, Linear (frozen), then a trained head; x data "
                  "(no grad) and a 0-d dummy requiring grad that run_fn ignores or detaches"):
            check_frozen_with_dummy(function, device)
        with case("run_fn = Linear, Dropout(0.5), Tanh in eval mode, x of shape (3, 5)"):
            check_checkpoint_eval_mode(function, device)
        check_identity_run_fn(function, device)
        check_checkpoint_zero_gradient(function, device)


def _two_inputs(a, b):
    return torch.tanh(a) * b + a * a


def check_each_input_alone(function, device) -> None:
    """a, then b, as the only argument that requires grad: its gradient right. Through
    ``.backward()``, as the contract is used: contract.check_each_input_alone differentiates
    with autograd.grad, which PyTorch's own reentrant checkpoint refuses by design."""
    covers(EACH_INPUT_ALONE)
    values = {"run_fn": _two_inputs, "a": sample((3, 4), device, seed=11),
              "b": sample((3, 4), device, seed=12)}
    spec = _spec_for(values)
    for name in ("a", "b"):
        arguments = {n: v for n, v in values.items() if n != "run_fn"}
        _, grad_output, truth, _ = reference(_two_inputs, arguments, {name}, {})
        inputs = make_inputs(values, requires_grad={name})
        with case(f"run_fn(a, b) = tanh(a) * b + a * a, {name} alone requiring grad"):
            forward = run_forward(function, spec, inputs)
            grads = _backward(spec, forward.output, inputs, grad_output)
            _check_input_grads(inputs, grads, truth)


def check_late_requires_grad(CheckpointFunction, device) -> None:
    """Rule 2 with the Function's own arguments: a alone requires grad when forward runs, and
    b.requires_grad_() is called before backward. The fresh leaf rebuilt for b must not
    require grad (ctx.needs_input_grad fixed it at forward): a leaf made from the saved
    tensor's requires_grad gives b a gradient nobody asked for, computed for nothing; and the
    caller's b keeps no .grad (a recomputation on b itself, not on a leaf, writes one)."""
    function = check_is_function(CheckpointFunction, CHECKPOINT)
    values = {"run_fn": _two_inputs, "a": sample((3, 4), device, seed=13),
              "b": sample((3, 4), device, seed=14)}
    typical = returned_gradients(function, values, {"a"})
    if typical is None or typical["b"] is not None:
        return  # the battery's other checks name what went wrong there
    caller = {}  # the caller's b: a recomputation on it, not on a leaf of its own, writes b.grad

    def late_call(inputs):
        caller.update(inputs)
        inputs["b"].requires_grad_(True)

    late = returned_gradients(function, values, {"a"}, after_forward=late_call)
    if late is not None and late["b"] is not None:
        raise GradingError(
            "CheckpointFunction.backward returned a gradient for b when b.requires_grad_() was "
            "called after forward (with run_fn(a, b) = tanh(a) * b + a * a, only a requiring "
            "grad when forward ran), and None without that call: the leaf it rebuilt for b "
            "required grad, decided at backward time from the saved tensor; where does backward "
            "read which arguments needed a gradient when forward ran? "
            f"{rule_reference('gradients')}", mistake="CheckpointFunction/reads-requires-grad")
    if late is not None and caller["b"].grad is not None:
        raise GradingError(
            "CheckpointFunction's backward wrote the caller's b.grad when b.requires_grad_() was "
            "called after forward (with run_fn(a, b) = tanh(a) * b + a * a, only a requiring "
            "grad when forward ran), where a plain run and torch's checkpoint leave it None: it "
            "recomputed run_fn on b itself, the caller's tensor, so the graph it rebuilt ran on "
            "into b", mistake="CheckpointFunction/recomputes-on-saved-tensors")


EXERCISES = [
    Exercise("CheckpointFunction", "05_checkpointing", checkpoint_full,
             contract=("parameters accumulate .grad", "1-D x", "non-tensor arguments",
                       "an argument not requiring grad", "dropout: the forward's random state"),
             domain=Domain(CHECKPOINT, _domain_values, prepare=through_backward,
                           second_backward_may_raise=True, by_hand=False,
                           by_hand_clause=RECOMPUTES_CLAUSE,
                           cuda="the contract's GPU bullet (dropout's masks and random "
                                "stream on a CUDA argument's device), which only a grader with "
                                "a GPU checks: read that branch against it yourself"),
             last=check_late_requires_grad),
]
