"""Lesson 12's transfer exercise: answers with known verdicts for PerSampleClippedLinear."""

from .. import Mistake, Unusual, edit
from .answers import (_FORMER_PS, _NUMPY_STACK, _PS, _PS_RATIO, _PS_RIGHT, _PS_TF, _PS_WHERE, _U2,
                      _chunks, _float32_only, _ps_slack)

_FORWARD = '''
    @staticmethod
    def forward(ctx, x, weight, max_norm):
        ctx.save_for_backward(x, weight)
        ctx.max_norm = max_norm
        return x @ weight.T
'''

_FORWARD_NORMS = '''
    @staticmethod
    def forward(ctx, x, weight, max_norm):
        x_norms = torch.linalg.vector_norm(x, dim=1)
        ctx.save_for_backward(x, weight, x_norms)
        ctx.max_norm = max_norm
        return x @ weight.T
'''

_HEAD = '''        x, weight = ctx.saved_tensors
        grad_x = grad_weight = None
        if ctx.needs_input_grad[0]:
            grad_x = grad_output @ weight
'''

_NORMS = ("        norms = torch.linalg.vector_norm(grad_output, dim=1) * "
          "torch.linalg.vector_norm(x, dim=1)\n")


def _clipped(backward_body: str, forward: str = _FORWARD) -> str:
    return ("class PerSampleClippedLinear(torch.autograd.Function):\n" + forward +
            "\n    @staticmethod\n    def backward(ctx, grad_output):\n" + backward_body)


def _weight_only(body: str) -> str:
    """The usual head, then ``body`` computing grad_weight when it is needed."""
    indented = "".join(f"    {line}\n" for line in body.rstrip("\n").split("\n"))
    return _clipped(_HEAD + "        if ctx.needs_input_grad[1]:\n" + indented +
                    "        return grad_x, grad_weight, None\n")


