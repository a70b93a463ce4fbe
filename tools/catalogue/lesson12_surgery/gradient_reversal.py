"""Lesson 12: answers with known verdicts for GradientReversal (identity forward, -alpha times
grad_output backward)."""

from .. import Mistake, Unusual
from .answers import _U1, _reversal


UNUSUAL = [
    Unusual("GradientReversal", "a copy, and neg() times alpha", _reversal(
        "        return grad_output.neg() * ctx.alpha, None\n", forward='''
    @staticmethod
    def forward(ctx, x, alpha):
        ctx.alpha = float(alpha)
        return x.clone()
''')),
    Unusual("GradientReversal", "x + 0 and torch.mul", _reversal(
        "        return torch.mul(grad_output, -ctx.alpha), None\n", forward='''
    @staticmethod
    def forward(ctx, x, alpha):
        ctx.alpha = alpha
        return x + 0
''')),
    Unusual("GradientReversal", "alpha in a dict, materialisation off", _reversal(
        "        if grad_output is None:\n            return None, None\n"
        "        return -(ctx.settings['alpha'] * grad_output), None\n", forward='''
    @staticmethod
    def forward(ctx, x, alpha):
        ctx.set_materialize_grads(False)
        ctx.settings = {"alpha": alpha}
        return x.view_as(x)
''')),
    Unusual("GradientReversal", "DANN's ReverseLayerF (fungtion/DANN), forward returning x itself",
            _reversal("        output = grad_output.neg() * ctx.alpha\n        return output, None\n",
                      forward='''
    @staticmethod
    def forward(ctx, x, alpha):
        ctx.alpha = alpha
        return x
''')),
    Unusual("GradientReversal", "setup_context, forward without ctx", _reversal(
        "        return grad_output * -ctx.alpha, None\n", forward='''
    @staticmethod
    def forward(x, alpha):
        return x[...]

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.alpha = inputs[1]
''')),
    Unusual('GradientReversal', 'x.detach() alias, set_materialize_grads(False)',
            "class GradientReversal(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x, alpha):\n        ctx.set_materialize_grads(False)\n        ctx.alpha = alpha\n        return x.detach()          # an alias of x's memory, no copy\n    @staticmethod\n    def backward(ctx, grad_output):\n        if grad_output is None:\n            return None, None\n        return torch.mul(grad_output, -ctx.alpha), None\n"),
    Unusual('GradientReversal', 'empty_like().copy_(x) forward, g.neg() * alpha',
            'class GradientReversal(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x, alpha):\n        ctx.alpha = alpha\n        return torch.empty_like(x).copy_(x)\n    @staticmethod\n    def backward(ctx, g):\n        return g.neg() * ctx.alpha, None\n'),
    Unusual('GradientReversal', 'x itself returned, torch.neg of a scaled copy (review 56)', _U1),
]


