"""Lesson 03: answers written by the reviewer of the lesson who scored it 7, kept with their
verdicts: a clip edge judged in x's units (which passed while the battery's edges used only the
power-of-two scale 0.5), <g, s> summed over the whole tensor or over dim 0 (told only "wrong"
before), and a correct answer that saves z = logits / tau (once failed as a copy of logits at
tau = 1, where z equals logits)."""

from .. import Mistake, Unusual

UNUSUAL = [
    Unusual("StraightThroughSoftmax", "saves z = logits / tau, softmax recomputed in backward",
            '''
class StraightThroughSoftmax(torch.autograd.Function):
    @staticmethod
    def forward(ctx, logits, tau):
        z = logits / tau
        ctx.save_for_backward(z)
        ctx.tau = tau
        return F.one_hot(logits.argmax(dim=-1), logits.shape[-1]).to(logits.dtype)

    @staticmethod
    def backward(ctx, grad_output):
        z, = ctx.saved_tensors
        s = torch.softmax(z, dim=-1)
        return s * (grad_output - (grad_output * s).sum(-1, keepdim=True)) / ctx.tau, None
'''),
]

MISTAKES = [
    Mistake("FakeQuantize", "clip edge judged in x's units, qmin * scale <= x <= qmax * scale",
            "FakeQuantize judges the clip edge in x's units: at x = 0.9, scale = 0.3", '''
class FakeQuantize(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale, qmin, qmax):
        ctx.save_for_backward(x, scale)
        ctx.qmin, ctx.qmax = qmin, qmax
        return torch.clamp(torch.round(x / scale), qmin, qmax) * scale

    @staticmethod
    def backward(ctx, grad_output):
        x, scale = ctx.saved_tensors
        lo, hi = ctx.qmin * scale, ctx.qmax * scale
        inside = (x >= lo) & (x <= hi)
        v = x / scale
        grad_x = grad_output * inside
        local = torch.where(inside, torch.round(v) - v,
                            torch.where(x < lo, float(ctx.qmin), float(ctx.qmax)))
        return grad_x, (grad_output * local).sum(), None, None
'''),
    Mistake("FakeQuantize", "x's gradient judged on v, scale's term in x's units",
            "FakeQuantize judges the clip edge in x's units: at x = 0.9, scale = 0.3", '''
class FakeQuantize(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale, qmin, qmax):
        ctx.save_for_backward(x, scale)
        ctx.qmin, ctx.qmax = qmin, qmax
        return torch.clamp(torch.round(x / scale), qmin, qmax) * scale

    @staticmethod
    def backward(ctx, grad_output):
        x, scale = ctx.saved_tensors
        lo, hi = ctx.qmin * scale, ctx.qmax * scale
        inside = (x >= lo) & (x <= hi)
        v = x / scale
        grad_x = grad_output * ((v >= ctx.qmin) & (v <= ctx.qmax))
        local = torch.where(inside, torch.round(v) - v,
                            torch.where(x < lo, float(ctx.qmin), float(ctx.qmax)))
        return grad_x, (grad_output * local).sum(), None, None
'''),
    Mistake("StraightThroughSoftmax", "<g, s> summed over the whole tensor",
            "the row sum <g, s> is taken over the whole tensor", '''
class StraightThroughSoftmax(torch.autograd.Function):
    @staticmethod
    def forward(ctx, logits, tau):
        soft = torch.softmax(logits / tau, dim=-1)
        ctx.save_for_backward(soft)
        ctx.tau = tau
        return F.one_hot(logits.argmax(dim=-1), logits.shape[-1]).to(logits.dtype)

    @staticmethod
    def backward(ctx, grad_output):
        soft, = ctx.saved_tensors
        row = (grad_output * soft).sum()
        return soft * (grad_output - row) / ctx.tau, None
'''),
    Mistake("StraightThroughSoftmax", "<g, s> summed over dim 0",
            "the row sum <g, s> is taken over dim 0", '''
class StraightThroughSoftmax(torch.autograd.Function):
    @staticmethod
    def forward(ctx, logits, tau):
        soft = torch.softmax(logits / tau, dim=-1)
        ctx.save_for_backward(soft)
        ctx.tau = tau
        return F.one_hot(logits.argmax(dim=-1), logits.shape[-1]).to(logits.dtype)

    @staticmethod
    def backward(ctx, grad_output):
        soft, = ctx.saved_tensors
        row = (grad_output * soft).sum(0, keepdim=True)
        return soft * (grad_output - row) / ctx.tau, None
'''),
]
