"""Lesson 05: CheckpointFunction and checkpoint_sequential."""

import math
import re

import torch
from torch import nn

from ..checks import (Spec, _explain_runtime_error, check_gradcheck, check_is_function,
                      make_inputs, run_forward)
from ..diagnose import diagnose_gradient, diagnose_values
from ..errors import GradingError
from ..exercise import Exercise, sample
from ..probes import ForwardTrace

CHECKPOINT = Spec("CheckpointFunction", ("run_fn", "x"), lambda run_fn, x: run_fn(x))
SEQUENTIAL = "checkpoint_sequential"
WIDTH = 5

_COUNT = re.compile(r"returned an incorrect number of gradients \(expected (\d+), got (\d+)\)")


# ----------------------------------------------------------------------------------- blocks
def _linear(n_in: int, n_out: int, device, seed: int) -> nn.Linear:
    """A float64 Linear layer with seeded weights."""
    layer = nn.Linear(n_in, n_out, dtype=torch.float64, device=device)
    with torch.no_grad():
        layer.weight.copy_(sample((n_out, n_in), device, seed=seed) / math.sqrt(n_in))
        layer.bias.copy_(sample((n_out,), device, seed=seed + 1) / 4)
    return layer


def mlp_block(device, *, seed: int = 0, dropout: float = 0.0) -> nn.Sequential:
    """Linear, tanh, (dropout), Linear: a block with parameters and activations worth saving."""
    layers = [_linear(WIDTH, 2 * WIDTH, device, seed), nn.Tanh()]
    if dropout:
        layers.append(nn.Dropout(dropout))
    layers.append(_linear(2 * WIDTH, WIDTH, device, seed + 2))
    return nn.Sequential(*layers).train()


