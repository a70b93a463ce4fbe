"""Lesson 03: answers written by the reviewer of the lesson who scored it 7 (the third review),
kept with their verdicts: plain estimators whose gradient stops where x is NaN or infinite
(which passed while only the forward was judged there), and FakeQuantize gradients for scale
with the open interval at v = qmin or qmax, or a clipped element's dy/ds written as
qmax * scale (told only "wrong" before); and two correct, unusual answers."""

from .. import Mistake, Unusual

UNUSUAL = [
    Unusual('FakeQuantize', "v = x * (1 / scale) saved alone, lower edge on round(v), upper on "
            "v, scale's gradient unsummed", '''
class FakeQuantize(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale, qmin, qmax):
        v = x * (1 / scale)
        codes = torch.round(v)
        ctx.save_for_backward(v)
        ctx.bounds = (qmin, qmax)
        return codes.clamp(qmin, qmax) * scale
    @staticmethod
    def backward(ctx, grad_output):
        v, = ctx.saved_tensors
        qmin, qmax = ctx.bounds
        r = torch.round(v)
        below = r < qmin          # lower edge: judged on round(v)
        above = v > qmax          # upper edge: judged on v
        inside = ~(below | above)
        grad_x = grad_output * inside if ctx.needs_input_grad[0] else None
        grad_scale = None
        if ctx.needs_input_grad[1]:
            local = torch.where(inside, r - v, torch.where(below, float(qmin), float(qmax)))
            grad_scale = grad_output * local   # x's shape: autograd sums it to scale's
        return grad_x, grad_scale, None, None
'''),
    Unusual('StraightThroughSoftmax', 'one-hot by scatter at max().indices, logits saved, '
            'softmax from logsumexp, einsum', '''
class StraightThroughSoftmax(torch.autograd.Function):
    @staticmethod
    def forward(ctx, logits, tau):
        ctx.save_for_backward(logits)
        ctx.tau = tau
        index = logits.max(dim=-1, keepdim=True).indices
        return torch.zeros_like(logits).scatter_(-1, index, 1.0)
    @staticmethod
    def backward(ctx, grad_output):
        logits, = ctx.saved_tensors
        z = logits / ctx.tau
        s = torch.exp(z - torch.logsumexp(z, dim=-1, keepdim=True))
        dot = torch.einsum("...i,...i->...", grad_output, s).unsqueeze(-1)
        return s * (grad_output - dot) / ctx.tau, None
'''),
]

MISTAKES = [
    Mistake('RoundSTE', 'gradient zeroed where x is not finite',
            'RoundSTE: at x = nan your gradient is 0', '''
class RoundSTE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.round(x)
    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return torch.where(torch.isfinite(x), grad_output, 0.0)
'''),
    Mistake('SignSTE', 'gradient zeroed where x is NaN',
            'SignSTE: at x = nan your gradient is 0', '''
class SignSTE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.sign(x)
    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return torch.where(torch.isnan(x), 0.0, grad_output)
'''),
    Mistake('SignSTE', 'gradient zeroed where x is not finite',
            'SignSTE: at x = inf your gradient is 0', '''
class SignSTE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.sign(x)
    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return torch.where(torch.isfinite(x), grad_output, 0.0)
'''),
    Mistake('FakeQuantize', "scale's gradient with LSQ's open interval, x's closed",
            "FakeQuantize: at v = qmax exactly (x = 0.75, scale = 0.25, v = 3 = qmax) your "
            "scale gradient uses the open interval's value", '''
class FakeQuantize(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale, qmin, qmax):
        ctx.save_for_backward(x, scale)
        ctx.qmin, ctx.qmax = qmin, qmax
        return torch.clamp(torch.round(x / scale), qmin, qmax) * scale
    @staticmethod
    def backward(ctx, grad_output):
        x, scale = ctx.saved_tensors
        v = x / scale
        inside_x = (v >= ctx.qmin) & (v <= ctx.qmax)
        inside_s = (v > ctx.qmin) & (v < ctx.qmax)
        local = torch.where(inside_s, torch.round(v) - v,
                            torch.where(v <= ctx.qmin, float(ctx.qmin), float(ctx.qmax)))
        return grad_output * inside_x, (grad_output * local).sum(), None, None
'''),
    Mistake('FakeQuantize', "a clipped element's dy/ds as qmax * scale",
            'FakeQuantize: for a clipped element (x = 1.25, scale = 0.25, v = 5 > qmax = 3) '
            'your dy/ds is qmax * scale', '''
class FakeQuantize(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale, qmin, qmax):
        ctx.save_for_backward(x, scale)
        ctx.qmin, ctx.qmax = qmin, qmax
        return torch.clamp(torch.round(x / scale), qmin, qmax) * scale
    @staticmethod
    def backward(ctx, grad_output):
        x, scale = ctx.saved_tensors
        v = x / scale
        inside = (v >= ctx.qmin) & (v <= ctx.qmax)
        local = torch.where(inside, torch.round(v) - v,
                            torch.where(v < ctx.qmin, ctx.qmin * scale, ctx.qmax * scale))
        return grad_output * inside, (grad_output * local).sum(), None, None
'''),
]
