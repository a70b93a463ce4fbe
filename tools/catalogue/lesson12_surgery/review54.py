"""Lesson 12, review 54: the per-sample stack built in halves along out, and one output row
(an (N, in) slice of every sample's gradient) at a time, which the size and shape checks let
through (each piece no larger than x); a ClipGradientNorm that sums its squares in float16 (an
Unusual answer while only float64 was graded; review 53's rows of norm 1200 zero it); and two
unusual answers that pass."""
from .. import Mistake, Unusual
from .answers import RAISES_AT_HUGE_FLOAT32

UNUSUAL = [
    Unusual('ClipGradientNorm', 'norms in float64 whatever the dtype, divide first, cast back',
            'class ClipGradientNorm(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x, max_norm):\n        ctx.max_norm = max_norm\n        return x.view_as(x)\n\n    @staticmethod\n    def backward(ctx, grad_output):\n        g = grad_output.double()                       # squares that fit whatever the dtype\n        norms = g.pow(2).sum(-1, keepdim=True).sqrt()\n        out = torch.where(norms > ctx.max_norm, g / norms * ctx.max_norm, g)\n        return out.to(grad_output.dtype), None\n'),
]

MISTAKES = [
    Mistake('ClipGradientNorm', 'squares summed in float16',
            "sums each row's squares in float16", 'class ClipGradientNorm(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x, max_norm):\n        ctx.max_norm = max_norm\n        return x.view_as(x)\n\n    @staticmethod\n    def backward(ctx, grad_output):\n        norms = (grad_output * grad_output).sum(-1, keepdim=True).sqrt()\n        return grad_output * (ctx.max_norm / norms).clamp(max=1), None\n'),
    Mistake('PerSampleClippedLinear', 'the per-sample stack in halves along out',
            'holds pieces of', 'class PerSampleClippedLinear(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x, weight, max_norm):\n        ctx.save_for_backward(x, weight)\n        ctx.max_norm = max_norm\n        return x @ weight.T\n    @staticmethod\n    def backward(ctx, grad_output):\n        x, weight = ctx.saved_tensors\n        grad_x = grad_weight = None\n        if ctx.needs_input_grad[0]:\n            grad_x = grad_output @ weight\n        if ctx.needs_input_grad[1]:\n            norms = torch.linalg.vector_norm(grad_output, dim=1) * torch.linalg.vector_norm(x, dim=1)\n            g = grad_output * (ctx.max_norm / norms).clamp(max=1)[:, None]\n            # "too big at once": the per-sample stack, a few output rows at a time\n            grad_weight = torch.cat([torch.einsum(\'no,ni->noi\', part, x).sum(0)\n                                     for part in g.split(max(1, g.shape[1] // 2), dim=1)])\n        return grad_x, grad_weight, None\n'),
    Mistake('PerSampleClippedLinear', 'one output row of every sample at a time, (N, in) each',
            'holds pieces of', 'class PerSampleClippedLinear(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x, weight, max_norm):\n        ctx.save_for_backward(x, weight)\n        ctx.max_norm = max_norm\n        return x @ weight.T\n    @staticmethod\n    def backward(ctx, grad_output):\n        x, weight = ctx.saved_tensors\n        grad_x = grad_weight = None\n        if ctx.needs_input_grad[0]:\n            grad_x = grad_output @ weight\n        if ctx.needs_input_grad[1]:\n            norms = torch.linalg.vector_norm(grad_output, dim=1) * torch.linalg.vector_norm(x, dim=1)\n            g = grad_output * (ctx.max_norm / norms).clamp(max=1)[:, None]\n            # one output row at a time: (N, in) per row, each row of the N sample gradients\n            grad_weight = torch.stack([(g[:, o:o + 1] * x).sum(0) for o in range(g.shape[1])])\n        return grad_x, grad_weight, None\n'),
    # Unusual until review 56: a float32 end of the clipping contract's range fails it
    Mistake('PerSampleClippedLinear', 'saves x or weight only when needed, m / norm.clamp(min=m)',
            RAISES_AT_HUGE_FLOAT32,
            'class PerSampleClippedLinear(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x, weight, max_norm):\n        need_x, need_w = ctx.needs_input_grad[:2]\n        ctx.save_for_backward(x if need_w else None, weight if need_x else None)\n        ctx.max_norm = max_norm\n        return torch.mm(x, weight.t())\n    @staticmethod\n    def backward(ctx, grad_output):\n        x, weight = ctx.saved_tensors\n        gx = gw = None\n        if ctx.needs_input_grad[0]:\n            gx = grad_output.mm(weight)\n        if ctx.needs_input_grad[1]:\n            n = grad_output.norm(dim=1) * x.norm(dim=1)\n            f = ctx.max_norm / n.clamp(min=ctx.max_norm)    # = min(1, m/n); 1 when n = 0\n            gw = grad_output.t().mm(x * f[:, None])\n        return gx, gw, None\n'),
]