def layer_stack(device, n: int = 7, *, seed: int = 0) -> list[nn.Module]:
    """``n`` layers of equal width, alternating Linear and a nonlinearity."""
    nonlinear = [nn.Tanh, nn.Sigmoid, nn.Softplus]
    return [_linear(WIDTH, WIDTH, device, seed + 2 * i) if i % 2 == 0 else nonlinear[i // 2 % 3]()
            for i in range(n)]


def _parameters(module) -> dict[str, torch.Tensor]:
    if isinstance(module, (list, tuple)):
        module = nn.Sequential(*module)
    return dict(module.named_parameters())


def _clear_grads(module) -> None:
    for parameter in _parameters(module).values():
        parameter.grad = None


def _rng_states(device: torch.device) -> list[torch.Tensor]:
    states = [torch.get_rng_state()]
    if device.type == "cuda":
        states.append(torch.cuda.get_rng_state(device))
    return states


def _fork_rng(device: torch.device):
    """Keep the caller's random streams as they were, whatever grading draws."""
    return torch.random.fork_rng(devices=[device] if device.type == "cuda" else [])


# ------------------------------------------------------------------------ forward and backward
def _spec_for(values: dict) -> Spec:
    return Spec(CHECKPOINT.name, tuple(values), CHECKPOINT.reference)


def _backward(spec: Spec, output, inputs: dict, grad_output) -> tuple:
    """Backpropagate through the learner's CheckpointFunction, turning errors into hints;
    return one gradient (or None) per input. (Not probes.trace_backward: its FLOP counter's
    module hooks refuse a torch.autograd.grad nested inside an outer one.)"""
    wanted = [v for v in inputs.values() if isinstance(v, torch.Tensor) and v.requires_grad]
    try:
        grads = iter(torch.autograd.grad(output, wanted, grad_output, allow_unused=True))
        return tuple(next(grads) if isinstance(v, torch.Tensor) and v.requires_grad else None
                     for v in inputs.values())
    except (NotImplementedError, GradingError):
        raise
    except RuntimeError as error:
        message = str(error)
        if "does not require grad and does not have a grad_fn" in message:
            raise GradingError(
                "CheckpointFunction.backward recomputed run_fn with gradients off (autograd "
                "disables them inside backward): wrap the recomputation in torch.enable_grad()",
                message) from error
        if "only Tensors of floating point" in message:
            raise GradingError(
                "CheckpointFunction.backward asked for gradients of a non-float input (e.g. a "
                "boolean mask): keep each input's own setting, "
                "x.detach().requires_grad_(x.requires_grad)", message) from error
        if (match := _COUNT.search(message)) and int(match[2]) == int(match[1]) - 1:
            raise GradingError(
                f"backward returned {match[2]} gradients for {match[1]} inputs: the first "
                "input is run_fn, so return None for it first: (None, *input_grads)",
                message) from error
        raise _explain_runtime_error(spec, "backward", error, inputs) from error


def _reference(run_fn, values: dict, wanted: set, parameters: dict, grad_output=None):
    """run_fn's output and the true gradients of the wanted inputs and of the parameters."""
    inputs = make_inputs(values, requires_grad=wanted)
    output = run_fn(*inputs.values())
    if grad_output is None:
        grad_output = sample(tuple(output.shape), output.device, seed=99, dtype=output.dtype)
    leaves = [inputs[name] for name in wanted] + list(parameters.values())
    grads = torch.autograd.grad(output, leaves, grad_output, allow_unused=True)
    grads = [torch.zeros_like(leaf) if g is None else g for leaf, g in zip(leaves, grads)]
    return (output.detach(), grad_output,
            dict(zip(wanted, grads)), dict(zip(parameters, grads[len(wanted):])))


def _ctx_tensors(value, path: str):
    """(path, tensor) for every tensor reachable from a ctx attribute through containers."""
    if isinstance(value, torch.Tensor):
        yield path, value
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            yield from _ctx_tensors(item, f"{path}[{i}]")
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _ctx_tensors(item, f"{path}[{key!r}]")


def check_saves_only_inputs(forward: ForwardTrace, inputs: dict) -> None:
    """Forward keeps the tensor arguments and nothing else: no activations, in save_for_backward
    or on ctx (a random-number-generator state, a uint8 tensor, is fine on ctx)."""
    extra = [s for s in forward.saved if not s.role.startswith("input")]
    if extra:
        total = sum(s.nbytes for s in extra)
        given = sum(v.numel() * v.element_size() for v in inputs.values()
                    if isinstance(v, torch.Tensor))
        raise GradingError(
            f"CheckpointFunction kept {total} bytes of activations ({len(extra)} tensors) "
            f"besides its {given} bytes of inputs: save only the tensor arguments "
            "(ctx.save_for_backward(*tensors)) and recompute the rest in backward, "
            "with run_fn run under no grad in forward")
    for name, value in forward.ctx_attributes.items():
        for path, tensor in _ctx_tensors(value, f"ctx.{name}"):
            if tensor.dtype != torch.uint8:
                raise GradingError(
                    f"CheckpointFunction stores a tensor as {path}: pass the tensor arguments "
                    "through ctx.save_for_backward, so autograd checks them for in-place changes")


def _check_input_grads(inputs: dict, grads: tuple, truth: dict) -> None:
    for name, value in inputs.items():
        if isinstance(value, torch.Tensor) and value.grad is not None:
            raise GradingError(
                f"CheckpointFunction's backward wrote into the .grad of the caller's tensor "
                f"{name}: recompute on detached copies, x.detach().requires_grad_(x.requires_grad)")
    for name, grad in zip(inputs, grads):
        if name in truth:
            diagnose_gradient(name, grad, truth[name])


def _check_parameter_grads(parameters: dict, truth: dict, *, before: dict | None = None) -> None:
    for name, parameter in parameters.items():
        if parameter.grad is None:
            raise GradingError(
                "the parameters used inside run_fn got no gradient (.grad is None): "
                "torch.autograd.grad(outputs, inputs=...) returns gradients for the listed "
                "inputs only; call torch.autograd.backward(outputs, grad_outputs) so .grad "
                "accumulates on the parameters too, then return each input's .grad")
        if before is not None and torch.allclose(parameter.grad, truth[name]):
            raise GradingError(
                f"CheckpointFunction replaced the .grad of parameter {name} instead of adding to "
                "it: gradients accumulate; let torch.autograd.backward do the accumulating")
        expected = truth[name] if before is None else before[name] + truth[name]
        diagnose_gradient(f"parameter {name}", parameter.grad, expected)


def check_block(function, run_fn, values: dict, wanted: set, parameters: dict, *,
                accumulate: bool = False) -> None:
    """Forward against run_fn, then the gradients of the inputs and of the parameters used
    inside run_fn; with ``accumulate`` a second call must add to the parameters' .grad."""
    spec = _spec_for(values)
    arguments = {name: value for name, value in values.items() if name != "run_fn"}
    expected, grad_output, truth, parameter_truth = _reference(run_fn, arguments, wanted,
                                                               parameters)
    for parameter in parameters.values():
        parameter.grad = None
    inputs = make_inputs(values, requires_grad=wanted)
    forward = run_forward(function, spec, inputs)
    diagnose_values("CheckpointFunction's output", forward.output, expected)
    check_saves_only_inputs(forward, inputs)
    pristine = grad_output.clone()
    grads = _backward(spec, forward.output, inputs, grad_output)
    if not torch.equal(grad_output, pristine):
        raise GradingError("backward modified grad_output in place: compute a new tensor instead")
    _check_input_grads(inputs, grads, truth)
    _check_parameter_grads(parameters, parameter_truth)
    if accumulate:
        before = {name: p.grad.clone() for name, p in parameters.items()}
        inputs = make_inputs(values, requires_grad=wanted)
        forward = run_forward(function, spec, inputs)
        _backward(spec, forward.output, inputs, grad_output)
        _check_parameter_grads(parameters, parameter_truth, before=before)


def check_random_state(function, device, *, seed: int = 0) -> None:
    """With dropout inside run_fn, gradients equal an un-checkpointed run with the same seed,
    and backward leaves the caller's random streams where they were."""
    block = mlp_block(device, seed=seed, dropout=0.5)
    parameters = _parameters(block)
    values = {"run_fn": block, "x": sample((4, WIDTH), device, seed=seed + 10)}
    spec = _spec_for(values)
    on_cuda = " (and torch.cuda.get_rng_state() for CUDA tensors)" if device.type == "cuda" else ""
    with _fork_rng(device):
        torch.manual_seed(seed)
        expected, grad_output, truth, parameter_truth = _reference(
            lambda x: block(x), {"x": values["x"]}, {"x"}, parameters)
        _clear_grads(block)
        torch.manual_seed(seed)
        inputs = make_inputs(values)
        forward = run_forward(function, spec, inputs)
        if (isinstance(forward.output, torch.Tensor) and forward.output.shape == expected.shape
                and not torch.allclose(forward.output, expected)):
            raise GradingError(
                "CheckpointFunction's output with dropout inside run_fn differs from run_fn's "
                "own with the same seed: forward should run run_fn on the random state it "
                "finds (record it, don't reseed)")
        diagnose_values("CheckpointFunction's output", forward.output, expected)
        torch.rand(1000, device=device)  # layers after the block draw random numbers too
        states = _rng_states(device)
        grads = _backward(spec, forward.output, inputs, grad_output)
        try:
            _check_input_grads(inputs, grads, {"x": truth["x"]})
            _check_parameter_grads(parameters, parameter_truth)
        except GradingError as error:
            if "no gradient" in error.hint or ".grad of the caller" in error.hint:
                raise
            raise GradingError(
                "with dropout inside run_fn the gradients differ from an un-checkpointed run: "
                "the recomputation drew new random numbers; save torch.get_rng_state()"
                f"{on_cuda} in forward and restore it before recomputing", str(error)) from error
        if not all(torch.equal(a, b)
                                        for a, b in zip(states, _rng_states(device))):
            raise GradingError(
                "CheckpointFunction's backward left the global random state rewound to the "
                "forward's, so later random numbers repeat: restore it inside "
                "torch.random.fork_rng(), which puts the caller's state back afterwards")


# --------------------------------------------------------------------------- CheckpointFunction
def _several_inputs(device, *, seed: int = 0, b_requires_grad: bool = True):
    """run_fn(a, scale, b, use_tanh, keep): tensors, a float, a bool and a boolean mask."""
    layer = _linear(WIDTH, WIDTH, device, seed)

    def run_fn(a, scale, b, use_tanh, keep):
        h = layer(a) * scale + b * a
        h = torch.tanh(h) if use_tanh else h
        return h * keep

    values = {"run_fn": run_fn, "a": sample((3, WIDTH), device, seed=seed + 5), "scale": 0.7,
              "b": sample((3, WIDTH), device, seed=seed + 6), "use_tanh": True,
              "keep": sample((3, WIDTH), device, seed=seed + 7) > -0.5}
    wanted = {"a", "b"} if b_requires_grad else {"a"}
    return run_fn, values, wanted, _parameters(layer)


def checkpoint_quick(CheckpointFunction) -> None:
    function = check_is_function(CheckpointFunction, CHECKPOINT)
    with _fork_rng(torch.device("cpu")):  # building layers draws random numbers too
        block = mlp_block("cpu")
        check_block(function, block, {"run_fn": block, "x": sample((4, WIDTH), "cpu", seed=3)},
                    {"x"}, _parameters(block))
        check_block(function, *_several_inputs("cpu"))
        check_random_state(function, torch.device("cpu"))


def checkpoint_full(CheckpointFunction, device) -> None:
    device = torch.device(device)
    function = check_is_function(CheckpointFunction, CHECKPOINT)
    with _fork_rng(device):
        for seed, shape in enumerate([(4, WIDTH), (2, 3, WIDTH), (WIDTH,)]):
            block = mlp_block(device, seed=seed)
            check_block(function, block, {"run_fn": block, "x": sample(shape, device, seed=seed)},
                        {"x"}, _parameters(block), accumulate=seed == 0)
        for b_requires_grad in (True, False):
            run_fn, values, wanted, parameters = _several_inputs(
                device, b_requires_grad=b_requires_grad)
            check_block(function, run_fn, values, wanted, parameters)
        for seed in (0, 1):
            check_random_state(function, device, seed=seed)
        small = nn.Sequential(_linear(3, 3, device, 7), nn.Tanh())
        check_gradcheck(function, _spec_for({"run_fn": small, "x": None}),
                        {"run_fn": small, "x": sample((2, 3), device, seed=8)})


# ------------------------------------------------------------------------ checkpoint_sequential
def _custom_nodes(output: torch.Tensor) -> int:
    """How many custom Function nodes (checkpointed segments) the output's graph holds."""
    seen, stack, count = set(), [output.grad_fn], 0
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        count += isinstance(node, torch.autograd.function.BackwardCFunction)
        stack.extend(next_node for next_node, _ in node.next_functions)
    return count


def _run_layers(layers, x):
    for layer in layers:
        x = layer(x)
    return x


def check_sequential(checkpoint_sequential, layers, segments: int, x_value: torch.Tensor) -> None:
    """Output and every gradient equal the plain stack; exactly ``segments`` checkpoints (or
    one fewer, when the last segment runs plainly as torch.utils.checkpoint's does)."""
    n = len(layers)
    where = f"checkpoint_sequential(layers, segments={segments}, x) with {n} layers"
    parameters = _parameters(list(layers))
    expected, grad_output, truth, parameter_truth = _reference(
        lambda x: _run_layers(layers, x), {"x": x_value}, {"x"}, parameters)
    _clear_grads(list(layers))
    x = x_value.detach().clone().requires_grad_()
    try:
        output = checkpoint_sequential(layers, segments, x)
    except (NotImplementedError, GradingError):
        raise
    except TypeError as error:
        raise GradingError(f"calling {where} raised TypeError: it should take "
                           "(layers, segments, x)", str(error)) from error
    except RuntimeError as error:
        raise GradingError(f"{where} raised RuntimeError: {str(error).splitlines()[0]}",
                           str(error)) from error
    if isinstance(output, torch.Tensor) and output.shape == expected.shape and not torch.allclose(
            output.detach(), expected):
        for k in range(n):
            if torch.allclose(output.detach(), _run_layers(list(layers)[:k], x_value).detach()):
                raise GradingError(f"{where} ran only the first {k} layers: every layer must run "
                                   "once, in order (the last segment takes the remainder)")
    diagnose_values(f"{where}: the output", output, expected)
    checkpointed = _custom_nodes(output)
    if segments > 1 and checkpointed == 0:
        raise GradingError(f"{where} checkpointed nothing: run each segment through "
                           "CheckpointFunction.apply(run_segment, x)")
    if checkpointed not in (segments - 1, segments):
        raise GradingError(f"{where} made {checkpointed} checkpointed segments: split the layers "
                           f"into exactly {segments} consecutive groups")
    try:
        output.backward(grad_output)
    except RuntimeError as error:
        raise GradingError(f"backward through {where} raised RuntimeError: "
                           f"{str(error).splitlines()[0]}", str(error)) from error
    diagnose_gradient("x", x.grad, truth["x"])
    for name, parameter in parameters.items():
        if parameter.grad is None:
            raise GradingError(
                f"after {where} the parameters got no gradient: CheckpointFunction's backward "
                "must accumulate into their .grad (torch.autograd.backward, not "
                "torch.autograd.grad)")
        diagnose_gradient(f"parameter {name}", parameter.grad, parameter_truth[name])


def sequential_quick(checkpoint_sequential) -> None:
    if not callable(checkpoint_sequential):
        raise GradingError(f"{SEQUENTIAL} must be a function, got "
                           f"{type(checkpoint_sequential).__name__}")
    with _fork_rng(torch.device("cpu")):
        layers = layer_stack("cpu", 5)
        for segments in (2, 3):
            check_sequential(checkpoint_sequential, layers, segments, sample((3, WIDTH), "cpu"))


def sequential_full(checkpoint_sequential, device) -> None:
    if not callable(checkpoint_sequential):
        raise GradingError(f"{SEQUENTIAL} must be a function, got "
                           f"{type(checkpoint_sequential).__name__}")
    with _fork_rng(torch.device(device)):
        layers = layer_stack(device, 7)
        for segments in range(1, len(layers) + 1):
            check_sequential(checkpoint_sequential, layers, segments,
                             sample((3, WIDTH), device, seed=segments))
        check_sequential(checkpoint_sequential, nn.Sequential(*layer_stack(device, 5, seed=3)), 2,
                         sample((2, 4, WIDTH), device, seed=9))


EXERCISES = [
    Exercise("CheckpointFunction", "05_checkpointing", checkpoint_quick, checkpoint_full,
             "output shapes from 1-d to 3-d, several tensor and non-tensor inputs (a float, a "
             "bool, a boolean mask, an input without grad), .grad accumulating over two calls, "
             "dropout with the random state restored and left alone, saved bytes, gradcheck, "
             "CPU and CUDA"),
    Exercise("checkpoint_sequential", "05_checkpointing", sequential_quick, sequential_full,
             "every segment count from 1 to 7 on 7 layers, a list and an nn.Sequential, the "
             "number of checkpoints, input and parameter gradients, CPU and CUDA"),
]
