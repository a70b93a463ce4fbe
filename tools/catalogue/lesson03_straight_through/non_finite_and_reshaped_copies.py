"""Lesson 03: answers written by the reviewer of review 53, kept with their verdicts: plain
estimators whose backward cleans a non-finite grad_output (nan_to_num, an isfinite filter), and
forwards that save a copy of an input in another shape (reshape or flatten of a strided or
expanded input), which passed while only same-shape copies were seen."""

from .. import Mistake

MISTAKES = [
    Mistake('SignSTE', 'nan_to_num on grad_output', 'SignSTE changes a non-finite grad_output', '''
class SignSTE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return torch.sign(x)
    @staticmethod
    def backward(ctx, grad_output):
        return torch.nan_to_num(grad_output)
'''),
    Mistake('RoundSTE', 'grad_output zeroed where it is not finite',
            'RoundSTE changes a non-finite grad_output', '''
class RoundSTE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return torch.round(x)
    @staticmethod
    def backward(ctx, grad_output):
        return torch.where(torch.isfinite(grad_output), grad_output,
                           torch.zeros_like(grad_output))
'''),
    Mistake('SignSTE', 'saves x.reshape(-1): a copy of a transposed x',
            "SignSTE's forward saved a copy, reshaped to", '''
class SignSTE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x.reshape(-1))
        return torch.sign(x)
    @staticmethod
    def backward(ctx, grad_output):
        return grad_output
'''),
    Mistake('SignClippedSTE', 'saves x.flatten(), the mask reshaped in backward',
            "SignClippedSTE's forward saved a copy, reshaped to", '''
class SignClippedSTE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x.flatten())
        return torch.sign(x)
    @staticmethod
    def backward(ctx, grad_output):
        flat, = ctx.saved_tensors
        return grad_output * (flat.abs() <= 1).reshape(grad_output.shape)
'''),
    Mistake('FakeQuantize', 'saves x.reshape(-1), v rebuilt in backward',
            "FakeQuantize's forward saved a copy, reshaped to", '''
class FakeQuantize(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale, qmin, qmax):
        ctx.save_for_backward(x.reshape(-1), scale)
        ctx.qmin, ctx.qmax = qmin, qmax
        return torch.clamp(torch.round(x / scale), qmin, qmax) * scale
    @staticmethod
    def backward(ctx, grad_output):
        flat, scale = ctx.saved_tensors
        v = (flat / scale).reshape(grad_output.shape)
        inside = (v >= ctx.qmin) & (v <= ctx.qmax)
        local = torch.where(inside, torch.round(v) - v,
                            torch.where(v < ctx.qmin, float(ctx.qmin), float(ctx.qmax)))
        return grad_output * inside, (grad_output * local).sum(), None, None
'''),
    Mistake('StraightThroughSoftmax', 'saves logits.reshape(-1), softmax rebuilt in backward',
            "StraightThroughSoftmax's forward saved a copy, reshaped to", '''
class StraightThroughSoftmax(torch.autograd.Function):
    @staticmethod
    def forward(ctx, logits, tau):
        ctx.save_for_backward(logits.reshape(-1))
        ctx.tau, ctx.shape = tau, logits.shape
        index = logits.argmax(dim=-1, keepdim=True)
        return torch.zeros_like(logits).scatter_(-1, index, 1.0)
    @staticmethod
    def backward(ctx, grad_output):
        flat, = ctx.saved_tensors
        z = flat.reshape(ctx.shape) / ctx.tau
        e = torch.exp(z - z.amax(-1, keepdim=True))
        s = e / e.sum(-1, keepdim=True)
        return s * (grad_output - (grad_output * s).sum(-1, keepdim=True)) / ctx.tau, None
'''),
    Mistake('FakeQuantize', 'v = x / scale computed in float64 for float32 x',
            'FakeQuantize computes v = x / scale in float64', '''
class FakeQuantize(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale, qmin, qmax):
        ctx.save_for_backward(x, scale)
        ctx.qmin, ctx.qmax = qmin, qmax
        v = x.double() / scale.double()
        return (torch.clamp(torch.round(v), qmin, qmax) * scale.double()).to(x.dtype)
    @staticmethod
    def backward(ctx, grad_output):
        x, scale = ctx.saved_tensors
        v = x.double() / scale.double()
        inside = (v >= ctx.qmin) & (v <= ctx.qmax)
        local = torch.where(inside, torch.round(v) - v,
                            torch.where(v < ctx.qmin, float(ctx.qmin), float(ctx.qmax)))
        return ((grad_output * inside).to(x.dtype),
                (grad_output.double() * local).sum().to(scale.dtype), None, None)
'''),
]

UNUSUAL = []
