"""Lesson 05 helpers: the blocks and layer stacks that checkpointing is graded on, the
parameters they train, random-state bookkeeping, the un-checkpointed reference run, and a guard
against a backward that re-enters its own node."""

import math
import threading
from contextlib import ExitStack, contextmanager

import torch
from torch import nn

from ...checks import make_inputs
from ...diagnose import diagnose_gradient
from ...errors import GradingError
from ...exercise import sample
from ..shared.reentry import limit_nesting

RECOMPUTE_THE_BLOCK = ("recompute by calling the block itself (run_fn, or f and g) on fresh "
                       "leaves, not the Function, and backpropagate only what that recomputed")

WIDTH = 5


def _linear(n_in: int, n_out: int, device, seed: int) -> nn.Linear:
    """A float64 Linear layer with seeded weights."""
    layer = nn.Linear(n_in, n_out, dtype=torch.float64, device=device)
    with torch.no_grad():
        layer.weight.copy_(sample((n_out, n_in), device, seed=seed) / math.sqrt(n_in))
        layer.bias.copy_(sample((n_out,), device, seed=seed + 1) / 4)
    return layer


class _Noise(nn.Module):
    """Dropout drawn with F.dropout by a module that is no nn.Dropout: random numbers a
    checkpoint that looks for nn.Dropout before replaying the random state would miss."""

    def __init__(self, p: float):
        super().__init__()
        self.p = p

    def forward(self, x):
        return nn.functional.dropout(x, self.p, self.training)


def mlp_block(device, *, seed: int = 0, dropout: float = 0.0,
              functional: bool = False) -> nn.Sequential:
    """Linear, tanh, (dropout), Linear: a block with parameters and activations worth saving.
    With ``functional`` its dropout is F.dropout called by a plain module, not nn.Dropout."""
    layers = [_linear(WIDTH, 2 * WIDTH, device, seed), nn.Tanh()]
    if dropout:
        layers.append(_Noise(dropout) if functional else nn.Dropout(dropout))
    layers.append(_linear(2 * WIDTH, WIDTH, device, seed + 2))
    return nn.Sequential(*layers).train()


class Residual(nn.Module):
    """x + tanh(linear(x)): a layer made of layers, as a model's blocks are (its submodules are
    not layers of the stack: only the block is)."""

    def __init__(self, device, seed: int):
        super().__init__()
        self.linear = _linear(WIDTH, WIDTH, device, seed)

    def forward(self, x):
        return x + torch.tanh(self.linear(x))


class ResidualSequential(nn.Sequential):
    """x + tanh(linear(x)) as an nn.Sequential with a forward of its own: flattened into its
    children, it runs as linear then tanh, without the skip."""

    def __init__(self, device, seed: int):
        super().__init__(_linear(WIDTH, WIDTH, device, seed), nn.Tanh())

    def forward(self, x):
        return x + super().forward(x)