UNUSUAL = [
    Unusual("PerSampleClippedLinear", "einsum with the factors as a third operand",
            _weight_only(
        _NORMS + "        factors = (ctx.max_norm / norms).clamp(max=1)\n"
        "        grad_weight = torch.einsum('n,no,ni->oi', factors, grad_output, x)")),
    Unusual("PerSampleClippedLinear", "x and weight kept transposed, addmm into zeros",
            _clipped(
        '''        xt, weight = ctx.saved_tensors
        grad_x = grad_weight = None
        if ctx.needs_input_grad[0]:
            grad_x = torch.mm(grad_output, weight)
        if ctx.needs_input_grad[1]:
            norms = grad_output.norm(dim=1) * xt.norm(dim=0)
            factors = torch.minimum(torch.ones_like(norms), ctx.max_norm / norms)
            grad_weight = torch.zeros_like(weight).addmm_(grad_output.T * factors, xt.T)
        return grad_x, grad_weight, None
''', forward='''
    @staticmethod
    def forward(ctx, x, weight, max_norm):
        xt = x.T
        ctx.save_for_backward(xt, weight)
        ctx.max_norm = float(max_norm)
        return torch.mm(x, weight.T)
''')),
    Unusual('PerSampleClippedLinear', "max_norm / max(norm, max_norm) on x's rows, einsum, F.linear",
            '''class PerSampleClippedLinear(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, max_norm):
        ctx.save_for_backward(x, weight)
        ctx.max_norm = max_norm
        return F.linear(x, weight)

    @staticmethod
    def backward(ctx, grad_output):
        x, weight = ctx.saved_tensors
        grad_x = torch.einsum("no,oi->ni", grad_output, weight) if ctx.needs_input_grad[0] else None
        grad_weight = None
        if ctx.needs_input_grad[1]:
            norms = grad_output.norm(dim=1) * x.norm(dim=1)
            factors = ctx.max_norm / norms.clamp(min=ctx.max_norm)  # exactly 1 at or below m, 0 -> 1
            grad_weight = torch.einsum("no,ni->oi", grad_output, x * factors[:, None])
        return grad_x, grad_weight, None
'''),
    Unusual('PerSampleClippedLinear', 'saves x or weight only when needed, m / norm.clamp(min=m)',
            'class PerSampleClippedLinear(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x, weight, max_norm):\n        need_x, need_w = ctx.needs_input_grad[:2]\n        ctx.save_for_backward(x if need_w else None, weight if need_x else None)\n        ctx.max_norm = max_norm\n        return torch.mm(x, weight.t())\n    @staticmethod\n    def backward(ctx, grad_output):\n        x, weight = ctx.saved_tensors\n        gx = gw = None\n        if ctx.needs_input_grad[0]:\n            gx = grad_output.mm(weight)\n        if ctx.needs_input_grad[1]:\n            n = grad_output.norm(dim=1) * x.norm(dim=1)\n            f = ctx.max_norm / n.clamp(min=ctx.max_norm)    # = min(1, m/n); 1 when n = 0\n            gw = grad_output.t().mm(x * f[:, None])\n        return gx, gw, None\n'),
    Unusual('PerSampleClippedLinear', 'torch.where factors, (x.T @ (g * f)).T',
            'class PerSampleClippedLinear(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x, weight, max_norm):\n        ctx.save_for_backward(x, weight)\n        ctx.max_norm = max_norm\n        return x @ weight.T\n    @staticmethod\n    def backward(ctx, g):\n        x, weight = ctx.saved_tensors\n        gx = gw = None\n        if ctx.needs_input_grad[0]:\n            gx = g @ weight\n        if ctx.needs_input_grad[1]:\n            n = torch.linalg.vector_norm(g, dim=1) * torch.linalg.vector_norm(x, dim=1)\n            f = torch.where(n > ctx.max_norm, ctx.max_norm / n, torch.ones_like(n))\n            gw = (x.T @ (g * f.unsqueeze(1))).T\n        return gx, gw, None\n'),
    Unusual('PerSampleClippedLinear', 'a loop over outputs, each row a vector-matrix product',
            edit(_PS, (_PS_RIGHT, "            scaled = grad_output * (m / norms).clamp(max=1)[:, None]\n"
                       "            grad_weight = torch.stack([scaled[:, o] @ x for o in range(grad_output.shape[1])]) if grad_output.shape[1] else scaled.T @ x\n"))),
    Unusual('PerSampleClippedLinear', 'sqrt of the factor on each side',
            edit(_PS, (_PS_RIGHT, "            root = (m / norms).clamp(max=1).sqrt()[:, None]\n"
                                  "            grad_weight = (grad_output * root).T @ (x * root)\n"))),
    Unusual('PerSampleClippedLinear', 'max_norm divided by one norm, then by the other',
            edit(_PS, (_PS_RIGHT, "            s = (m / torch.linalg.vector_norm(grad_output, dim=1) / torch.linalg.vector_norm(x, dim=1)).clamp(max=1)\n"
                                  "            grad_weight = (grad_output * s[:, None]).T @ x\n"))),
    Unusual('PerSampleClippedLinear', 'sqrt of the factor on each side, nan guarded to 1, einsum '
            '(review 56)', _U2),
    Unusual('PerSampleClippedLinear', 'the factor chosen by where, on grad_output', _PS_WHERE),
    Unusual('PerSampleClippedLinear', 'sqrt of the factor on each side, chosen by where',
            edit(_PS, (_PS_RIGHT, "            root = torch.where(norms > m, m / norms, 1.0).sqrt()[:, None]\n"
                                  "            grad_weight = (grad_output * root).T @ (x * root)\n"))),
    Unusual('PerSampleClippedLinear', "the lesson's former solution, (m / norms).clamp(max=1)",
            _FORMER_PS),
    # a MISTAKE while the contract promised max_norm's float extremes (review of lesson 12,
    # seventh): no model meets them, so they left the contract and the grading
    Unusual('PerSampleClippedLinear', 'squared norms multiplied before the square root',
            '''class PerSampleClippedLinear(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, max_norm):
        ctx.save_for_backward(x, weight)
        ctx.max_norm = max_norm
        return x @ weight.T

    @staticmethod
    def backward(ctx, grad_output):
        x, weight = ctx.saved_tensors
        grad_x = grad_weight = None
        if ctx.needs_input_grad[0]:
            grad_x = grad_output @ weight
        if ctx.needs_input_grad[1]:
            norms = ((grad_output ** 2).sum(1) * (x ** 2).sum(1)).sqrt()
            factors = (ctx.max_norm / norms).clamp(max=1)
            grad_weight = (grad_output * factors[:, None]).T @ x
        return grad_x, grad_weight, None
'''),
    # a MISTAKE while the contract promised max_norm's float extremes (review of lesson 12,
    # seventh): no model meets them, so they left the contract and the grading
    Unusual("PerSampleClippedLinear", "squared norms, rsqrt and torch.where, x scaled", _weight_only(
        "        squared = (grad_output ** 2).sum(1) * (x ** 2).sum(1)\n"
        "        limit = ctx.max_norm ** 2\n"
        "        factors = torch.where(squared > limit, ctx.max_norm * torch.rsqrt(squared), 1.0)\n"
        "        grad_weight = grad_output.T @ (x * factors[:, None])")),
    # a MISTAKE while the contract promised max_norm's float extremes (review of lesson 12,
    # seventh): no model meets them, so they left the contract and the grading
    Unusual('PerSampleClippedLinear', "F.linear, factor 1 / clamp(norm / m, min=1), x's rows clipped, einsum",
            'class PerSampleClippedLinear(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x, weight, max_norm):\n        ctx.save_for_backward(x, weight)\n        ctx.max_norm = max_norm\n        return torch.nn.functional.linear(x, weight)\n    @staticmethod\n    def backward(ctx, grad_output):\n        x, weight = ctx.saved_tensors\n        grad_x = grad_weight = None\n        if ctx.needs_input_grad[0]:\n            grad_x = torch.mm(grad_output, weight)\n        if ctx.needs_input_grad[1]:\n            ratio = grad_output.norm(dim=1) * x.norm(dim=1) / ctx.max_norm\n            shrink = 1 / ratio.clamp(min=1)                       # min(1, m / norm), 1 at norm 0\n            grad_weight = torch.einsum("no,ni->oi", grad_output, x * shrink[:, None])\n        return grad_x, grad_weight, None\n'),
    # a MISTAKE while the contract promised max_norm's float extremes (review of lesson 12,
    # seventh): no model meets them, so they left the contract and the grading
    Unusual('PerSampleClippedLinear', 'product of the two squared norms', 'class PerSampleClippedLinear(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x, weight, max_norm):\n        ctx.save_for_backward(x, weight)\n        ctx.max_norm = max_norm\n        return x @ weight.T\n    @staticmethod\n    def backward(ctx, g):\n        x, weight = ctx.saved_tensors\n        gx = gw = None\n        if ctx.needs_input_grad[0]:\n            gx = g @ weight\n        if ctx.needs_input_grad[1]:\n            sq = g.pow(2).sum(1) * x.pow(2).sum(1)\n            f = torch.where(sq > ctx.max_norm ** 2, ctx.max_norm / sq.sqrt(), 1.0)\n            gw = (g * f[:, None].to(g.dtype)).T @ x\n        return gx, gw, None\n'),
    # a MISTAKE while the contract promised max_norm's float extremes (review of lesson 12,
    # seventh): no model meets them, so they left the contract and the grading
    Unusual('PerSampleClippedLinear', "TF's order, g * m / max(n, m)", edit(_PS, (_PS_RIGHT, _PS_TF))),
    # a MISTAKE while the contract promised max_norm's float extremes (review of lesson 12,
    # seventh): no model meets them, so they left the contract and the grading
    Unusual('PerSampleClippedLinear', "TF's order in float32 only", edit(_PS, (_PS_RIGHT, _float32_only(_PS_RIGHT, _PS_TF, "            ")))),
    # a MISTAKE while the contract promised max_norm's float extremes (review of lesson 12,
    # seventh): no model meets them, so they left the contract and the grading
    Unusual('PerSampleClippedLinear', 'g / max(n / m, 1) in float32 only',
            edit(_PS, (_PS_RIGHT, _float32_only(_PS_RIGHT, _PS_RATIO, "            ")))),
    # a MISTAKE while the contract promised max_norm's float extremes (review of lesson 12,
    # seventh): no model meets them, so they left the contract and the grading
    Unusual('PerSampleClippedLinear', "max_norm on grad_output's rows, 1 / norm on x's rows",
            edit(_PS, (_PS_RIGHT, "            clipped = (norms > m)[:, None]\n"
                                  "            g = torch.where(clipped, grad_output * m, grad_output)\n"
                                  "            xs = torch.where(clipped, x / norms[:, None], x)\n"
                                  "            grad_weight = g.T @ xs\n"))),
    # review of lesson 12 (seventh): x's norms in forward, only when weight needs a gradient
    Unusual("PerSampleClippedLinear", "x's norms computed in forward, gated on needs_input_grad",
            _clipped(_HEAD.replace("        x, weight = ctx.saved_tensors", "        x, weight, x_norms = ctx.saved_tensors")
                     + "        if ctx.needs_input_grad[1]:\n"
                     "            norms = torch.linalg.vector_norm(grad_output, dim=1) * x_norms\n"
                     "            factors = (ctx.max_norm / norms).clamp_max(1)\n"
                     "            grad_weight = (grad_output * factors[:, None]).T @ x\n"
                     "        return grad_x, grad_weight, None\n", forward=_FORWARD_NORMS.replace(
                         "x_norms = ", "x_norms = None if not ctx.needs_input_grad[1] else "))),
]

