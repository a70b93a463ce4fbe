"""Lesson 03: answers written by the reviewer of review 54, kept with their verdicts, and the
variants their fixes probe: a scale gradient as a mean times numel (nan on an empty x), a
clip open at one edge, a clip with a tolerance on the edge (the half-step band judged two
ways), a tau floored "for stability" (wrong below the floor only), a clipped estimator that
cleans a non-finite grad_output, an x rounded in place through a detached alias, and a float32
copy of x saved and never read."""

from .. import Mistake, Unusual

_FQ_BACKWARD = '''
    @staticmethod
    def backward(ctx, g):
        x, scale = ctx.saved_tensors
        v = x / scale
        inside = {inside}
        local = torch.where(inside, torch.round(v) - v,
                            torch.where(v < ctx.qmin, float(ctx.qmin), float(ctx.qmax)))
        return g * inside, {scale_gradient}, None, None
'''
_FQ = '''
class FakeQuantize(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale, qmin, qmax):
        ctx.save_for_backward(x, scale)
        ctx.qmin, ctx.qmax = qmin, qmax
        return torch.clamp(torch.round(x / scale), qmin, qmax) * scale
'''

MISTAKES = [
    Mistake('FakeQuantize', "scale's gradient as a mean times numel",
            "FakeQuantize's gradient for scale on an empty x is nan", _FQ + _FQ_BACKWARD.format(
                inside="(v >= ctx.qmin) & (v <= ctx.qmax)",
                scale_gradient="(g * local).mean() * x.numel()")),
    Mistake('FakeQuantize', 'inside with a tolerance of 1e-3 on each edge',
            "judges the half-step band beyond 3 two ways", _FQ + _FQ_BACKWARD.format(
                inside="(v >= ctx.qmin - 1e-3) & (v <= ctx.qmax + 1e-3)",
                scale_gradient="(g * local).sum()")),
    Mistake('FakeQuantize', 'inside with a tolerance of 1e-9 on each edge',
            "judges the half-step band beyond 3 two ways", _FQ + _FQ_BACKWARD.format(
                inside="(v >= ctx.qmin - 1e-9) & (v <= ctx.qmax + 1e-9)",
                scale_gradient="(g * local).sum()")),
    Mistake('FakeQuantize', 'the top edge open, v < qmax, for both gradients',
            "drops the clip's edges", _FQ + _FQ_BACKWARD.format(
                inside="(v >= ctx.qmin) & (v < ctx.qmax)", scale_gradient="(g * local).sum()")),
    Mistake('StraightThroughSoftmax', 'tau floored at 0.01 "for stability"',
            "wrong at tau=0.001 alone", '''
class StraightThroughSoftmax(torch.autograd.Function):
    @staticmethod
    def forward(ctx, logits, tau):
        tau = max(tau, 0.01)
        soft = torch.softmax(logits / tau, -1)
        ctx.save_for_backward(soft)
        ctx.tau = tau
        return F.one_hot(logits.argmax(-1), logits.shape[-1]).to(logits.dtype)
    @staticmethod
    def backward(ctx, g):
        s, = ctx.saved_tensors
        return s * (g - (g * s).sum(-1, keepdim=True)) / ctx.tau, None
'''),
    Mistake('SignClippedSTE', 'nan_to_num on grad_output',
            "SignClippedSTE changes a non-finite grad_output", '''
class SignClippedSTE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.sign(x)
    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return torch.nan_to_num(grad_output) * (x.abs() <= 1)
'''),
    Mistake('RoundSTE', "round_ on x.detach(), which shares x's memory",
            "RoundSTE.forward modified its input x in place", '''
class RoundSTE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.detach().round_()
    @staticmethod
    def backward(ctx, grad_output):
        return grad_output
'''),
    Mistake('SignSTE', 'saves x.float(), never read', "SignSTE saved x as a float32 copy", '''
class SignSTE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x.float())
        return torch.sign(x)
    @staticmethod
    def backward(ctx, grad_output):
        return grad_output
'''),
]

UNUSUAL = [
    Unusual('SignClippedSTE', 'masked_fill beyond the window: 0 there at an infinite grad_output',
            '''
class SignClippedSTE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x.abs() > 1)
        return torch.sign(x)
    @staticmethod
    def backward(ctx, grad_output):
        beyond, = ctx.saved_tensors
        return grad_output.masked_fill(beyond, 0)
'''),
]