MISTAKES = [
    Mistake("GradientReversal", "alpha forgotten",
            "forgets alpha: with alpha=0.5 its gradient for x is grad_output times -1, the same",
            _reversal("        return -grad_output, None\n"), named=True, nbgrader=True),
    Mistake("GradientReversal", "sign forgotten",
            "forgets the sign: with alpha=0.5 its gradient for x is grad_output times 0.5,",
            _reversal("        return ctx.alpha * grad_output, None\n"), named=True),
    Mistake("GradientReversal", "the size of alpha, not alpha",
            "returns grad_output times -0.75, the expected gradient times -1, for alpha=-0.75",
            _reversal("        return -abs(ctx.alpha) * grad_output, None\n")),
    Mistake("GradientReversal", "no reversal at all",
            "passes grad_output through unchanged: with alpha=0.5 its gradient for x is "
            "grad_output times 1,", _reversal("        return grad_output, None\n"), named=True),
    Mistake("GradientReversal", "grad_output left out",
            "ignores grad_output: with alpha=0.5 every element of its gradient for x is -0.5,",
            _reversal("        return torch.full_like(grad_output, -ctx.alpha), None\n")),
    Mistake("GradientReversal", "grad_output negated in place", "modified grad_output in place",
            _reversal("        return grad_output.mul_(-ctx.alpha), None\n"), named=True),
    Mistake("GradientReversal", "a gradient for alpha", "return None for alpha",
            _reversal("        return -ctx.alpha * grad_output, -grad_output.sum()\n"),
            named=True),
    Mistake("GradientReversal", "negative alpha dropped", "returns 0 for alpha=-0.75", _reversal(
        "        return -ctx.alpha * grad_output, None\n", forward='''
    @staticmethod
    def forward(ctx, x, alpha):
        ctx.alpha = max(alpha, 0.0)
        return x.view_as(x)
''')),
    Mistake("GradientReversal", "alpha kept as a tensor on ctx", "keeps a tensor on ctx (ctx.alpha)",
            _reversal("        return -ctx.alpha * grad_output, None\n", forward='''
    @staticmethod
    def forward(ctx, x, alpha):
        ctx.alpha = torch.tensor(alpha, dtype=x.dtype, device=x.device)
        return x.view_as(x)
''')),
    Mistake("GradientReversal", "saves x", "saved input x", _reversal(
        "        x, = ctx.saved_tensors\n        return -ctx.alpha * grad_output, None\n",
        forward='''
    @staticmethod
    def forward(ctx, x, alpha):
        ctx.alpha = alpha
        ctx.save_for_backward(x)
        return x.view_as(x)
'''), named=True),
    Mistake("GradientReversal", "forward writes into x", "forward modified x in place",
            _reversal("        return -ctx.alpha * grad_output, None\n", '''
    @staticmethod
    def forward(ctx, x, alpha):
        ctx.alpha = alpha
        return x.mul_(1)  # the same values, written into x
''')),
    # issue 45: alpha was tried down to 1e-4 only, so a threshold below it passed
    Mistake("GradientReversal", "a small alpha taken for 0", "is 0 at alpha=1e-12", _reversal(
        "        if abs(ctx.alpha) < 1e-5:  # too small to matter\n"
        "            return torch.zeros_like(grad_output), None\n"
        "        return -ctx.alpha * grad_output, None\n")),
    # review of lesson 12: both were told they zeroed a small alpha (tried only at 1e-12)
    Mistake("GradientReversal", "alpha as a float32 tensor",
            "computes with alpha as a float32 tensor",
            _reversal("        return grad_output * torch.tensor(-ctx.alpha), None\n")),
    Mistake("GradientReversal", "gradient returned in float32", "is float32 numbers throughout",
            _reversal("        return (-ctx.alpha * grad_output).float(), None\n")),
    # review of lesson 12 (fifth)
    Mistake('GradientReversal', "-|alpha|, reversed whatever alpha's sign",
            'the expected gradient times -1, for alpha=-0.75',
            '''class GradientReversal(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, alpha):
        ctx.alpha = alpha
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad_output):
        return -abs(ctx.alpha) * grad_output, None
'''),
    # review of lesson 12 (fifth)
    Mistake('GradientReversal', 'None for x at alpha == 0',
            'backward returned None for x, which requires grad',
            '''class GradientReversal(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, alpha):
        ctx.alpha = alpha
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad_output):
        if ctx.alpha == 0:
            return None, None  # nothing flows back at alpha 0: skip the multiplication
        return -ctx.alpha * grad_output, None
'''),
    # review of lesson 12 (fifth)
    Mistake('GradientReversal', 'forward through .view(-1).view(shape)',
            'view size is not compatible',
            '''class GradientReversal(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, alpha):
        ctx.alpha = alpha
        return x.view(-1).view(x.shape)

    @staticmethod
    def backward(ctx, grad_output):
        return -ctx.alpha * grad_output, None
'''),
]