def layer_stack(device, n: int = 7, *, seed: int = 0) -> list[nn.Module]:
    """``n`` layers of equal width, alternating Linear and a nonlinearity."""
    nonlinear = [nn.Tanh, nn.Sigmoid, nn.Softplus]
    return [_linear(WIDTH, WIDTH, device, seed + 2 * i) if i % 2 == 0 else nonlinear[i // 2 % 3]()
            for i in range(n)]


def parameters_of(module) -> dict[str, torch.Tensor]:
    if isinstance(module, (list, tuple)):
        module = nn.Sequential(*module)
    return dict(module.named_parameters())


def clear_grads(held) -> None:
    """.grad set to None on each parameter of a module, a list of modules, or a dict of
    parameters."""
    for parameter in (held if isinstance(held, dict) else parameters_of(held)).values():
        parameter.grad = None


def rng_states(device: torch.device) -> list[torch.Tensor]:
    states = [torch.get_rng_state()]
    if device.type == "cuda":
        states.append(torch.cuda.get_rng_state(device))
    return states


def fork_rng(device: torch.device):
    """Keep the caller's random streams as they were, whatever grading draws."""
    return torch.random.fork_rng(devices=[device] if device.type == "cuda" else [])


def reference(run_fn, values: dict, wanted: set, parameters: dict, grad_output=None):
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


def graph_nodes(outputs, *, whole_graph: bool = True, limit: int | None = None):
    """The nodes of the outputs' graph, each once, the outputs' own first (only those without
    ``whole_graph``; at most ``limit`` of them)."""
    seen, stack = set(), [getattr(o, "grad_fn", None) for o in outputs]
    while stack and (limit is None or len(seen) < limit):
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        yield node
        if whole_graph:
            stack.extend(next_node for next_node, _ in node.next_functions)


def custom_nodes(outputs, *, whole_graph: bool = True) -> list:
    """The custom Function nodes of the outputs' graph (or only the outputs' own nodes)."""
    return [node for node in graph_nodes(outputs, whole_graph=whole_graph)
            if isinstance(node, torch.autograd.function.BackwardCFunction)]


@contextmanager
def refuse_reentry(nodes, message: str):
    """Raise ``message`` when one of ``nodes`` is entered again while its backward still runs:
    a backward that backpropagates a graph leading back into its own node re-enters it without
    end (the engine nests deeper, on new threads, and the cell hangs; no Python signal can
    interrupt it, as the main thread waits in C++). Their Functions' backwards also refuse to
    run nested deep in themselves (``reentry.limit_nesting``): a backward that calls its own
    Function again makes a new node every time, which the hooks on ``nodes`` cannot see."""
    handles = []
    for node in nodes:
        running: list = []

        def enter(grad_outputs, running=running):
            if running:
                raise GradingError(message)
            running.append(True)

        handles += [node.register_prehook(enter),
                    node.register_hook(lambda *_, running=running: running.clear())]
    try:
        with ExitStack() as stack:
            for cls in {node._forward_cls for node in nodes}:
                stack.enter_context(limit_nesting(cls, RECOMPUTE_THE_BLOCK))
            yield
    finally:
        for handle in handles:
            handle.remove()


@contextmanager
def learner_raised(explain):
    """An exception the learner's code raises inside the block, raised again as
    ``explain(error)`` (a GradingError that says when it happened); the grader's own errors and
    a stub's NotImplementedError go through as they are."""
    try:
        yield
    except (NotImplementedError, GradingError):
        raise
    except Exception as error:  # noqa: BLE001  (the learner's code raised: say when)
        raise explain(error) from error


CALLS: list[str] = []  # how the learner's backward asked autograd for gradients (watch_calls)


@contextmanager
def watch_calls():
    """Record into ``CALLS`` each call of torch.autograd.grad and torch.autograd.backward (which
    Tensor.backward calls) made while the block runs: 'grad', 'backward', or 'backward inputs='
    for one that accumulates into the listed tensors only. Bind the grader's own call first."""
    CALLS.clear()
    grad, backward = torch.autograd.grad, torch.autograd.backward

    def on_grad(*args, **kwargs):
        CALLS.append("grad")
        return grad(*args, **kwargs)

    def on_backward(*args, **kwargs):
        listed = kwargs.get("inputs") is not None or (len(args) > 5 and args[5] is not None)
        CALLS.append("backward inputs=" if listed else "backward")
        return backward(*args, **kwargs)

    torch.autograd.grad, torch.autograd.backward = on_grad, on_backward
    try:
        yield
    finally:
        torch.autograd.grad, torch.autograd.backward = grad, backward


def no_gradient_cause(who: str) -> str:
    """Why the parameters of ``who`` got no .grad, as far as ``CALLS`` proves it."""
    if "backward inputs=" in CALLS:
        return ("backward passed inputs=[...] to torch.autograd.backward (or .backward()), "
                "which accumulates .grad into the listed tensors only, and the parameters of "
                f"{who} are not among them")
    if "grad" in CALLS and "backward" not in CALLS:
        return ("torch.autograd.grad returns gradients for the tensors it lists only, and "
                f"writes no .grad: which call accumulates .grad on the parameters of {who} too?")
    return (f"nothing in backward accumulated .grad on the parameters of {who}: which call on "
            "the outputs recomputed from fresh leaves under grad does?")


def check_parameter_grads(exercise_name: str, holder: str, parameters: dict, truth: dict, *,
                          missing: str, before: dict | None = None,
                          overwrite_mistake: str = "") -> None:
    """Each parameter's .grad against ``truth`` (plus what it held ``before`` a second
    backward, which must add to it); a truth of None is a parameter the loss never reaches,
    where None or zeros are both right. ``missing`` says which parameters got no .grad
    (``{name}`` is the first), the cause read from ``CALLS``."""
    for name, parameter in parameters.items():
        if truth[name] is None:
            if parameter.grad is not None and before is None:
                diagnose_gradient(f"parameter {name}", parameter.grad,
                                  torch.zeros_like(parameter))
            continue
        if parameter.grad is None:
            raise GradingError(missing.format(name=name) + ": " + no_gradient_cause(holder),
                               mistake={"backward passed inputs=[...]":
                                        f"{exercise_name}/backward-inputs-only",
                                        "torch.autograd.grad returns":
                                        f"{exercise_name}/grad-skips-parameters"})
        if before is not None and torch.allclose(parameter.grad, truth[name]):
            raise GradingError(
                f"{exercise_name} replaced the .grad of parameter {name} instead of adding to "
                "it: the gradient an earlier backward had left there is gone (gradients "
                "accumulate)",
                mistake=overwrite_mistake)
        expected = truth[name] if before is None else before[name] + truth[name]
        diagnose_gradient(f"parameter {name}", parameter.grad, expected)


class AnyDtype(nn.Module):
    """Linear then ``activation``, computing in its input's dtype (its parameters float64):
    a block the generated dtype checks can run in float32 and their reference in float64."""

    def __init__(self, device, seed: int, activation):
        super().__init__()
        self.linear, self.activation = _linear(WIDTH, WIDTH, device, seed), activation

    def forward(self, x):
        weight, bias = self.linear.weight, self.linear.bias
        return self.activation(nn.functional.linear(x, weight.to(x.dtype), bias.to(x.dtype)))


def coupling_values(device, dtype=torch.float64, seed: int = 0) -> dict:
    """ReversibleCoupling's domain: x1, x2 of shape (3, 5); f and g of their own per seed, in
    any dtype."""
    return {"x1": sample((3, WIDTH), device, seed=seed + 20, dtype=dtype),
            "x2": sample((3, WIDTH), device, seed=seed + 21, dtype=dtype),
            "f": AnyDtype(device, seed, torch.tanh),
            "g": AnyDtype(device, seed + 2, nn.functional.softplus)}


def _nested_backward(output, leaves: list, grad_output) -> tuple:
    torch.autograd.backward(output, grad_output)
    return tuple(leaf.grad if torch.is_tensor(leaf) and leaf.requires_grad else None
                 for leaf in leaves)


class ThroughBackward(torch.autograd.Function):
    """``call(*args)`` run on fresh leaves inside, differentiated with ``.backward()`` (a nested
    backward, as checkpointing is used): the generated checks differentiate with
    torch.autograd.grad, which PyTorch's own reentrant checkpoint refuses by design, even in a
    backward nested in it on the same thread (the flag is per thread), so on the CPU the nested
    backward runs on a thread of its own. On a GPU this backward already runs on autograd's
    thread for that device, whose flag the outer call never set, and a nested backward started
    from another thread would wait for it without end: there it runs inline.
    ``backward(output, leaves, grad_output)`` returns the leaves' gradients."""

    @staticmethod
    def forward(ctx, call, backward, *args):
        leaves = [a.detach().requires_grad_(a.requires_grad) if torch.is_tensor(a) else a
                  for a in args]
        with torch.enable_grad():
            output = call(*leaves)
        ctx.inner = (output, leaves, backward or _nested_backward)
        return output.detach()

    @staticmethod
    def backward(ctx, grad_output):
        output, leaves, backward = ctx.inner
        done = {}

        def run():
            try:
                done["grads"] = backward(output, leaves, grad_output)
            except BaseException as error:  # noqa: BLE001  (raised again below)
                done["error"] = error

        if grad_output.device.type == "cpu":
            thread = threading.Thread(target=run)
            thread.start()
            thread.join()
        else:  # this backward runs on autograd's own thread for the device, which a nested
            run()  # backward started from another thread would wait for: it runs inline there
        if "error" in done:
            raise done["error"]
        return None, None, *done["grads"]
