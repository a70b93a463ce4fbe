"""Lesson 06: correct-but-unusual attention Functions and the mistakes the lesson names.

Most entries are the plain answers below with one line changed (``edit`` checks that the line
is there, so an entry cannot silently stop being the mistake it names)."""

from tools.catalogue import Mistake, Unusual, edit

SDPA = '''
class ScaledDotProductAttention(torch.autograd.Function):
    @staticmethod
    def forward(ctx, Q, K, V, scale, mask=None):
        scores = (Q @ K.transpose(-2, -1)) * scale
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        P = torch.softmax(scores, dim=-1)
        ctx.save_for_backward(Q, K, V, P)
        ctx.scale = scale
        return P @ V

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        Q, K, V, P = ctx.saved_tensors
        grad_V = P.transpose(-2, -1) @ grad_output
        grad_P = grad_output @ V.transpose(-2, -1)
        grad_S = P * (grad_P - (grad_P * P).sum(dim=-1, keepdim=True))
        grad_Q = ctx.scale * grad_S @ K
        grad_K = ctx.scale * grad_S.transpose(-2, -1) @ Q
        return grad_Q, grad_K, grad_V, None, None
'''

MEMORY = '''
class MemoryEfficientAttention(torch.autograd.Function):
    @staticmethod
    def forward(ctx, Q, K, V, scale, mask=None):
        scores = (Q @ K.transpose(-2, -1)) * scale
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        lse = torch.logsumexp(scores, dim=-1, keepdim=True)
        output = (scores - lse).exp() @ V
        ctx.save_for_backward(Q, K, V, output, lse.squeeze(-1), mask)
        ctx.scale = scale
        return output

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        Q, K, V, output, lse, mask = ctx.saved_tensors
        scores = (Q @ K.transpose(-2, -1)) * ctx.scale
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        P = (scores - lse.unsqueeze(-1)).exp()
        grad_P = grad_output @ V.transpose(-2, -1)
        grad_S = P * (grad_P - (grad_output * output).sum(dim=-1, keepdim=True))
        return (ctx.scale * grad_S @ K, ctx.scale * grad_S.transpose(-2, -1) @ Q,
                P.transpose(-2, -1) @ grad_output, None, None)
'''


S, M = "ScaledDotProductAttention", "MemoryEfficientAttention"
BACKWARD_S = "grad_S = P * (grad_P - (grad_P * P).sum(dim=-1, keepdim=True))"

UNUSUAL = [
    Unusual(S, "einsum everywhere", edit(
        SDPA, ("(Q @ K.transpose(-2, -1)) * scale", 'torch.einsum("...id,...jd->...ij", Q, K) '
                                                    "* scale"),
        ("grad_Q = ctx.scale * grad_S @ K", 'grad_Q = ctx.scale * torch.einsum("...ij,...jd->'
                                            '...id", grad_S, K)'))),
    Unusual(S, "FlashAttention's rowsum(dO * O), saving the output", edit(
        SDPA, ("P = torch.softmax(scores, dim=-1)\n", "P = torch.softmax(scores, dim=-1)\n"
                                                      "        O = P @ V\n"),
        ("ctx.save_for_backward(Q, K, V, P)", "ctx.save_for_backward(Q, K, V, P, O)"),
        ("return P @ V", "return O"), ("Q, K, V, P = ctx", "Q, K, V, P, O = ctx"),
        (BACKWARD_S, "grad_S = P * (grad_P - (grad_output * O).sum(-1, keepdim=True))"))),
    Unusual(S, "own stable softmax with torch.where and -1e30", edit(
        SDPA, ('scores = scores.masked_fill(~mask, float("-inf"))',
               "scores = torch.where(mask, scores, torch.tensor(-1e30, dtype=scores.dtype))"),
        ("P = torch.softmax(scores, dim=-1)", "e = (scores - scores.amax(-1, keepdim=True))"
                                               ".exp()\n        P = e / e.sum(-1, keepdim=True)"))),
    Unusual(S, "saves the scores and recomputes P", edit(
        SDPA, ("ctx.save_for_backward(Q, K, V, P)", "ctx.save_for_backward(Q, K, V, scores)"),
        ("Q, K, V, P = ctx.saved_tensors", "Q, K, V, scores = ctx.saved_tensors\n"
                                           "        P = torch.softmax(scores, dim=-1)"))),
    Unusual(M, "logsumexp, and D from dP * P on the recomputed P", edit(
        MEMORY, ("(grad_output * output).sum(dim=-1, keepdim=True)",
                 "(grad_P * P).sum(dim=-1, keepdim=True)"))),
    Unusual(M, "row max and row sum saved, two numbers per row", edit(
        MEMORY, ("lse = torch.logsumexp(scores, dim=-1, keepdim=True)",
                 "m = scores.amax(-1, keepdim=True)\n        z = (scores - m).exp().sum(-1, "
                 "keepdim=True)\n        lse = m + z.log()"),
        ("ctx.save_for_backward(Q, K, V, output, lse.squeeze(-1), mask)",
         "ctx.save_for_backward(Q, K, V, output, m.squeeze(-1), z.squeeze(-1), mask)"),
        ("Q, K, V, output, lse, mask = ctx.saved_tensors",
         "Q, K, V, output, m, z, mask = ctx.saved_tensors\n        lse = m + z.log()"))),
    Unusual(M, "the mask left out of save_for_backward when None", edit(
        MEMORY, ("ctx.save_for_backward(Q, K, V, output, lse.squeeze(-1), mask)",
                 "ctx.save_for_backward(Q, K, V, output, lse.squeeze(-1), "
                 "*([] if mask is None else [mask]))"),
        ("Q, K, V, output, lse, mask = ctx.saved_tensors",
         "Q, K, V, output, lse, *rest = ctx.saved_tensors\n        mask = rest[0] if rest "
         "else None"))),
]


