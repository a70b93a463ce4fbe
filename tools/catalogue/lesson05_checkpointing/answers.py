"""Lesson 05: CheckpointFunction answers built from their backward (and forward) bodies, the
lesson's forward and the right backward, which checkpoint_sequential's answers build on."""


# Forward as the lesson teaches: the arguments split into tensors (saved) and the rest (kept
# on ctx), the random states recorded.
FORWARD = """
    @staticmethod
    def forward(ctx, run_fn, *args):
        ctx.run_fn = run_fn
        ctx.is_tensor = [isinstance(a, torch.Tensor) for a in args]
        ctx.others = [None if t else a for t, a in zip(ctx.is_tensor, args)]
        tensors = [a for a in args if isinstance(a, torch.Tensor)]
        ctx.save_for_backward(*tensors)
        ctx.devices = sorted({t.get_device() for t in tensors if t.is_cuda})
        ctx.cpu_state = torch.get_rng_state()
        ctx.cuda_states = [torch.cuda.get_rng_state(d) for d in ctx.devices]
        return run_fn(*args)
"""

ARGS = """
def _arguments(ctx, prepare):
    saved = iter(ctx.saved_tensors)
    return [prepare(next(saved)) if t else other for t, other in zip(ctx.is_tensor, ctx.others)]
"""

FRESH = "lambda t: t.detach().requires_grad_(t.requires_grad)"
RESTORE = """        with torch.random.fork_rng(devices=ctx.devices):
            torch.set_rng_state(ctx.cpu_state)
            for device, state in zip(ctx.devices, ctx.cuda_states):
                torch.cuda.set_rng_state(state, device)
            with torch.enable_grad():
                output = ctx.run_fn(*args)
"""
GRADS = "(None, *(a.grad if isinstance(a, torch.Tensor) else None for a in args))"


def _checkpoint(backward: str, forward: str = FORWARD) -> str:
    return ARGS + f"""

class CheckpointFunction(torch.autograd.Function):{forward}
    @staticmethod
    def backward(ctx, grad_output):
{backward}
"""


# right but for one case (review 58c): with every parameter frozen and the only argument that
# requires grad unused, the rebuilt output requires no grad and its backward raises
CORRECT_BACKWARD = (f"        args = _arguments(ctx, {FRESH})\n" + RESTORE
                    + f"        torch.autograd.backward(output, grad_output)\n        return {GRADS}")


BACKWARD = "        torch.autograd.backward(output, grad_output)\n"
GUARDED = "        if output.requires_grad:\n    " + BACKWARD
RETURN = f"        return {GRADS}"
# the lesson's solution since review 58c: backward only when the rebuilt output requires grad
SOLUTION = _checkpoint(CORRECT_BACKWARD.replace(BACKWARD, GUARDED))


def _backward_without(restore: str, finish: str = "        torch.autograd.backward(output, "
                      "grad_output)\n", prepare: str = FRESH) -> str:
    return _checkpoint(f"        args = _arguments(ctx, {prepare})\n" + restore + finish
                       + f"        return {GRADS}")
