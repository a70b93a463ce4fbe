"""Lesson 05 reference Functions: a correct CheckpointFunction and checkpoint_sequential, and
deliberately wrong ones, each with one mistake (named in its docstring)."""

import torch


def _cuda_devices(tensors) -> list[int]:
    return sorted({t.get_device() for t in tensors if t.is_cuda})


class CheckpointFunction(torch.autograd.Function):
    """Saves the tensor arguments and the random state; recomputes run_fn in backward."""

    @staticmethod
    def forward(ctx, run_fn, *args):
        tensors = [a for a in args if isinstance(a, torch.Tensor)]
        ctx.run_fn = run_fn
        ctx.is_tensor = [isinstance(a, torch.Tensor) for a in args]
        ctx.others = [None if isinstance(a, torch.Tensor) else a for a in args]
        ctx.devices = _cuda_devices(tensors)
        ctx.cpu_state = torch.get_rng_state()
        ctx.cuda_states = [torch.cuda.get_rng_state(d) for d in ctx.devices]
        ctx.save_for_backward(*tensors)
        return run_fn(*args)  # autograd is off in forward: nothing inside is saved

    @staticmethod
    def backward(ctx, grad_output):
        args = _detached(ctx)
        with torch.random.fork_rng(devices=ctx.devices):
            torch.set_rng_state(ctx.cpu_state)
            for device, state in zip(ctx.devices, ctx.cuda_states):
                torch.cuda.set_rng_state(state, device)
            with torch.enable_grad():
                output = ctx.run_fn(*args)
        torch.autograd.backward(output, grad_output)  # .grad accumulates on the parameters too
        return (None, *_grads(args))


def checkpoint_sequential(layers, segments, x, function=CheckpointFunction):
    """Run ``layers`` in ``segments`` consecutive groups, each through ``function``."""
    layers = list(layers)
    size = len(layers) // segments
    bounds = [i * size for i in range(segments)] + [len(layers)]

    def segment(start, end):
        def run(h):
            for layer in layers[start:end]:
                h = layer(h)
            return h
        return run

    for start, end in zip(bounds, bounds[1:]):
        x = function.apply(segment(start, end), x)
    return x


# ----------------------------------------------------------------------------------- mistakes
class IgnoresRandomState(CheckpointFunction):
    """Recomputes without restoring the random state: dropout draws a new mask."""

    @staticmethod
    def backward(ctx, grad_output):
        args = _detached(ctx)
        with torch.enable_grad():
            output = ctx.run_fn(*args)
        torch.autograd.backward(output, grad_output)
        return (None, *_grads(args))


class RestoresOnlyCPUState(CheckpointFunction):
    """Restores the CPU random state only: dropout on CUDA draws a new mask."""

    @staticmethod
    def backward(ctx, grad_output):
        args = _detached(ctx)
        with torch.random.fork_rng(devices=[]):
            torch.set_rng_state(ctx.cpu_state)
            with torch.enable_grad():
                output = ctx.run_fn(*args)
        torch.autograd.backward(output, grad_output)
        return (None, *_grads(args))


class RewindsRandomState(CheckpointFunction):
    """Restores the forward's random state without fork_rng: the caller's stream is rewound."""

    @staticmethod
    def backward(ctx, grad_output):
        args = _detached(ctx)
        torch.set_rng_state(ctx.cpu_state)
        for device, state in zip(ctx.devices, ctx.cuda_states):
            torch.cuda.set_rng_state(state, device)
        with torch.enable_grad():
            output = ctx.run_fn(*args)
        torch.autograd.backward(output, grad_output)
        return (None, *_grads(args))


class GradOfInputsOnly(CheckpointFunction):
    """torch.autograd.grad(outputs, inputs): the parameters inside run_fn get no gradient."""

    @staticmethod
    def backward(ctx, grad_output):
        args = _detached(ctx)
        with torch.random.fork_rng(devices=ctx.devices):
            torch.set_rng_state(ctx.cpu_state)
            with torch.enable_grad():
                output = ctx.run_fn(*args)
        wanted = [a for a in args if isinstance(a, torch.Tensor) and a.requires_grad]
        grads = iter(torch.autograd.grad(output, wanted, grad_output))
        return (None, *(next(grads) if isinstance(a, torch.Tensor) and a.requires_grad else None
                        for a in args))


class OverwritesParameterGrads(CheckpointFunction):
    """Asks torch.autograd.grad for the parameters too and assigns p.grad = g, overwriting."""

    @staticmethod
    def backward(ctx, grad_output):
        args = _detached(ctx)
        with torch.random.fork_rng(devices=ctx.devices):
            torch.set_rng_state(ctx.cpu_state)
            with torch.enable_grad():
                output = ctx.run_fn(*args)
        wanted = [a for a in args if isinstance(a, torch.Tensor) and a.requires_grad]
        parameters = [p for p in _closure_parameters(ctx.run_fn)]
        grads = torch.autograd.grad(output, wanted + parameters, grad_output)
        for parameter, grad in zip(parameters, grads[len(wanted):]):
            parameter.grad = grad
        it = iter(grads[:len(wanted)])
        return (None, *(next(it) if isinstance(a, torch.Tensor) and a.requires_grad else None
                        for a in args))