def _sdpa(*changes, name=S):
    return edit(SDPA, *changes) if name == S else edit(MEMORY, *changes)


MISTAKES = [
    Mistake(S, "no row sum", "treats the softmax as element-wise, dS = P * dP",
            _sdpa((BACKWARD_S, "grad_S = P * grad_P")), named=True, nbgrader=True),
    Mistake(S, "diagonal of the Jacobian only", "uses only the diagonal of the softmax's Jacobian",
            _sdpa((BACKWARD_S, "grad_S = P * (1 - P) * grad_P")), named=True),
    Mistake(S, "row sum over the queries", "sums dP * P over the queries",
            _sdpa((BACKWARD_S, BACKWARD_S.replace("dim=-1", "dim=-2"))), named=True),
    Mistake(S, "reversed mask", "masks out the positions where mask is True",
            _sdpa(("masked_fill(~mask,", "masked_fill(mask,")), named=True),
    Mistake(S, "no mask=None path", "ScaledDotProductAttention.forward fails for mask=None",
            _sdpa(("        if mask is not None:\n            scores = scores.masked_fill",
                   "        if True:\n            scores = scores.masked_fill")), named=True),
    Mistake(S, "no maximum subtracted", "subtract each row's maximum score before exp",
            _sdpa(("P = torch.softmax(scores, dim=-1)",
                   "e = scores.exp()\n        P = e / e.sum(-1, keepdim=True)")), named=True),
    Mistake(S, "mask applied after a global max", "applies the mask after subtracting one "
            "global maximum",
            _sdpa(('            scores = scores.masked_fill(~mask, float("-inf"))\n'
                   "        P = torch.softmax(scores, dim=-1)",
                   "            pass\n        e = (scores - scores.max()).exp()\n"
                   "        if mask is not None:\n            e = e * mask\n"
                   "        P = e / e.sum(-1, keepdim=True)")), named=True),
    Mistake(S, "scale missing from dQ and dK", "off by a constant factor",
            _sdpa(("grad_Q = ctx.scale * grad_S @ K", "grad_Q = grad_S @ K"),
                  ("grad_K = ctx.scale * grad_S", "grad_K = grad_S")), named=True),
    Mistake(S, "mask kept as a ctx attribute", "stores a tensor as ctx.mask",
            _sdpa(("ctx.scale = scale\n", "ctx.scale = scale\n        ctx.mask = mask\n")),
            named=True),
    Mistake(S, "reversed mask filled with -1e9", "masks out the positions where mask is True",
            _sdpa(('masked_fill(~mask, float("-inf"))', "masked_fill(mask, -1e9)")), named=True),
    Mistake(S, "softmax gradient from torch.autograd.grad", "ScaledDotProductAttention.backward "
            "calls torch.autograd.grad: write the gradient formula by hand",
            _sdpa((BACKWARD_S, "with torch.enable_grad():\n"
                   "            S = P.log().detach().requires_grad_()\n"
                   "            grad_S, = torch.autograd.grad(torch.softmax(S, dim=-1), S, grad_P)"
                   )), named=True),
    Mistake(S, "built-in _softmax_backward_data", "uses the built-in op _softmax_backward_data",
            _sdpa((BACKWARD_S, "grad_S = torch._softmax_backward_data(grad_P, P, -1, P.dtype)")),
            named=True),
    Mistake(S, "a gradient for the float scale", "backward returned a gradient for scale, which "
            "is not a tensor: return None for scale",
            _sdpa(("return grad_Q, grad_K, grad_V, None, None",
                   "return grad_Q, grad_K, grad_V, torch.zeros(()), None")), named=True),
    Mistake(M, "saves the probabilities", "as big as the Lq x Lk probabilities",
            SDPA + "\n\nclass MemoryEfficientAttention(ScaledDotProductAttention):\n    pass\n",
            named=True, nbgrader=True),
    Mistake(M, "saves the scores as well", "as big as the Lq x Lk probabilities", _sdpa(
        ("ctx.save_for_backward(Q, K, V, output, lse.squeeze(-1), mask)",
         "ctx.save_for_backward(Q, K, V, output, lse.squeeze(-1), mask, scores)"),
        ("Q, K, V, output, lse, mask = ctx.saved_tensors",
         "Q, K, V, output, lse, mask, _ = ctx.saved_tensors"), name=M), named=True),
    # autograd drops a gradient for the mask (it needs none), so no value showed it
    Mistake(M, "zeros returned as the mask's gradient", "as the mask's gradient where the "
            "contract asks None", _sdpa(("P.transpose(-2, -1) @ grad_output, None, None)",
                                         "P.transpose(-2, -1) @ grad_output, None,\n"
                                         "                None if mask is None else "
                                         "torch.zeros_like(mask))"), name=M), named=True),
    # a bool copy as big as the scores: the hint said to recompute P, which it does already
    Mistake(M, "saves the mask expanded to the scores' shape", "save the mask as given", _sdpa(
        ("ctx.save_for_backward(Q, K, V, output, lse.squeeze(-1), mask)",
         "ctx.save_for_backward(Q, K, V, output, lse.squeeze(-1), mask if mask is None else "
         "mask.expand(scores.shape).clone())"), name=M), named=True),
    Mistake(M, "log-sum-exp without the row maximum", "log-sum-exp overflows for large scores",
            edit(MEMORY, ("lse = torch.logsumexp(scores, dim=-1, keepdim=True)",
                           "lse = scores.exp().sum(dim=-1, keepdim=True).log()")),
            named=True),
    Mistake(M, "no row sum", "treats the softmax as element-wise, dS = P * dP", _sdpa(
        ("grad_S = P * (grad_P - (grad_output * output).sum(dim=-1, keepdim=True))",
         "grad_S = P * grad_P"), name=M), named=True),
]

