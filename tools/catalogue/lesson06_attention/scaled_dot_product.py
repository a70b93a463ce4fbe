"""Lesson 06: answers with known verdicts for ScaledDotProductAttention, among them masks that
large scores beat (a finite fill, or HF BERT's additive -10000) or that still take part in the
row maximum or the normaliser."""

from .. import Mistake, Unusual, edit
from .answers import (COMPUTED_UNASKED, FILL, IGNORES_NEEDS, SDPA, TAKE_PART, UNGATED, S,
                      _sdpa)

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
    Unusual(S, "saves the scores and recomputes P", edit(
        SDPA, ("ctx.save_for_backward(Q, K, V, P)", "ctx.save_for_backward(Q, K, V, scores)"),
        ("Q, K, V, P = ctx.saved_tensors", "Q, K, V, scores = ctx.saved_tensors\n"
                                           "        P = torch.softmax(scores, dim=-1)"))),
    Unusual(S, "a float mask of 0 and -inf added to the scores", _sdpa(
        ('scores = scores.masked_fill(~mask, float("-inf"))',
         "scores = scores + torch.zeros(mask.shape, dtype=scores.dtype, device=scores.device)"
         '.masked_fill(mask.logical_not(), float("-inf"))'))),
    # the mask given saved beside P though backward never reads it: the caller's tensor, no
    # byte more (review at 32340a34)
    Unusual(S, "the mask given saved beside P, unread", edit(
        SDPA, ("ctx.save_for_backward(Q, K, V, P)", "ctx.save_for_backward(Q, K, V, P, mask)"),
        ("Q, K, V, P = ctx.saved_tensors", "Q, K, V, P, _ = ctx.saved_tensors"))),
    # a select rather than a fill
    Unusual(S, "masked scores selected away by torch.where(mask, scores, -inf)", edit(
        SDPA, (FILL, 'scores = torch.where(mask, scores, float("-inf"))'))),
    Unusual(S, "the mask applied as log(mask) added to the scores", edit(
        SDPA, (FILL, "scores = scores + torch.log(mask.to(scores.dtype))"))),
]

