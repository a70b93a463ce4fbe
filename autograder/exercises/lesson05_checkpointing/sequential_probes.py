"""Lesson 05, checkpoint_sequential: probes beside the main check: bounds a floating-point cut
gives (named where an answer's groups match them), a call whose output came from none of the
layers given, a call on an x that requires no grad (a batch of data), and a stack with dropout
run from the same seed as the plain stack."""

import weakref
from contextlib import suppress

import torch
from torch import nn

from ...diagnose import diagnose_gradient, diagnose_values
from ...errors import GradingError
from ...exercise import sample
from .checkpoint_blocks import WIDTH, _linear, layer_stack, learner_raised, rng_states
from .rng_probe import same_states
from .segment_calls import _recording_calls, _spans, check_runs_once


_HELD: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # answer -> the lists it got


def holding(answer):
    """``answer``, keeping each stack the battery hands it alive as long as the answer lives, so
    that no id(layers) comes back, even across gradings: a cache keyed by that id is the generic
    layer's to name (``autograder.outside_ctx``), the same way every time."""
    def call(layers, segments, x):
        with suppress(TypeError):  # an answer no weak reference can point to
            _HELD.setdefault(answer, []).append(layers)
        return answer(layers, segments, x)
    return call


def _run_layers(layers, x):
    for layer in layers:
        x = layer(x)
    return x