MISTAKES += [
    # -inf * 0 = nan in every masked position: not a magnitude problem, so the hint quotes the
    # numbers instead of asking for a maximum to be subtracted
    Mistake(S, "mask applied by arithmetic with -inf", "contains inf or nan where the true "
            "value is finite", _sdpa(('scores = scores.masked_fill(~mask, float("-inf"))',
                                      'scores = scores * mask + (~mask) * float("-inf")'))),
]

MISTAKES += [
    Mistake(S, "row sum without keepdim", "drops the dimension of its row sum",
            _sdpa((BACKWARD_S, BACKWARD_S.replace(", keepdim=True", "")))),
    Mistake(M, "D = rowsum(dO * O) without keepdim", "drops the dimension of its row sum",
            _sdpa(("(grad_output * output).sum(dim=-1, keepdim=True)",
                   "(grad_output * output).sum(dim=-1)"), name=M)),
]

MISTAKES += [
    Mistake(M, "log-sum-exp kept in bfloat16", "keeps its log-sum-exp in bfloat16",
            _sdpa(("ctx.save_for_backward(Q, K, V, output, lse.squeeze(-1), mask)",
                   "ctx.save_for_backward(Q, K, V, output, lse.squeeze(-1).bfloat16(), mask)"),
                  name=M)),
    # right to 1e-5 on the plain cases; the scores in the thousands show it (L's rounding,
    # about 1e-4, moves every P of its row), which was blamed on a diagonal-only backward
    # (near one-hot rows cannot tell the two apart) or left a bare "is wrong"
    Mistake(M, "log-sum-exp kept in float32 for float64 inputs",
            "keeps its log-sum-exp in float32 for float64 inputs",
            _sdpa(("ctx.save_for_backward(Q, K, V, output, lse.squeeze(-1), mask)",
                   "ctx.save_for_backward(Q, K, V, output, lse.squeeze(-1).float(), mask)"),
                  name=M)),
]

