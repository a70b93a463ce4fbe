"""Lesson 03: answers right on one backward that change what forward saved, in place, so that
a second backward on the same graph (retain_graph=True, gradcheck, a Jacobian row by row) is
refused or wrong (found by a fresh review of lesson 03). The shared check: autograder/twice.py."""

from .. import Mistake

_HINT = "changes a tensor that forward saved, in place"

MISTAKES = [
    Mistake("StraightThroughSoftmax", "softmax's vector-Jacobian product built on the saved "
            "softmax in place", _HINT, '''
class StraightThroughSoftmax(torch.autograd.Function):
    @staticmethod
    def forward(ctx, logits, tau):
        soft = torch.softmax(logits / tau, dim=-1)
        ctx.save_for_backward(soft)
        ctx.tau = tau
        return F.one_hot(logits.argmax(-1), logits.shape[-1]).to(logits.dtype)

    @staticmethod
    def backward(ctx, grad_output):
        soft, = ctx.saved_tensors
        row = (grad_output * soft).sum(-1, keepdim=True)
        return soft.mul_(grad_output - row).div_(ctx.tau), None
'''),
    Mistake("FakeQuantize", "round(v) - v built in place on the saved v", _HINT, '''
class FakeQuantize(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale, qmin, qmax):
        v = x / scale
        ctx.save_for_backward(v, scale)
        ctx.qmin, ctx.qmax = qmin, qmax
        return torch.clamp(torch.round(v), qmin, qmax) * scale

    @staticmethod
    def backward(ctx, grad_output):
        v, scale = ctx.saved_tensors
        inside = (v >= ctx.qmin) & (v <= ctx.qmax)
        outside = torch.where(v < ctx.qmin, float(ctx.qmin), float(ctx.qmax)).to(v.dtype)
        local = torch.where(inside, v.sub_(torch.round(v)).neg_(), outside)
        return grad_output * inside, (grad_output * local).sum(), None, None
'''),
    Mistake("SignClippedSTE", "saved mask multiplied by grad_output in place", _HINT, '''
class SignClippedSTE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward((x.abs() <= 1).to(x.dtype))
        return torch.sign(x)

    @staticmethod
    def backward(ctx, grad_output):
        inside, = ctx.saved_tensors
        return inside.mul_(grad_output)
'''),
]