def _float_bounds(n: int, segments: int) -> list[tuple[str, int, list[int]]]:
    """Three floating-point ways of cutting n layers into ``segments`` groups, int(i * (n / k)),
    int(i / k * n) and a running sum of n / k, where one gives a bound below the integer it
    should be (int() truncates a value one ulp under an integer to the integer below: 11 * (15
    / 11) is 14.999999999999998): how that bound reads, what int() makes it, and the bounds."""
    step, running, forms = n / segments, [0.0], []
    for _ in range(segments):
        running.append(running[-1] + step)
    for how, values in (
            (lambda i: f"{i} * ({n} / {segments}) is {i * step!r}",
             [i * step for i in range(segments + 1)]),
            (lambda i: f"{i} / {segments} * {n} is {i / segments * n!r}",
             [i / segments * n for i in range(segments + 1)]),
            (lambda i: f"adding {n} / {segments} {i} times gives {running[i]!r}", running)):
        bounds = [int(value) for value in values]
        short = [i for i, b in enumerate(bounds)
                 if i * n % segments == 0 and b == i * n // segments - 1]
        if short:
            forms.append((how(short[-1]), bounds[short[-1]], bounds))
    return forms


def float_bounds_note(n: int, segments: int, ran: int | None = None,
                      sizes: list[int] | None = None) -> str:
    """Why the layers run end at layer ``ran`` (or the groups recomputed are ``sizes`` long),
    where one of _float_bounds' cuts does exactly that; '' otherwise."""
    for how, truncated, bounds in _float_bounds(n, segments):
        lengths = [b - a for a, b in zip(bounds, bounds[1:]) if b > a]
        if ran is not None and ran == bounds[-1] or sizes is not None and sizes in (
                lengths, lengths[:-1]):
            return (f"its bounds look computed in floating point: {how}, which int() truncates "
                    f"to {truncated}; which number type gives a cut that is exact at every i?")
    return ""


def check_given_layers_ran(where: str, layers, forward_calls: list, output, x,
                           inner_calls: list = ()) -> None:
    """An output, yet none of the layers given ran in forward: x itself handed back (a loop
    that never ran), the modules inside the layers run instead of the layers (``inner_calls``,
    recorded on each layer's submodules: a stack walked into with .modules()), or an output
    from other modules, such as the groups an earlier call built and a cache kept (whose
    values may even equal these)."""
    if (forward_calls or not isinstance(output, torch.Tensor) or not layers
            or not all(isinstance(layer, nn.Module) for layer in layers)):
        return
    if output is x or output.shape == x.shape and torch.equal(output.detach(), x.detach()):
        raise GradingError(
            f"{where} returned x as it was given, without running any of the {len(layers)} "
            "layers: which loop of yours runs no times for this number of segments, and what "
            "then runs the layers?", mistake="checkpoint_sequential/runs-no-layer")
    if inner_calls:
        parts = len({i for i, _ in inner_calls})
        raise GradingError(
            f"{where} ran {parts} module{'s' if parts > 1 else ''} inside the layers it was "
            f"given, never one of the {len(layers)} layers themselves: a layer runs whole, by "
            "calling it, and its forward may do more than run its parts in a row (a residual "
            "block adds its input back); which modules are the layers of an "
            "nn.Sequential, and which does your function run? (.modules() walks into each "
            "block)", mistake="checkpoint_sequential/runs-parts-of-layers")
    raise GradingError(
        f"{where} returned an output without running any of the {len(layers)} layers it was "
        "given, or any module inside them: the output came from modules this call did not "
        "pass (groups kept from an earlier call, cached by the number of layers or segments?); "
        "build the groups from this call's layers every time: the next call may pass another "
        "stack of the same length, and the layers of this one must receive their gradients",
        mistake="checkpoint_sequential/runs-cached-layers")


def _raised_in(where: str):
    """What learner_raised raises for an exception of the learner's code in ``where``."""
    return lambda error: GradingError(
        f"{where} raised {type(error).__name__}: "
        f"{str(error).splitlines()[0] if str(error) else ''}", str(error))


def check_on_data(checkpoint_sequential, device, n: int = 4, segments: int = 2) -> None:
    """x that requires no grad (a batch of data): the output is still the plain stack's, and
    every group but the last still runs through CheckpointFunction.apply, whose forward runs
    with grad off; a layer run with grad on outside the last group is named."""
    layers = layer_stack(device, n, seed=5)
    x = sample((3, WIDTH), device, seed=21)
    where = (f"checkpoint_sequential(layers, segments={segments}, x) with {n} layers and an x "
             "that requires no grad (a batch of data)")
    with _recording_calls(layers) as forward_calls, learner_raised(_raised_in(where)):
        output = checkpoint_sequential(list(layers), segments, x)
    if x.requires_grad:
        raise GradingError(
            f"{where}: after the call the caller's x requires grad: your function called "
            "requires_grad_() on the batch it was handed, which the caller sees (its next "
            "forward records a graph for it); if a segment needs an input that requires grad, "
            "make one of your own (Function contract, rule 6: the caller's state is left as it "
            "was)", mistake="checkpoint_sequential/changes-callers-x")
    diagnose_values(f"{where}: the output", output, _run_layers(layers, x).detach())
    plain = sorted({i for i, grad in forward_calls if grad})
    ceil = -(-n // segments)
    if plain and not (plain == list(range(plain[0], n)) and len(plain) <= ceil and plain[0] > 0):
        raise GradingError(
            f"{where} ran layer{'s' if len(plain) > 1 else ''} {_spans(plain)} with grad on, "
            "outside every checkpoint: each group but the last goes through "
            "CheckpointFunction.apply whatever x requires (a real model's first input is "
            "data, and its activations are the ones a checkpoint must not keep); what the "
            "parameters of a group on data need is the lesson's section \"A first block on "
            "data\"", mistake="checkpoint_sequential/plain-on-data")


def check_random_layers(checkpoint_sequential, device, segments: int = 2) -> None:
    """Two nn.Dropout(0.5) among five layers, run from the same seed as the plain stack: every
    layer runs once and the output is the plain stack's, the same masks drawn in the same order
    (a layer run twice, or a seed or a draw of the function's own, draws others)."""
    layers = [_linear(WIDTH, WIDTH, device, 61), nn.Dropout(0.5), nn.Tanh(),
              _linear(WIDTH, WIDTH, device, 63), nn.Dropout(0.5)]
    x = sample((3, WIDTH), device, seed=22)
    where = (f"checkpoint_sequential(layers, segments={segments}, x) with {len(layers)} layers, "
             "two of them nn.Dropout(0.5), from the seed the plain stack ran from")
    torch.manual_seed(8)
    expected = _run_layers(layers, x).detach()
    after_plain = rng_states(torch.device(device))
    torch.manual_seed(8)
    with _recording_calls(layers) as forward_calls:
        output = checkpoint_sequential(list(layers), segments, x.detach().requires_grad_())
    check_runs_once(where, len(layers), forward_calls)
    if (isinstance(output, torch.Tensor) and output.shape == expected.shape
            and not torch.allclose(output.detach(), expected)):
        raise GradingError(
            f"{where}: the output is not the plain stack's, so its dropout layers drew other "
            "masks: every random number the layers draw must come from the caller's stream as "
            "it stands, in the plain stack's order; set no seed and draw nothing of your own",
            mistake="checkpoint_sequential/draws-other-masks")
    diagnose_values(f"{where}: the output", output, expected)
    if not same_states(rng_states(torch.device(device)), after_plain):
        raise GradingError(
            f"{where}: after the call the caller's random stream is not where the plain stack "
            "leaves it (its dropout draws advance the stream): the next random number the "
            "caller draws differs; was a random state put back around the layers? (Function "
            "contract, rule 6: the generators advanced exactly as far as the op advances them; "
            "backward's replay is CheckpointFunction's to undo)",
            mistake="checkpoint_sequential/rng-not-advanced")


def check_layers_left_as_given(checkpoint_sequential, device, segments: int = 2) -> None:
    """The caller's stack as it was given: an nn.Sequential whose layers are in mixed modes
    (the container and a Dropout in eval(), a Linear training) keeps every mode, and the .grad
    its parameters already hold (an earlier micro-batch's) is still there after the call and
    has this call's gradient added to it after backward."""
    stack = nn.Sequential(_linear(WIDTH, WIDTH, device, 71), nn.Dropout(0.5), nn.Tanh(),
                          _linear(WIDTH, WIDTH, device, 73))
    stack.eval()
    stack[0].train()
    modes = {name or "the nn.Sequential": m.training for name, m in stack.named_modules()}
    parameters = dict(stack.named_parameters())
    x = sample((3, WIDTH), device, seed=23)
    truth = dict(zip(parameters, torch.autograd.grad(stack(x).sum(), list(parameters.values()))))
    held = {name: sample(p.shape, device, seed=30 + i) for i, (name, p) in
            enumerate(parameters.items())}
    for name, p in parameters.items():
        p.grad = held[name].clone()
    where = (f"checkpoint_sequential(layers, segments={segments}, x) with an nn.Sequential of "
             f"{len(stack)} layers")
    with learner_raised(_raised_in(where)):
        output = checkpoint_sequential(stack, segments, x.detach().requires_grad_())
    after = {name or "the nn.Sequential": m.training for name, m in stack.named_modules()}
    changed = [name for name in modes if after[name] != modes[name]]
    if changed:
        name = changed[0]
        which = name if name == "the nn.Sequential" else f"layer {name}"
        raise GradingError(
            f"{where} changed the mode of the caller's layers: {which} was "
            f"{'training' if modes[name] else 'in eval() mode'} and is "
            f"{'training' if after[name] else 'in eval() mode'} after the call"
            f"{f' ({len(changed)} modules changed)' if len(changed) > 1 else ''}: which mode "
            "each layer runs in is the caller's choice (an eval() stack is being evaluated); "
            "does anything in your function call .train() or .eval()?",
            mistake="checkpoint_sequential/changes-layer-mode")
    for name, p in parameters.items():
        if p.grad is None or not torch.equal(p.grad, held[name]):
            raise GradingError(
                f"{where} {'set to None' if p.grad is None else 'changed'} the .grad that "
                f"parameter {name} already held (an earlier micro-batch's gradient, which the "
                "caller accumulates into): calling checkpoint_sequential must leave .grad "
                "alone; backward adds to it. Does your function zero gradients?",
                mistake="checkpoint_sequential/wipes-layer-grads")
    if isinstance(output, torch.Tensor) and output.requires_grad:
        output.sum().backward()
        for name, p in parameters.items():
            if p.grad is not None and torch.allclose(p.grad, truth[name]):
                raise GradingError(
                    f"after backward through {where}, parameter {name}'s .grad is this call's "
                    "gradient alone: the gradient it held before (an earlier micro-batch's) "
                    "was replaced, not added to", mistake="checkpoint_sequential/wipes-layer-grads")
            diagnose_gradient(f"parameter {name} after backward through {where} (its .grad "
                              "held an earlier gradient)", p.grad, held[name] + truth[name])


def check_identity_layers(checkpoint_sequential, device, check_sequential) -> None:
    """A stack holding layers that return their input itself (nn.Identity, a Dropout in eval
    mode), each a group of its own: a checkpoint around it must still pass the gradient on.
    A failure here has no cause of its own: the CheckpointFunction it calls is named."""
    layers = [_linear(WIDTH, WIDTH, device, 130), nn.Identity(), nn.Tanh(),
              nn.Dropout(0.5).eval(), _linear(WIDTH, WIDTH, device, 132)]
    try:
        check_sequential(checkpoint_sequential, layers, len(layers),
                         sample((3, WIDTH), device, seed=25))
    except GradingError as error:  # what it saw, no cause: the CheckpointFunction it calls is
        raise GradingError(  # graded next, and named where it fails on its own
            f"{error.hint}; layers 1 (nn.Identity) and 3 (a Dropout in eval mode) return "
            "their input itself, each as a group of its own", error.details) from error


def check_hooked_layers(checkpoint_sequential, device, check_sequential,
                        segments: int = 2) -> None:
    """The caller's layers behave as given: a forward hook and a forward pre-hook the caller
    registered (as a library's weight norm, pruning or logging does) run when the stack runs,
    and change its output; a layer run as ``layer.forward(h)`` skips them."""
    layers = layer_stack(device, 5, seed=140)
    fired: list[int] = []

    def doubled(module, inputs, output, i=2):
        fired.append(i)
        return output * 2

    def shifted(module, inputs, i=0):
        fired.append(i)
        return (inputs[0] + 0.5,)

    handles = [layers[2].register_forward_hook(doubled),
               layers[0].register_forward_pre_hook(shifted)]
    where = (f"checkpoint_sequential(layers, segments={segments}, x) with {len(layers)} layers, "
             "two of them with hooks the caller registered (a forward pre-hook on layer 0 adds "
             "0.5 to its input, a forward hook on layer 2 doubles its output)")
    try:
        with _recording_calls(layers) as forward_calls:
            checkpoint_sequential(list(layers), segments,
                                  sample((3, WIDTH), device, seed=26).requires_grad_())
        skipped = sorted({i for i, _ in forward_calls if i in (0, 2)} - set(fired))
        if skipped:
            raise GradingError(
                f"{where}: layer {skipped[0]} ran, but the hook the caller registered on it "
                "never did: a module's hooks run when the module is called, layer(h), and "
                "never through layer.forward(h); the caller's layers behave as given, so the "
                "output differs from the plain stack's",
                mistake="checkpoint_sequential/skips-hooks")
        check_sequential(checkpoint_sequential, layers, segments,
                         sample((3, WIDTH), device, seed=27))
    finally:
        for handle in handles:
            handle.remove()