_RECOMPUTE = ('''        scores = (Q @ K.transpose(-2, -1)) * ctx.scale
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        P = (scores - lse.unsqueeze(-1)).exp()''')

UNUSUAL += [
    Unusual(S, "the softmax Jacobian built, diag(p) - p p^T, and applied by a matmul", _sdpa(
        (BACKWARD_S, "J = torch.diag_embed(P) - P.unsqueeze(-1) * P.unsqueeze(-2)\n"
         "        grad_S = (J @ grad_P.unsqueeze(-1)).squeeze(-1)"))),
    Unusual(S, "a float mask of 0 and -inf added to the scores", _sdpa(
        ('scores = scores.masked_fill(~mask, float("-inf"))',
         "scores = scores + torch.zeros(mask.shape, dtype=scores.dtype, device=scores.device)"
         '.masked_fill(mask.logical_not(), float("-inf"))'))),
    Unusual(M, "nothing but Q, K, V and the mask saved: the softmax recomputed whole", _sdpa(
        ("ctx.save_for_backward(Q, K, V, output, lse.squeeze(-1), mask)",
         "ctx.save_for_backward(Q, K, V, mask)"),
        ("Q, K, V, output, lse, mask = ctx.saved_tensors", "Q, K, V, mask = ctx.saved_tensors"),
        ("P = (scores - lse.unsqueeze(-1)).exp()", "P = torch.softmax(scores, -1)"),
        ("(grad_output * output).sum(dim=-1, keepdim=True)", "(grad_P * P).sum(-1, keepdim=True)"),
        name=M)),
    Unusual(M, "the mask applied to the recomputed P by torch.where", _sdpa((_RECOMPUTE, '''\
        scores = (Q @ K.transpose(-2, -1)) * ctx.scale
        P = (scores - lse.unsqueeze(-1)).exp()
        if mask is not None:
            P = torch.where(mask, P, torch.zeros((), dtype=P.dtype))'''), name=M)),
]

MISTAKES += [
    # forward masks, backward forgets: exp(S - L) is not 0 at the masked keys (dV shows it)
    Mistake(M, "mask left out of backward's recomputation",
            "recomputes the probabilities without the mask", _sdpa((_RECOMPUTE, '''\
        scores = (Q @ K.transpose(-2, -1)) * ctx.scale
        P = (scores - lse.unsqueeze(-1)).exp()'''), name=M), named=True),
]

MISTAKES += [
    # the (..., Lq) row sums put back as a row, (..., 1, Lq): on square scores no error, the
    # wrong axis (the fresh review's probe got only the generic hint)
    Mistake(S, "row sums unsqueezed as a row", "lays its row sums out as a row",
            _sdpa((BACKWARD_S, "grad_S = P * (grad_P - (grad_P * P).sum(dim=-1).unsqueeze(-2))"))),
]

UNUSUAL += [
    # the in-place version the lesson's peak explanation measures (at N = 1024 by the lesson's
    # peak_bytes: forward 4.25 MiB, kept 0.25, backward 8.75 on top, step peak 9.0 against 17.0): scores scaled, shifted and exponentiated in their own buffer, dS made
    # on dP's, the scale applied after the products; at most two Lq x Lk tensors alive
    Unusual(M, "written in place: one buffer for S, S - L and P, dS on dP's", _sdpa(
        (_RECOMPUTE, '''\
        P = (Q @ K.transpose(-2, -1)).mul_(ctx.scale)
        if mask is not None:
            P.masked_fill_(~mask, float("-inf"))
        P.sub_(lse.unsqueeze(-1)).exp_()'''),
        ("scores = (Q @ K.transpose(-2, -1)) * scale",
         "scores = (Q @ K.transpose(-2, -1)).mul_(scale)"),
        ('scores = scores.masked_fill(~mask, float("-inf"))',
         'scores.masked_fill_(~mask, float("-inf"))'),
        ("output = (scores - lse).exp() @ V", "output = scores.sub_(lse).exp_() @ V"),
        ("grad_S = P * (grad_P - (grad_output * output).sum(dim=-1, keepdim=True))",
         "grad_S = grad_P.sub_((grad_output * output).sum(dim=-1, keepdim=True)).mul_(P)"),
        ("return (ctx.scale * grad_S @ K, ctx.scale * grad_S.transpose(-2, -1) @ Q,",
         "return (grad_S @ K * ctx.scale, grad_S.transpose(-2, -1) @ Q * ctx.scale,"),
        name=M)),
]
