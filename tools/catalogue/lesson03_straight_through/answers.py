"""Lesson 03: answers built from their forward and backward bodies, for the three
straight-through estimators, FakeQuantize and StraightThroughSoftmax, and the bodies several
answers share."""


def _ste(name: str, forward: str, backward: str) -> str:
    return f"""
class {name}(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
{forward}

    @staticmethod
    def backward(ctx, grad_output):
{backward}
"""


def _sign(forward: str, backward: str = "        return grad_output") -> str:
    return _ste("SignSTE", forward, backward)


def _clipped(backward: str, forward: str = "        ctx.save_for_backward(x)\n"
             "        return torch.sign(x)") -> str:
    return _ste("SignClippedSTE", forward, backward)


def _round(forward: str, backward: str = "        return grad_output") -> str:
    return _ste("RoundSTE", forward, backward)


SIGN = "        return torch.sign(x)"
READ_X = "        x, = ctx.saved_tensors\n"


def _fake_quantize(backward: str, forward: str = "        ctx.save_for_backward(x, scale)\n"
                   "        ctx.qmin, ctx.qmax = qmin, qmax\n"
                   "        return torch.clamp(torch.round(x / scale), qmin, qmax) * scale") -> str:
    return f"""
class FakeQuantize(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale, qmin, qmax):
{forward}

    @staticmethod
    def backward(ctx, grad_output):
{backward}
"""


FQ_READ = ("        x, scale = ctx.saved_tensors\n        v = x / scale\n        r = torch.round(v)\n"
           "        inside = (v >= ctx.qmin) & (v <= ctx.qmax)\n"
           "        clipped = torch.where(v < ctx.qmin, float(ctx.qmin), float(ctx.qmax))\n")
FQ_GRAD_X = "grad_output * inside"


def fq_gated(grad_x: str, grad_scale: str) -> str:
    """Backward's return line, each gradient computed only where its ``ctx.needs_input_grad``
    entry asks for it, ``None`` otherwise (rule 2 of the Function contract)."""
    return (f"        return ({grad_x} if ctx.needs_input_grad[0] else None,\n"
            f"                {grad_scale} if ctx.needs_input_grad[1] else None, None, None)")


def _fq_scale(local: str, grad_x: str = FQ_GRAD_X, gated: bool = False) -> str:
    """A backward whose per-element d(output)/d(scale) is ``local``; ``gated``: each gradient
    only where ``ctx.needs_input_grad`` asks for it, else both always (as the mistakes built
    on it, which their own checks catch first)."""
    if gated:
        return _fake_quantize(FQ_READ + fq_gated(grad_x, f"(grad_output * ({local})).sum()"))
    return _fake_quantize(FQ_READ + f"        return {grad_x}, (grad_output * ({local})).sum(), "
                          "None, None")


FQ_LSQ = "torch.where(inside, r - v, clipped)"


def _sts(backward: str, forward: str = "        soft = torch.softmax(logits / tau, dim=-1)\n"
         "        ctx.save_for_backward(soft)\n        ctx.tau = tau\n"
         "        return F.one_hot(logits.argmax(-1), logits.shape[-1]).to(logits.dtype)") -> str:
    return f"""
class StraightThroughSoftmax(torch.autograd.Function):
    @staticmethod
    def forward(ctx, logits, tau):
{forward}

    @staticmethod
    def backward(ctx, grad_output):
{backward}
"""


READ = "        soft, = ctx.saved_tensors\n"
RIGHT = ("        row = (grad_output * soft).sum(-1, keepdim=True)\n"
         "        return soft * (grad_output - row) / ctx.tau, None")