MISTAKES = [
    # a Q-sized tensor kept beside the Q the caller holds, as Exercises 2 and 3 refuse it (review
    # at 32340a34: passed both, the bullet now says "no copy of one, scaled or not")
    Mistake(S, "Q * scale saved instead of Q", "saves a tensor of Q's shape", edit(
        SDPA, ("scores = (Q @ K.transpose(-2, -1)) * scale",
               "Qs = Q * scale\n        scores = Qs @ K.transpose(-2, -1)"),
        ("ctx.save_for_backward(Q, K, V, P)", "ctx.save_for_backward(Qs, K, V, P)"),
        ("Q, K, V, P = ctx.saved_tensors", "Qs, K, V, P = ctx.saved_tensors"),
        ("grad_K = ctx.scale * grad_S.transpose(-2, -1) @ Q",
         "grad_K = grad_S.transpose(-2, -1) @ Qs")), named=True),
    # the plain answer without its gates: every gradient computed and returned, needed or not
    Mistake(S, "ignores needs_input_grad", IGNORES_NEEDS, _sdpa(*UNGATED)),
    # dP and dS built when V alone needs a gradient, dQ and dK gated: work that serves only
    # dQ and dK (review 76, W15: passed both, where Exercise 4 named it)
    Mistake(S, "dP and dS built even when V alone needs a gradient",
            "computes dP = dO V^T", _sdpa(
                ("        if not (need_Q or need_K):\n            return None, None, grad_V, "
                 "None, None\n", ""))),
    # the scale saved as torch.tensor(scale), a float32 0-d tensor, and used in backward: float64
    # dQ and dK scaled by a rounded scale (review 76, W1: named only "a tensor of shape ()")
    Mistake(S, "the scale saved as a float32 0-d tensor", "the scale rounded to float32", edit(
        SDPA, ("ctx.save_for_backward(Q, K, V, P)\n        ctx.scale = scale",
               "ctx.save_for_backward(Q, K, V, P, torch.tensor(scale))"),
        ("Q, K, V, P = ctx.saved_tensors", "Q, K, V, P, scale = ctx.saved_tensors"),
        ("grad_Q = ctx.scale * grad_S @ K", "grad_Q = scale * grad_S @ K"),
        ("grad_K = ctx.scale * grad_S.transpose(-2, -1) @ Q",
         "grad_K = scale * grad_S.transpose(-2, -1) @ Q"))),
    # every gradient computed, the needed ones returned (review 74c, W3: passed both)
    Mistake(S, "every gradient computed, returned only when needed",
            "computes dK = dS^T Q (a (4, 2) product here, or its transpose) when only Q",
            _sdpa(*COMPUTED_UNASKED[S])),
    # each call's P in a dict on the class, keyed by id(ctx): every value right, and nothing
    # saved for autograd's checks to see (the fresh review's witness passed everything)
    Mistake(S, "P kept in a dict on the class, keyed by id(ctx)", "kept state outside "
            "ctx: the class (ScaledDotProductAttention._kept, shared by every call)", edit(
                SDPA, ("class ScaledDotProductAttention(torch.autograd.Function):\n",
                       "class ScaledDotProductAttention(torch.autograd.Function):\n"
                       "    _kept = {}\n\n"),
                ("ctx.save_for_backward(Q, K, V, P)", "ctx.save_for_backward(Q, K, V)\n"
                 "        ScaledDotProductAttention._kept[id(ctx)] = P"),
                ("Q, K, V, P = ctx.saved_tensors", "Q, K, V = ctx.saved_tensors\n"
                 "        P = ScaledDotProductAttention._kept.pop(id(ctx))")), named=True),
    Mistake(S, "no row sum", "backward treats the softmax as element-wise, dS = P * dP: raising one "
            "score also lowers every other probability of its row",
            _sdpa((BACKWARD_S, "grad_S = P * grad_P")), named=True, nbgrader=True),
    Mistake(S, "diagonal of the Jacobian only", "uses only the diagonal of the softmax's Jacobian, "
            "P * (1 - P) * dP",
            _sdpa((BACKWARD_S, "grad_S = P * (1 - P) * grad_P")), named=True),
    Mistake(S, "row sum over the queries", "sums dP * P over the queries: which dimension of "
            "dP * P indexes the keys?",
            _sdpa((BACKWARD_S, BACKWARD_S.replace("dim=-1", "dim=-2"))), named=True),
    Mistake(S, "reversed mask", "masks out the positions where mask is True: False means "
            "masked out",
            _sdpa(("masked_fill(~mask,", "masked_fill(mask,")), named=True),
    Mistake(S, "no mask=None path", "ScaledDotProductAttention.forward fails for mask=None",
            _sdpa(("        if mask is not None:\n            scores = scores.masked_fill",
                   "        if True:\n            scores = scores.masked_fill")), named=True),
    Mistake(S, "no maximum subtracted", "inf or nan for large scores, and is right once the "
            "same scores are made small: subtract each row's maximum score before exp",
            _sdpa(("P = torch.softmax(scores, dim=-1)",
                   "e = scores.exp()\n        P = e / e.sum(-1, keepdim=True)")), named=True),
    Mistake(S, "mask applied after a global max", "applies the mask after subtracting one "
            "global maximum",
            _sdpa(('            scores = scores.masked_fill(~mask, float("-inf"))\n'
                   "        P = torch.softmax(scores, dim=-1)",
                   "            pass\n        e = (scores - scores.max()).exp()\n"
                   "        if mask is not None:\n            e = e * mask\n"
                   "        P = e / e.sum(-1, keepdim=True)")), named=True),
    # the mask filled with -inf first, then one maximum for the whole tensor: was named as the
    # mask applied after it (review), which it is not
    Mistake(S, "one global max, the mask filled first", "subtracts one maximum for the whole "
            "tensor instead of each row's own",
            _sdpa(("P = torch.softmax(scores, dim=-1)",
                   "e = (scores - scores.max()).exp()\n        P = e / e.sum(-1, keepdim=True)")),
            named=True),
    Mistake(S, "scale missing from dQ and dK", "your gradient for Q is off by a constant factor",
            _sdpa(("grad_Q = ctx.scale * grad_S @ K", "grad_Q = grad_S @ K"),
                  ("grad_K = ctx.scale * grad_S", "grad_K = grad_S")), named=True),
    Mistake(S, "mask kept as a ctx attribute", "stores a tensor as ctx.mask: use "
            "ctx.save_for_backward",
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
    Mistake(S, "built-in _softmax_backward_data", "the built-in op _softmax_backward_data",
            _sdpa((BACKWARD_S, "grad_S = torch._softmax_backward_data(grad_P, P, -1, P.dtype)")),
            named=True),
    Mistake(S, "a gradient for the float scale", "backward returned a tensor of zeros for scale, "
            "an input that is not a tensor: a tensor of zeros is not None; return None for scale",
            _sdpa(("return grad_Q, grad_K, grad_V, None, None",
                   "return grad_Q, grad_K, grad_V, torch.zeros(()), None")), named=True),
    # -inf * 0 = nan in every masked position: not a magnitude problem, so the hint quotes the
    # numbers instead of asking for a maximum to be subtracted
    Mistake(S, "mask applied by arithmetic with -inf", "contains inf or nan where the true "
            "value is finite", _sdpa(('scores = scores.masked_fill(~mask, float("-inf"))',
                                      'scores = scores * mask + (~mask) * float("-inf")'))),
    Mistake(S, "row sum without keepdim", "drops the dimension of its row sum",
            _sdpa((BACKWARD_S, BACKWARD_S.replace(", keepdim=True", "")))),
    # the (..., Lq) row sums put back as a row, (..., 1, Lq): on square scores no error, the
    # wrong axis (the fresh review's probe got only the generic hint)
    Mistake(S, "row sums unsqueezed as a row", "lays its row sums out as a row",
            _sdpa((BACKWARD_S, "grad_S = P * (grad_P - (grad_P * P).sum(dim=-1).unsqueeze(-2))"))),
    # right while visible scores beat masked ones by less than 1e4: visible scores near -2e4
    # and masked ones near +7000 show it (it passed Exercises 1 and 2)
    Mistake(S, "masked scores filled with -1e4", "mask loses to large scores",
            edit(SDPA, (FILL, "scores = scores.masked_fill(~mask, -1e4)")), named=True),
    Mistake(S, "additive -10000 on masked scores", "mask loses to large scores",
            edit(SDPA, (FILL, "scores = scores + (~mask) * -10000.0"))),
    # every single backward is right; gradcheck's second backward on the graph raised torch's
    # version-counter error, naming only a shape
    Mistake(S, "dS built in place on the saved P", "changes a tensor that forward saved, in "
            "place", edit(SDPA, ("grad_S = P * (grad_P - (grad_P * P).sum(dim=-1, keepdim=True))",
                                 "grad_S = P.mul_(grad_P - (grad_P * P).sum(dim=-1, "
                                 "keepdim=True))"))),
    # both told to subtract each row's maximum, which they do (torch.softmax too): on the
    # scores in the thousands the masked ones set the maximum or the normaliser
    Mistake(S, "softmax over every key, then masked and renormalised", TAKE_PART, edit(
        SDPA, (FILL, "pass"), ("P = torch.softmax(scores, dim=-1)\n",
                               "P = torch.softmax(scores, dim=-1)\n        if mask is not None:\n"
                               "            P = P * mask\n"
                               "            P = P / P.sum(-1, keepdim=True)\n"))),
    Mistake(S, "row maximum taken before the mask fill", TAKE_PART, edit(
        SDPA, ("scores = (Q @ K.transpose(-2, -1)) * scale\n",
               "scores = (Q @ K.transpose(-2, -1)) * scale\n"
               "        top = scores.amax(-1, keepdim=True)\n"),
        ("P = torch.softmax(scores, dim=-1)", "e = (scores - top).exp()\n"
                                               "        P = e / e.sum(-1, keepdim=True)"))),
    # autograd drops a gradient for the bool mask (it needs none), so no value shows it
    Mistake(S, "zeros returned as the mask's gradient", "returned a tensor of zeros for "
            "its bool input mask", _sdpa(
                ("ctx.scale = scale\n",
                 "ctx.scale = scale\n        ctx.mask_shape = None if mask is None else mask.shape\n"),
                ("return grad_Q, grad_K, grad_V, None, None",
                 "return grad_Q, grad_K, grad_V, None, (\n            None if ctx.mask_shape is None "
                 "else torch.zeros(ctx.mask_shape, dtype=torch.bool))"))),
    # one call's scale on the class, read back by every backward: right for one call at a time
    Mistake(S, "scale kept on the class", "a class attribute is shared by every call",
            _sdpa(("ctx.scale", "ScaledDotProductAttention.scale"))),
    # K^T made contiguous "for backward's products": a second K kept until backward (issue 45:
    # a saved tensor replaced by a copy; the other exercises' entries save plain copies)
    Mistake(S, "saves K transposed and made contiguous", "saved a copy of its transposed input "
            "K", _sdpa(("ctx.save_for_backward(Q, K, V, P)",
                        "ctx.save_for_backward(Q, K.transpose(-2, -1).contiguous(), V, P)"),
                       ("Q, K, V, P = ctx.saved_tensors", "Q, K_t, V, P = ctx.saved_tensors\n"
                                                          "        K = K_t.transpose(-2, -1)"))),
    # right values, but an N x N Jacobian per query row: backward's memory grows with
    # Lq * Lk * Lk, not linearly in the sizes (rule 3; was UNUSUAL before the generic memory check)
    Mistake(S, "the softmax Jacobian built, diag(p) - p p^T, and applied by a matmul",
            "made by diag_embed: a Jacobian built as a matrix", _sdpa(
                (BACKWARD_S, "J = torch.diag_embed(P) - P.unsqueeze(-1) * P.unsqueeze(-2)\n"
                 "        grad_S = (J @ grad_P.unsqueeze(-1)).squeeze(-1)"))),
    # 0 * -inf is nan, and a negative scale turns -inf into +inf: named by the order it proves
    Mistake(S, "masked scores filled with -inf before scaling",
            "fills the masked scores with -inf before multiplying them by scale", edit(
                SDPA, ('scores = (Q @ K.transpose(-2, -1)) * scale\n'
                       '        if mask is not None:\n'
                       '            scores = scores.masked_fill(~mask, float("-inf"))',
                       'scores = Q @ K.transpose(-2, -1)\n'
                       '        if mask is not None:\n'
                       '            scores = scores.masked_fill(~mask, float("-inf"))\n'
                       '        scores = scores * scale'))),
]


# Correct over the scores models meet: they failed only on rows near -finfo(dtype).max / 2
# or at finfo(dtype).min, which the grader no longer tries (issue 69 item 4).
UNUSUAL += [
    # the Annotated Transformer's fill: right until every score of a row lies below -1e9 (the
    # fresh review's witness: it passed Exercise 1's self-check and grading); wrong only at
    # scales of 1e9 and more (review 75c, W6), which the contract's "of the size models use"
    # leaves out: at its bound a masked key's probability is exactly 0
    Unusual(S, 'masked scores filled with -1e9',
            edit(SDPA, (FILL, "scores = scores.masked_fill(~mask, -1e9)"))),
    # was an unusual answer: its -1e30 lies above float32 scores near -finfo.max / 2
    Unusual(S, 'own stable softmax with torch.where and -1e30',
            edit(
                SDPA, ('scores = scores.masked_fill(~mask, float("-inf"))',
                       "scores = torch.where(mask, scores, torch.tensor(-1e30, "
                       "dtype=scores.dtype))"),
                ("P = torch.softmax(scores, dim=-1)", "e = (scores - scores.amax(-1, "
                 "keepdim=True)).exp()\n        P = e / e.sum(-1, keepdim=True)"))),
    # finfo.min only ties with a visible score equal to it, where masked keys take a share
    Unusual(S, 'masked scores filled with torch.finfo(dtype).min',
            edit(SDPA, (FILL, FILL.replace('float("-inf")', "torch.finfo(scores.dtype).min")))),
]


# Hugging Face's softmax upcast, which narrows float64 scores: every value right to float32's
# precision only, which the grader said as a bare "gradient is wrong: 2.44e-07" (fresh review
# of 2026-11-29)
MISTAKES += [
    Mistake(S, "softmax computed in float32 for float64 inputs", "computed in float32?", _sdpa(
        ("P = torch.softmax(scores, dim=-1)",
         "P = torch.softmax(scores, dim=-1, dtype=torch.float32).to(scores.dtype)"))),
    # ~mask, a new Nq x Nk bool, saved "to make sure" backward zeroes the masked dS: the bullet
    # keeps the mask as it is (review 77, W1c: passed both; Exercise 2 named it already)
    Mistake(S, "the inverted mask saved", "saved a bool tensor of shape", edit(
        SDPA, (FILL, "blocked = ~mask\n            scores = scores.masked_fill(blocked, "
                     'float("-inf"))'),
        ("        P = torch.softmax(scores, dim=-1)\n        ctx.save_for_backward(Q, K, V, P)",
         "        else:\n            blocked = None\n        P = torch.softmax(scores, dim=-1)"
         "\n        ctx.save_for_backward(Q, K, V, P, blocked)"),
        ("Q, K, V, P = ctx.saved_tensors", "Q, K, V, P, blocked = ctx.saved_tensors"),
        (BACKWARD_S, BACKWARD_S + "\n        if blocked is not None:\n"
                     "            grad_S = grad_S.masked_fill(blocked, 0.0)")), named=True),
]


# (fresh review of 2026-11-29: the contract's "one Nq x Nk float tensor" became a bound in bytes,
# 8 per query-key pair) the scores saved beside P: within the bound for float32 inputs, twice it
# for float64 ones
MISTAKES += [
    Mistake(S, "the scores saved beside P", "8 bytes of floats per query-key pair", edit(
        SDPA, ("ctx.save_for_backward(Q, K, V, P)", "ctx.save_for_backward(Q, K, V, P, scores)"),
        ("Q, K, V, P = ctx.saved_tensors", "Q, K, V, P, _ = ctx.saved_tensors"))),
]