def _closure_parameters(run_fn):
    if isinstance(run_fn, torch.nn.Module):
        return list(run_fn.parameters())
    found = []
    for cell in run_fn.__closure__ or ():
        if isinstance(cell.cell_contents, torch.nn.Module):
            found += list(cell.cell_contents.parameters())
    return found


class SavesActivations(torch.autograd.Function):
    """Runs run_fn with grad on in forward and keeps its graph: every activation is saved."""

    @staticmethod
    def forward(ctx, run_fn, *args):
        inputs = [a.detach().requires_grad_(a.requires_grad) if isinstance(a, torch.Tensor) else a
                  for a in args]
        with torch.enable_grad():
            output = run_fn(*inputs)
        ctx.graph = (output, inputs)
        return output.detach()

    @staticmethod
    def backward(ctx, grad_output):
        output, inputs = ctx.graph
        torch.autograd.backward(output, grad_output)
        return (None, *(a.grad if isinstance(a, torch.Tensor) else None for a in inputs))


class NoEnableGrad(CheckpointFunction):
    """Recomputes with autograd still off, so nothing can be differentiated."""

    @staticmethod
    def backward(ctx, grad_output):
        args = _detached(ctx)
        with torch.random.fork_rng(devices=ctx.devices):
            torch.set_rng_state(ctx.cpu_state)
            output = ctx.run_fn(*args)
        torch.autograd.backward(output, grad_output)
        return (None, *_grads(args))


class NoDetach(CheckpointFunction):
    """Recomputes on the saved tensors themselves: backward writes into the caller's x.grad."""

    @staticmethod
    def backward(ctx, grad_output):
        saved = iter(ctx.saved_tensors)
        args = [next(saved) if is_tensor else other
                for is_tensor, other in zip(ctx.is_tensor, ctx.others)]
        with torch.random.fork_rng(devices=ctx.devices):
            torch.set_rng_state(ctx.cpu_state)
            with torch.enable_grad():
                output = ctx.run_fn(*args)
        torch.autograd.backward(output, grad_output)
        return (None, *_grads(args))


class RequiresGradOnEveryInput(CheckpointFunction):
    """x.detach().requires_grad_() on every tensor: a boolean mask argument cannot."""

    @staticmethod
    def backward(ctx, grad_output):
        saved = iter(ctx.saved_tensors)
        args = [next(saved).detach().requires_grad_() if is_tensor else other
                for is_tensor, other in zip(ctx.is_tensor, ctx.others)]
        with torch.random.fork_rng(devices=ctx.devices):
            torch.set_rng_state(ctx.cpu_state)
            with torch.enable_grad():
                output = ctx.run_fn(*args)
        torch.autograd.backward(output, grad_output)
        return (None, *_grads(args))


class NoNoneForRunFn(CheckpointFunction):
    """Returns the input gradients only, forgetting the None for run_fn."""

    @staticmethod
    def backward(ctx, grad_output):
        return CheckpointFunction.backward(ctx, grad_output)[1:]


class ArgsOnCtx(CheckpointFunction):
    """Keeps the arguments as ctx.args instead of save_for_backward."""

    @staticmethod
    def forward(ctx, run_fn, *args):
        output = CheckpointFunction.forward(ctx, run_fn, *args)
        ctx.args = args
        return output


def _detached(ctx):
    saved = iter(ctx.saved_tensors)
    return [(lambda t: t.detach().requires_grad_(t.requires_grad))(next(saved)) if is_tensor
            else other for is_tensor, other in zip(ctx.is_tensor, ctx.others)]


def _grads(args):
    return [a.grad if isinstance(a, torch.Tensor) else None for a in args]


def sequential_without_checkpoints(layers, segments, x):
    """Runs the layers plainly: nothing is checkpointed."""
    for layer in layers:
        x = layer(x)
    return x


def sequential_too_many_segments(layers, segments, x):
    """Chunks of len // segments with range(0, n, size): 7 layers in 2 segments become 3."""
    layers = list(layers)
    size = max(len(layers) // segments, 1)
    for start in range(0, len(layers), size):
        x = checkpoint_sequential(layers[start:start + size], 1, x)
    return x


def sequential_drops_remainder(layers, segments, x):
    """segments chunks of len // segments layers: the remainder never runs."""
    layers = list(layers)
    size = len(layers) // segments
    for i in range(segments):
        x = checkpoint_sequential(layers[i * size:(i + 1) * size], 1, x)
    return x


def sequential_last_segment_plain(layers, segments, x):
    """torch.utils.checkpoint's convention: the last segment runs without checkpointing
    (not a mistake)."""
    layers = list(layers)
    size = len(layers) // segments
    for i in range(segments - 1):
        x = checkpoint_sequential(layers[i * size:(i + 1) * size], 1, x)
    for layer in layers[(segments - 1) * size:]:
        x = layer(x)
    return x


class SavesEveryArgument(CheckpointFunction):
    """ctx.save_for_backward(*args): floats and flags cannot go there."""

    @staticmethod
    def forward(ctx, run_fn, *args):
        output = CheckpointFunction.forward(ctx, run_fn, *args)
        ctx.save_for_backward(*args)
        return output
