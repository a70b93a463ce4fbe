"""Lesson 03: answers written by a reviewer of the lesson (the review that scored it 8), kept with
their verdicts: wrong ones across the exercises, each caught with its own first line, and
correct, unusual ones that must pass. (Their FakeQuantize with x * (1 / scale), the edges judged
differently and the gradient for scale left unsummed is not kept: fake_quantize and
fake_quantize_halves hold each of those.)"""

from .. import Mistake, Unusual

UNUSUAL = [
    Unusual('SignClippedSTE', 'the window saved as uint8, applied with torch.where', '''
class SignClippedSTE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward((x * x <= 1).to(torch.uint8))
        return torch.sign(x)

    @staticmethod
    def backward(ctx, grad_output):
        keep, = ctx.saved_tensors
        return torch.where(keep.bool(), grad_output, torch.zeros((), dtype=grad_output.dtype))
'''),
    Unusual('FakeQuantize', 'inside as clamp(v) == v, the clipped contribution as clamp(v)', '''
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
        c = v.clamp(ctx.qmin, ctx.qmax)
        inside = (c == v)
        grad_x = grad_output * inside if ctx.needs_input_grad[0] else None
        grad_scale = None
        if ctx.needs_input_grad[1]:
            local = torch.where(inside, torch.round(c) - c, c)
            grad_scale = (grad_output * local).sum()
        return grad_x, grad_scale, None, None
'''),
]

MISTAKES = [
    # right values, but the Jacobian n x n per row: rule 3 (memory linear in the sizes)
    Mistake('StraightThroughSoftmax', 'one-hot by cumsum of the maxima, logits saved, s from '
            'logsumexp, the Jacobian built and applied by matmul',
            'its largest tensor has shape (96, 128, 128), made by diag_embed', '''
class StraightThroughSoftmax(torch.autograd.Function):
    @staticmethod
    def forward(ctx, logits, tau):
        is_max = logits == logits.amax(dim=-1, keepdim=True)
        first = is_max & (is_max.cumsum(dim=-1) == 1)
        ctx.save_for_backward(logits)
        ctx.tau = tau
        return first.to(logits.dtype)

    @staticmethod
    def backward(ctx, grad_output):
        logits, = ctx.saved_tensors
        z = logits / ctx.tau
        s = torch.exp(z - torch.logsumexp(z, dim=-1, keepdim=True))
        jac = torch.diag_embed(s) - s.unsqueeze(-1) * s.unsqueeze(-2)   # J[j, i] = ds_j / dz_i
        grad_z = (grad_output.unsqueeze(-2) @ jac).squeeze(-2)
        return grad_z / ctx.tau, None
'''),
    Mistake('SignClippedSTE', 'mask cached on the class',
            'SignClippedSTE.forward sets SignClippedSTE._mask: a class attribute is shared', '''
class SignClippedSTE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        SignClippedSTE._mask = x.abs() <= 1
        return torch.sign(x)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * SignClippedSTE._mask
'''),
    Mistake('SignClippedSTE', 'grad_output flattened with .view(-1)',
            'SignClippedSTE.backward assumes a contiguous grad_output', '''
class SignClippedSTE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x.abs() <= 1)
        return torch.sign(x)

    @staticmethod
    def backward(ctx, grad_output):
        mask, = ctx.saved_tensors
        flat = grad_output.view(-1) * mask.reshape(-1)
        return flat.view(grad_output.shape)
'''),
    Mistake('FakeQuantize', 'qmin and qmax kept on the class',
            'FakeQuantize.forward sets FakeQuantize.qmin: a class attribute is shared', '''
class FakeQuantize(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale, qmin, qmax):
        FakeQuantize.qmin, FakeQuantize.qmax = qmin, qmax
        ctx.save_for_backward(x, scale)
        return torch.clamp(torch.round(x / scale), qmin, qmax) * scale

    @staticmethod
    def backward(ctx, grad_output):
        x, scale = ctx.saved_tensors
        qmin, qmax = FakeQuantize.qmin, FakeQuantize.qmax
        v = x / scale
        inside = (v >= qmin) & (v <= qmax)
        local = torch.where(inside, torch.round(v) - v,
                            torch.where(v < qmin, float(qmin), float(qmax)))
        return grad_output * inside, (grad_output * local).sum(), None, None
'''),
    Mistake('FakeQuantize', "LSQ's open interval at the lower edge only",
            "drops the clip's edges", '''
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
        inside = (v > ctx.qmin) & (v <= ctx.qmax)
        local = torch.where(inside, torch.round(v) - v,
                            torch.where(v <= ctx.qmin, float(ctx.qmin), float(ctx.qmax)))
        return grad_output * inside, (grad_output * local).sum(), None, None
'''),
    Mistake('StraightThroughSoftmax', 'F.one_hot without num_classes',
            "StraightThroughSoftmax's output has shape", '''
class StraightThroughSoftmax(torch.autograd.Function):
    @staticmethod
    def forward(ctx, logits, tau):
        ctx.save_for_backward(torch.softmax(logits / tau, dim=-1))
        ctx.tau = tau
        return F.one_hot(logits.argmax(dim=-1)).to(logits.dtype)

    @staticmethod
    def backward(ctx, grad_output):
        soft, = ctx.saved_tensors
        row = (grad_output * soft).sum(dim=-1, keepdim=True)
        return soft * (grad_output - row) / ctx.tau, None
'''),
    Mistake('StraightThroughSoftmax', 'tau saved as torch.tensor(tau), float32',
            "has float32's precision: forward saved a float32 tensor of shape ()", '''
class StraightThroughSoftmax(torch.autograd.Function):
    @staticmethod
    def forward(ctx, logits, tau):
        ctx.save_for_backward(torch.softmax(logits / tau, dim=-1), torch.tensor(tau))
        return F.one_hot(logits.argmax(dim=-1), logits.shape[-1]).to(logits.dtype)

    @staticmethod
    def backward(ctx, grad_output):
        soft, tau = ctx.saved_tensors
        row = (grad_output * soft).sum(dim=-1, keepdim=True)
        return soft * (grad_output - row) / tau, None
'''),
]