MISTAKES = [
    # review of lesson 12 (seventh): the factors as an (N, N) diagonal matrix; passed while the
    # batches graded were small next to the layer
    Mistake("PerSampleClippedLinear", "an (N, N) diagonal matrix of factors",
            "grows as the square of the batch", _weight_only(
                _NORMS + "        P_diag = torch.diag((ctx.max_norm / norms).clamp_max(1))\n"
                "        grad_weight = (P_diag @ grad_output).T @ x")),
    # review of lesson 12 (seventh): no outer product, a Python loop for the factors alone
    Mistake("PerSampleClippedLinear", "a loop over samples for the factors",
            "a count that grows with the batch is a loop over samples", _weight_only(
                "        factors = x.new_ones(x.shape[0])\n"
                "        for n in range(x.shape[0]):\n"
                "            norm = grad_output[n].norm() * x[n].norm()\n"
                "            if norm > ctx.max_norm:\n"
                "                factors[n] = ctx.max_norm / norm\n"
                "        grad_weight = (grad_output * factors[:, None]).T @ x")),
    # review of lesson 12 (seventh): x's norms in forward whatever needs_input_grad says; the
    # frozen-weight probe watched backward alone
    Mistake("PerSampleClippedLinear", "x's norms computed in forward with weight frozen",
            "forward computes per-sample work when only x requires grad",
            _clipped(_HEAD.replace("        x, weight = ctx.saved_tensors", "        x, weight, x_norms = ctx.saved_tensors")
                     + "        if ctx.needs_input_grad[1]:\n"
                     "            norms = torch.linalg.vector_norm(grad_output, dim=1) * x_norms\n"
                     "            factors = (ctx.max_norm / norms).clamp_max(1)\n"
                     "            grad_weight = (grad_output * factors[:, None]).T @ x\n"
                     "        return grad_x, grad_weight, None\n", forward=_FORWARD_NORMS)),
    # an Unusual answer until a tall batch (N = 512) was graded (review of lesson 12,
    # seventh): its two (N, N) Gram matrices are quadratic in the batch
    Mistake('PerSampleClippedLinear', 'norms from the diagonals of two Gram matrices',
            'grows as the square of the batch',
            _weight_only(
                "        squared = (grad_output @ grad_output.T).diagonal() * (x @ x.T).diagonal()\n"
                "        factors = (ctx.max_norm / squared.sqrt()).clamp(max=1)\n"
                "        grad_weight = (grad_output * factors[:, None]).T @ x")),
    # review of lesson 12 (fourth): passed while no sample's norm lay between 0 and 1e-12; a
    # sample of norm 5e-13 gets factor 0.5
    Mistake("PerSampleClippedLinear", "a clamp of the norm at 1e-12",
            "changed a sample whose gradient has norm 5e-13, below max_norm", _weight_only(
                _NORMS + "        factors = norms.clamp(max=ctx.max_norm) / norms.clamp(min=1e-12)\n"
                "        grad_weight = (grad_output * factors[:, None]).T @ x")),
    # review of lesson 12 (fourth): chunks of 4 samples' outer products, (4, out, in), passed
    # the size check (N * out * in) and the count of weight-sized tensors
    Mistake("PerSampleClippedLinear", "outer products built in chunks of 4 samples",
            "backward created a tensor of shape (4, 3, 5)", _weight_only(
                "        grad_weight = torch.zeros_like(weight)\n"
                "        for start in range(0, x.shape[0], 4):\n"
                "            g, xs = grad_output[start:start + 4], x[start:start + 4]\n"
                "            per_sample = g[:, :, None] * xs[:, None, :]\n"
                "            norms = torch.linalg.vector_norm(per_sample, dim=(1, 2))\n"
                "            factors = (ctx.max_norm / norms).clamp(max=1)\n"
                "            grad_weight.add_((g * factors[:, None]).T @ xs)")),
    # review of lesson 12 (fourth): one in-place rank-1 update per sample creates no tensor per
    # sample; the contract names the loop, and the count takes in-place writes since
    Mistake("PerSampleClippedLinear", "a loop over samples, one in-place addr_ each",
            "one step (or more) per sample", _weight_only(
                _NORMS + "        factors = (ctx.max_norm / norms).clamp(max=1)\n"
                "        grad_weight = torch.zeros_like(weight)\n"
                "        for n in range(x.shape[0]):\n"
                "            grad_weight.addr_(grad_output[n], x[n], alpha=factors[n].item())")),
    # issue 37: an Unusual answer until the domain reached max_norm = 1e-4; the epsilon is a
    # relative error of 1e-6 / norm, invisible at norms near 1 and 1% at norms near 1e-4
    Mistake("PerSampleClippedLinear",
            "Opacus-style ghost norms, max_norm / (norm + 1e-6) (issue 37)",
            "adds an eps of 1e-06 to the norm",
            _weight_only(
                "        norm = torch.sqrt(torch.einsum('no,no->n', grad_output, grad_output)\n"
                "                          * torch.einsum('ni,ni->n', x, x))\n"
                "        factors = (ctx.max_norm / (norm + 1e-6)).clamp(max=1.0)\n"
                "        grad_weight = torch.einsum('n,no,ni->oi', factors, grad_output, x)")),
    # review of lesson 12: passed while the clipped samples were graded at rtol 1e-5; graded
    # since at 1e-9 of the size of the terms, where eps / norm is 1e-7 at max_norm = 1e-4
    Mistake("PerSampleClippedLinear", "eps 1e-10 added to the norm",
            "adds an eps of 1e-10 to the norm", _weight_only(
                "        norms = grad_output.norm(dim=1) * x.norm(dim=1)\n"
                "        factors = (ctx.max_norm / (norms + 1e-10)).clamp(max=1)\n"
                "        grad_weight = (grad_output * factors[:, None]).T @ x")),
    Mistake("PerSampleClippedLinear", "max_norm as a float32 tensor",
            "a float32 constant in float64", _weight_only(
                _NORMS + "        limit = torch.tensor(ctx.max_norm)\n"
                "        factors = (limit / norms).clamp(max=1)\n"
                "        grad_weight = (grad_output * factors[:, None]).T @ x")),
    # review of lesson 12: one (out, in) outer product per sample, in a Python loop, never an
    # (N, out, in) tensor; passed before the count of weight-sized tensors
    Mistake("PerSampleClippedLinear", "a loop over samples, one outer product each",
            "one step (or more) per sample", _weight_only(
                "        grad_weight = torch.zeros_like(weight)\n"
                "        for g_n, x_n in zip(grad_output, x):\n"
                "            outer = torch.outer(g_n, x_n)\n"
                "            norm = torch.linalg.vector_norm(outer)\n"
                "            factor = 1.0 if norm <= ctx.max_norm else ctx.max_norm / norm\n"
                "            grad_weight += factor * outer")),
    # review of lesson 12: x scaled in place in backward, so the caller's x changes; found only
    # by chance (an expanded x) before
    Mistake("PerSampleClippedLinear", "the saved x scaled in place",
            "backward modified its input x in place",
            _weight_only(_NORMS + "        factors = (ctx.max_norm / norms).clamp(max=1)\n"
                         "        grad_weight = grad_output.T @ x.mul_(factors[:, None])")),
    Mistake("PerSampleClippedLinear", "grad_output scaled in place",
            "modified grad_output in place", _weight_only(
                _NORMS + "        factors = (ctx.max_norm / norms).clamp(max=1)\n"
                "        grad_weight = grad_output.mul_(factors[:, None]).T @ x")),
    Mistake("PerSampleClippedLinear", "per-sample outer products built", "one outer product per "
            "sample", _weight_only(
                "        per_sample = grad_output[:, :, None] * x[:, None, :]\n"
                "        norms = per_sample.flatten(1).norm(dim=1)\n"
                "        factors = (ctx.max_norm / norms).clamp(max=1)\n"
                "        grad_weight = (per_sample * factors[:, None, None]).sum(0)"),
            named=True),
    # issue 48: the op is torch's (an einsum runs as mul), so the message names none
    Mistake("PerSampleClippedLinear", "per-sample outer products built with einsum",
            "backward created a tensor of shape (8, 3, 5), 120 elements", _weight_only(
                "        per_sample = torch.einsum('no,ni->noi', grad_output, x)\n"
                "        norms = per_sample.flatten(1).norm(dim=1)\n"
                "        factors = (ctx.max_norm / norms).clamp(max=1)\n"
                "        grad_weight = torch.einsum('noi,n->oi', per_sample, factors)")),
    Mistake("PerSampleClippedLinear", "a sample's norm written as ||g_n|| + ||x_n||",
            "clips by ||g_n|| + ||x_n||",
            _weight_only("        norms = (torch.linalg.vector_norm(grad_output, dim=1)\n"
                         "                 + torch.linalg.vector_norm(x, dim=1))\n"
                         "        factors = (ctx.max_norm / norms).clamp(max=1)\n"
                         "        grad_weight = (grad_output * factors[:, None]).T @ x")),
    Mistake("PerSampleClippedLinear", "clipped by ||g_n|| alone", "clips by ||g_n|| alone",
            _weight_only("        norms = torch.linalg.vector_norm(grad_output, dim=1)\n"
                         "        factors = (ctx.max_norm / norms).clamp(max=1)\n"
                         "        grad_weight = (grad_output * factors[:, None]).T @ x"),
            named=True, nbgrader=True),
    Mistake("PerSampleClippedLinear", "clipped by ||x_n|| alone", "clips by ||x_n|| alone",
            _weight_only("        factors = (ctx.max_norm / x.norm(dim=1)).clamp(max=1)\n"
                         "        grad_weight = (grad_output * factors[:, None]).T @ x")),
    Mistake("PerSampleClippedLinear", "squared norms", "squared norm", _weight_only(
        "        squared = (grad_output ** 2).sum(1) * (x ** 2).sum(1)\n"
        "        factors = (ctx.max_norm / squared).clamp(max=1)\n"
        "        grad_weight = (grad_output * factors[:, None]).T @ x")),
    Mistake("PerSampleClippedLinear", "grad_x clipped too", "clips grad_x too", _clipped(
        "        x, weight = ctx.saved_tensors\n" + _NORMS +
        "        scaled = grad_output * (ctx.max_norm / norms).clamp(max=1)[:, None]\n"
        "        return scaled @ weight, scaled.T @ x, None\n")),
    Mistake("PerSampleClippedLinear", "nan for a zero sample", "nan or inf where a sample's "
            "gradient is 0", _weight_only(
                _NORMS + "        factors = norms.clamp(max=ctx.max_norm) / norms\n"
                "        grad_weight = (grad_output * factors[:, None]).T @ x"), named=True),
    Mistake("PerSampleClippedLinear", "the summed gradient clipped", "clips the summed gradient",
            _weight_only("        grad_weight = grad_output.T @ x\n"
                         "        total = torch.linalg.vector_norm(grad_weight)\n"
                         "        grad_weight = grad_weight * (ctx.max_norm / total).clamp(max=1)")),
    # issue 68's instructor trial (carol): right for every N > 1, raises at N = 1, where
    # squeeze() drops the batch dimension too; the generic layer proves it by the same call at
    # N = 2 (autograder.size_one_raises.raises_only_at_size_one)
    Mistake("PerSampleClippedLinear", "norms squeezed", "raised IndexError where a dimension "
            "has size 1 (x of shape (1, 4)), and the same call runs with that dimension of "
            "size 2", _weight_only(_NORMS + "        norms = norms.squeeze()\n"
                                   "        factors = (ctx.max_norm / norms).clamp(max=1)\n"
                                   "        grad_weight = (grad_output * factors[:, None]).T @ x")),
    Mistake("PerSampleClippedLinear", "every sample scaled to max_norm", "small ones up too",
            _weight_only(_NORMS + "        factors = ctx.max_norm / norms.clamp(min=1e-12)\n"
                         "        grad_weight = (grad_output * factors[:, None]).T @ x")),
    Mistake("PerSampleClippedLinear", "no clipping", "sums the per-sample gradients unclipped",
            _weight_only("        grad_weight = grad_output.T @ x")),
    Mistake("PerSampleClippedLinear", "both gradients always computed",
            "returned a gradient for", _clipped(
                "        x, weight = ctx.saved_tensors\n" + _NORMS +
                "        factors = (ctx.max_norm / norms).clamp(max=1)\n"
                "        return grad_output @ weight, (grad_output * factors[:, None]).T @ x, "
                "None\n")),
    Mistake("PerSampleClippedLinear", "both computed, only the wanted one returned",
            "does as much work when only x requires grad", _clipped(
                "        x, weight = ctx.saved_tensors\n" + _NORMS +
                "        factors = (ctx.max_norm / norms).clamp(max=1)\n"
                "        grad_x, grad_weight = grad_output @ weight, "
                "(grad_output * factors[:, None]).T @ x\n"
                "        return (grad_x if ctx.needs_input_grad[0] else None, "
                "grad_weight if ctx.needs_input_grad[1] else None, None)\n")),
    # review of lesson 12: the norms before the gate; the gated matrix product still adds
    # work, so the op count alone passed it
    Mistake("PerSampleClippedLinear", "norms computed with weight frozen",
            "per-sample work when only x requires grad", _clipped(
                _HEAD.replace("        grad_x = grad_weight", _NORMS + "        grad_x = grad_weight")
                + "        if ctx.needs_input_grad[1]:\n"
                "            factors = (ctx.max_norm / norms).clamp(max=1)\n"
                "            grad_weight = (grad_output * factors[:, None]).T @ x\n"
                "        return grad_x, grad_weight, None\n")),
    # review of lesson 12 (fifth)
    Mistake('PerSampleClippedLinear', 'outer products built two samples at a time',
            'a chunk of the (N, out, in) stack',
            '''class PerSampleClippedLinear(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, max_norm):
        ctx.save_for_backward(x, weight)
        ctx.max_norm = max_norm
        return x @ weight.T

    @staticmethod
    def backward(ctx, grad_output):
        x, weight = ctx.saved_tensors
        grad_x = grad_weight = None
        if ctx.needs_input_grad[0]:
            grad_x = grad_output @ weight
        if ctx.needs_input_grad[1]:
            norms = []
            for start in range(0, x.shape[0], 2):
                chunk = grad_output[start:start + 2, :, None] * x[start:start + 2, None, :]
                norms.append(torch.linalg.vector_norm(chunk, dim=(1, 2)))
            norms = torch.cat(norms)
            factors = (ctx.max_norm / norms).clamp(max=1)
            grad_weight = (grad_output * factors[:, None]).T @ x
        return grad_x, grad_weight, None
'''),
    # review of lesson 12 (fifth): was a generic 'gradient for weight is wrong'
    Mistake('PerSampleClippedLinear', "||grad_output|| ||x_n|| as each sample's norm",
            "the factor uses one norm for the whole batch, not each sample's ||g_n|| ||x_n||",
            '''class PerSampleClippedLinear(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, max_norm):
        ctx.save_for_backward(x, weight)
        ctx.max_norm = max_norm
        return x @ weight.T

    @staticmethod
    def backward(ctx, grad_output):
        x, weight = ctx.saved_tensors
        grad_x = grad_weight = None
        if ctx.needs_input_grad[0]:
            grad_x = grad_output @ weight
        if ctx.needs_input_grad[1]:
            norms = grad_output.norm() * x.norm(dim=1)
            factors = (ctx.max_norm / norms).clamp(max=1)
            grad_weight = (grad_output * factors[:, None]).T @ x
        return grad_x, grad_weight, None
'''),
    # review of lesson 12 (fifth)
    Mistake('PerSampleClippedLinear', 'a loop over samples, each outer product built for its norm',
            'one step (or more) per sample',
            '''class PerSampleClippedLinear(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, max_norm):
        ctx.save_for_backward(x, weight)
        ctx.max_norm = max_norm
        return x @ weight.T

    @staticmethod
    def backward(ctx, grad_output):
        x, weight = ctx.saved_tensors
        grad_x = grad_weight = None
        if ctx.needs_input_grad[0]:
            grad_x = grad_output @ weight
        if ctx.needs_input_grad[1]:
            norms = torch.stack([torch.outer(g, xn).norm() for g, xn in zip(grad_output, x)])
            factors = (ctx.max_norm / norms).clamp(max=1)
            grad_weight = (grad_output * factors[:, None]).T @ x
        return grad_x, grad_weight, None
'''),
    Mistake('PerSampleClippedLinear', 'outer products in chunks of 4, laid out (out, 4, in)',
            'backward created a tensor of shape (3, 4, 5)',
            'class PerSampleClippedLinear(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x, weight, max_norm):\n        ctx.save_for_backward(x, weight)\n        ctx.max_norm = max_norm\n        return x @ weight.T\n    @staticmethod\n    def backward(ctx, grad_output):\n        x, weight = ctx.saved_tensors\n        grad_x = grad_weight = None\n        if ctx.needs_input_grad[0]:\n            grad_x = grad_output @ weight\n        if ctx.needs_input_grad[1]:\n            norms = []\n            for start in range(0, x.shape[0], 4):   # 4 samples at a time, to bound memory\n                g, xs = grad_output[start:start + 4], x[start:start + 4]\n                per_sample = torch.einsum("no,ni->oni", g, xs)   # 4 samples\' gradients\n                norms.append(per_sample.pow(2).sum((0, 2)).sqrt())\n            norms = torch.cat(norms)\n            factors = (ctx.max_norm / norms).clamp(max=1)\n            grad_weight = (grad_output * factors[:, None]).T @ x\n        return grad_x, grad_weight, None\n'),
    Mistake('PerSampleClippedLinear', 'norms.max() raises on an empty batch',
            'fails on an empty batch (N = 0)',
            'class PerSampleClippedLinear(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x, weight, max_norm):\n        ctx.save_for_backward(x, weight)\n        ctx.max_norm = max_norm\n        return x @ weight.T\n    @staticmethod\n    def backward(ctx, grad_output):\n        x, weight = ctx.saved_tensors\n        grad_x = grad_weight = None\n        if ctx.needs_input_grad[0]:\n            grad_x = grad_output @ weight\n        if ctx.needs_input_grad[1]:\n            norms = torch.linalg.vector_norm(grad_output, dim=1) * torch.linalg.vector_norm(x, dim=1)\n            if norms.max() <= ctx.max_norm:       # nothing to clip: the plain gradient\n                grad_weight = grad_output.T @ x\n            else:\n                factors = (ctx.max_norm / norms).clamp(max=1)\n                grad_weight = (grad_output * factors[:, None]).T @ x\n        return grad_x, grad_weight, None\n'),
    Mistake('PerSampleClippedLinear', 'norm clamped at 1e-12, max_norm 1e-14',
            'to norm 5e-15, not to max_norm=1e-14',
            'class PerSampleClippedLinear(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x, weight, max_norm):\n        ctx.save_for_backward(x, weight)\n        ctx.max_norm = max_norm\n        return x @ weight.T\n    @staticmethod\n    def backward(ctx, grad_output):\n        x, weight = ctx.saved_tensors\n        grad_x = grad_weight = None\n        if ctx.needs_input_grad[0]:\n            grad_x = grad_output @ weight\n        if ctx.needs_input_grad[1]:\n            norms = torch.linalg.vector_norm(grad_output, dim=1) * torch.linalg.vector_norm(x, dim=1)\n            factors = (ctx.max_norm / norms.clamp(min=1e-12)).clamp(max=1)   # guard the zero sample\n            grad_weight = (grad_output * factors[:, None]).T @ x\n        return grad_x, grad_weight, None\n'),
    Mistake('PerSampleClippedLinear', 'the per-sample stack in halves along out',
            'holds pieces of', 'class PerSampleClippedLinear(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x, weight, max_norm):\n        ctx.save_for_backward(x, weight)\n        ctx.max_norm = max_norm\n        return x @ weight.T\n    @staticmethod\n    def backward(ctx, grad_output):\n        x, weight = ctx.saved_tensors\n        grad_x = grad_weight = None\n        if ctx.needs_input_grad[0]:\n            grad_x = grad_output @ weight\n        if ctx.needs_input_grad[1]:\n            norms = torch.linalg.vector_norm(grad_output, dim=1) * torch.linalg.vector_norm(x, dim=1)\n            g = grad_output * (ctx.max_norm / norms).clamp(max=1)[:, None]\n            # "too big at once": the per-sample stack, a few output rows at a time\n            grad_weight = torch.cat([torch.einsum(\'no,ni->noi\', part, x).sum(0)\n                                     for part in g.split(max(1, g.shape[1] // 2), dim=1)])\n        return grad_x, grad_weight, None\n'),
    Mistake('PerSampleClippedLinear', 'one output row of every sample at a time, (N, in) each',
            'holds pieces of', 'class PerSampleClippedLinear(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x, weight, max_norm):\n        ctx.save_for_backward(x, weight)\n        ctx.max_norm = max_norm\n        return x @ weight.T\n    @staticmethod\n    def backward(ctx, grad_output):\n        x, weight = ctx.saved_tensors\n        grad_x = grad_weight = None\n        if ctx.needs_input_grad[0]:\n            grad_x = grad_output @ weight\n        if ctx.needs_input_grad[1]:\n            norms = torch.linalg.vector_norm(grad_output, dim=1) * torch.linalg.vector_norm(x, dim=1)\n            g = grad_output * (ctx.max_norm / norms).clamp(max=1)[:, None]\n            # one output row at a time: (N, in) per row, each row of the N sample gradients\n            grad_weight = torch.stack([(g[:, o:o + 1] * x).sum(0) for o in range(g.shape[1])])\n        return grad_x, grad_weight, None\n'),
    Mistake('PerSampleClippedLinear', 'norm clamped at 1e-20',
            'a floor) of the norm at about 1e-20', 'class PerSampleClippedLinear(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x, weight, max_norm):\n        ctx.save_for_backward(x, weight)\n        ctx.max_norm = max_norm\n        return x @ weight.T\n    @staticmethod\n    def backward(ctx, g):\n        x, weight = ctx.saved_tensors\n        gx = gw = None\n        if ctx.needs_input_grad[0]:\n            gx = g @ weight\n        if ctx.needs_input_grad[1]:\n            norms = (torch.linalg.vector_norm(g, dim=1) * torch.linalg.vector_norm(x, dim=1)).clamp(min=1e-20)\n            f = (ctx.max_norm / norms).clamp(max=1)\n            gw = (g * f[:, None]).T @ x\n        return gx, gw, None\n'),
    Mistake('PerSampleClippedLinear', 'norm clamped at float32 tiny',
            'a floor) of the norm at about 1.2e-38', 'class PerSampleClippedLinear(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x, weight, max_norm):\n        ctx.save_for_backward(x, weight)\n        ctx.max_norm = max_norm\n        return x @ weight.T\n    @staticmethod\n    def backward(ctx, g):\n        x, weight = ctx.saved_tensors\n        gx = gw = None\n        if ctx.needs_input_grad[0]:\n            gx = g @ weight\n        if ctx.needs_input_grad[1]:\n            norms = (torch.linalg.vector_norm(g, dim=1) * torch.linalg.vector_norm(x, dim=1)).clamp(min=torch.finfo(torch.float32).tiny)\n            f = (ctx.max_norm / norms).clamp(max=1)\n            gw = (g * f[:, None]).T @ x\n        return gx, gw, None\n'),
    Mistake('PerSampleClippedLinear', 'a relative slack of 1e-2 on the threshold',
            'unclipped (max_norm=1, float64): a slack on the threshold', _ps_slack('1.01')),
    Mistake('PerSampleClippedLinear', 'a relative slack of 0.1 on the threshold (was: shared state)',
            'a slack on the threshold', _ps_slack('1.1')),
    Mistake('PerSampleClippedLinear', 'a slack of 2e-3, float32 samples only',
            'max_norm unclipped (max_norm=1, float32): a slack on the threshold',
            edit(_PS, (_PS_RIGHT, "            slack = 1.002 if x.dtype == torch.float32 else 1.0\n"
                                  "            f = torch.where(norms > m * slack, m / norms, torch.ones_like(norms))\n"
                                  "            grad_weight = (grad_output * f[:, None]).T @ x\n"))),
    Mistake('PerSampleClippedLinear', 'a sum over chunks of 1 sample (a loop over samples)',
            'one step (or more) per sample', _chunks(1)),
    Mistake('PerSampleClippedLinear', 'the (N, out, in) stack built in NumPy',
            'allocated', _NUMPY_STACK),
    # an Unusual answer until a tall batch (N = 512) was graded (review of lesson 12,
    # seventh): an (N, N) matrix is quadratic in the batch (rule 3)
    Mistake('PerSampleClippedLinear', 'norms from the diagonals of two (N, N) Gram matrices', 'grows as the square of the batch',
            edit(_PS, ("            norms = torch.linalg.vector_norm(grad_output, dim=1) * torch.linalg.vector_norm(x, dim=1)\n",
                       "            norms = (grad_output @ grad_output.T).diagonal().sqrt() * (x @ x.T).diagonal().sqrt()\n"))),
    # an Unusual answer until a tall batch (N = 512) was graded (review of lesson 12,
    # seventh): an (N, N) matrix is quadratic in the batch (rule 3)
    Mistake('PerSampleClippedLinear', 'multi_dot with diag(s)', 'grows as the square of the batch',
            edit(_PS, (_PS_RIGHT, "            s = (m / norms).clamp(max=1)\n"
                                  "            grad_weight = torch.linalg.multi_dot([grad_output.mT, torch.diag(s), x]) if x.shape[0] else weight.new_zeros(weight.shape)\n"))),
    # an Unusual answer until a tall batch (N = 512) was graded (review of lesson 12,
    # seventh): a loop over chunks of samples is a loop over samples
    Mistake('PerSampleClippedLinear', 'a sum over chunks of 2 samples', 'a count that grows with the batch',
            _chunks(2)),
    # an Unusual answer until a tall batch (N = 512) was graded (review of lesson 12,
    # seventh): a loop over chunks of samples is a loop over samples
    Mistake('PerSampleClippedLinear', 'a sum over chunks of 3 samples', 'a count that grows with the batch',
            _chunks(3)),
    # fresh review of lesson 12 at 751adb19 (PS_W4): the In-practice bias formula for a layer
    # without bias; its first line was "your gradient for weight is wrong", naming nothing
    Mistake("PerSampleClippedLinear", "a bias's 1 counted in ||x_n||",
            "the norm of a layer with a bias", _weight_only(
                "        norms = torch.linalg.vector_norm(grad_output, dim=1) * "
                "(x.pow(2).sum(1) + 1).sqrt()\n"
                "        factors = torch.where(norms > ctx.max_norm, ctx.max_norm / norms, 1.0)\n"
                "        grad_weight = (grad_output * factors[:, None]).T @ x")),
]
