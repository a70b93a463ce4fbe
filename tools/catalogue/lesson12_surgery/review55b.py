"""Lesson 12, review 55b: PerSampleClippedLinear's range clause narrowed to where s_n times
every entry of the sample's rows is a normal number (the lesson's own answer, s_n on
grad_output's rows, returned 0 at grad_output 1e-60, x 1e60, max_norm 1e-300, outside that),
and graded at its edge in float64 and float32: m / ||g|| / ||x|| is right there, a split that
puts max_norm on grad_output's rows and 1 / norm on x's underflows inside it. SoftThreshold's
gradient for x wrong on one side of the threshold alone is named by that side."""
from .. import Mistake, Unusual, edit
from .review55 import _PS, _PS_RIGHT

UNUSUAL = [
    Unusual('PerSampleClippedLinear', 'sqrt of the factor on each side',
            edit(_PS, (_PS_RIGHT, "            root = (m / norms).clamp(max=1).sqrt()[:, None]\n"
                                  "            grad_weight = (grad_output * root).T @ (x * root)\n"))),
    Unusual('PerSampleClippedLinear', 'max_norm divided by one norm, then by the other',
            edit(_PS, (_PS_RIGHT, "            s = (m / torch.linalg.vector_norm(grad_output, dim=1) / torch.linalg.vector_norm(x, dim=1)).clamp(max=1)\n"
                                  "            grad_weight = (grad_output * s[:, None]).T @ x\n"))),
    Unusual('PerSampleClippedLinear', 'multi_dot with diag(s)',
            edit(_PS, (_PS_RIGHT, "            s = (m / norms).clamp(max=1)\n"
                                  "            grad_weight = torch.linalg.multi_dot([grad_output.mT, torch.diag(s), x]) if x.shape[0] else weight.new_zeros(weight.shape)\n"))),
]

MISTAKES = [
    Mistake('PerSampleClippedLinear', "max_norm on grad_output's rows, 1 / norm on x's rows",
            'is a normal float64 number, inside the contract',
            edit(_PS, (_PS_RIGHT, "            clipped = (norms > m)[:, None]\n"
                                  "            g = torch.where(clipped, grad_output * m, grad_output)\n"
                                  "            xs = torch.where(clipped, x / norms[:, None], x)\n"
                                  "            grad_weight = g.T @ xs\n"))),
    Mistake('SoftThreshold', "x < -lam dropped (relu's gradient, y > 0)",
            'gradient for x is wrong only where x < -lam',
            '''class SoftThreshold(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, lam):
        y = torch.sign(x) * torch.clamp(x.abs() - lam, min=0)
        ctx.save_for_backward(y)
        return y
    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        passed = grad_output * (y != 0)
        return grad_output * (y > 0), -(passed * torch.sign(y)).sum()
'''),
]
