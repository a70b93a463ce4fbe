"""Lesson 06: answers with known verdicts for MemoryEfficientAttention, which saves O(Lq) per
row (its output and log-sum-exp) and recomputes the probabilities in backward."""

from .. import Mistake, Unusual, edit
from .answers import (COMPUTED_UNASKED, FILL, IGNORES_NEEDS, MEMORY, SDPA, TAKE_PART,
                      UNGATED, M, _sdpa)

_RECOMPUTE = ('''        scores = (Q @ K.transpose(-2, -1)) * ctx.scale
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        P = (scores - lse.unsqueeze(-1)).exp()''')

UNUSUAL = [
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
    # the row maximum and row sum saved, P rebuilt as exp(S - m) / ell (no new row sum), and
    # rowsum(dP * P) taken the long way, as Exercise 2's second bullet allows (review 80, U2)
    Unusual(M, "row max and row sum saved, P = exp(S - m) / ell, D from dP * P", edit(
        MEMORY, ("lse = torch.logsumexp(scores, dim=-1, keepdim=True)",
                 "m = scores.amax(-1, keepdim=True)\n        ell = (scores - m).exp().sum(-1, "
                 "keepdim=True)\n        lse = m + ell.log()"),
        ("ctx.save_for_backward(Q, K, V, output, lse.squeeze(-1), mask)",
         "ctx.save_for_backward(Q, K, V, mask, m, ell)"),
        ("Q, K, V, output, lse, mask = ctx.saved_tensors",
         "Q, K, V, mask, m, ell = ctx.saved_tensors"),
        ("P = (scores - lse.unsqueeze(-1)).exp()", "P = (scores - m).exp() / ell"),
        ("(grad_output * output).sum(dim=-1, keepdim=True)",
         "(grad_P * P).sum(dim=-1, keepdim=True)"))),
    # L and the row maximum both saved, the maximum unread: two numbers per row, as the bullet
    # allows (review at 32340a34; the bullet now says "at most two")
    Unusual(M, "the row maximum saved beside L", edit(
        MEMORY, ("lse = torch.logsumexp(scores, dim=-1, keepdim=True)",
                 "row_max = scores.amax(dim=-1)\n        lse = torch.logsumexp(scores, dim=-1, "
                 "keepdim=True)"),
        ("ctx.save_for_backward(Q, K, V, output, lse.squeeze(-1), mask)",
         "ctx.save_for_backward(Q, K, V, output, lse.squeeze(-1), row_max, mask)"),
        ("Q, K, V, output, lse, mask = ctx.saved_tensors",
         "Q, K, V, output, lse, _, mask = ctx.saved_tensors"))),
    Unusual(M, "the mask left out of save_for_backward when None", edit(
        MEMORY, ("ctx.save_for_backward(Q, K, V, output, lse.squeeze(-1), mask)",
                 "ctx.save_for_backward(Q, K, V, output, lse.squeeze(-1), "
                 "*([] if mask is None else [mask]))"),
        ("Q, K, V, output, lse, mask = ctx.saved_tensors",
         "Q, K, V, output, lse, *rest = ctx.saved_tensors\n        mask = rest[0] if rest "
         "else None"))),
    Unusual(M, "the mask applied to the recomputed P by torch.where", _sdpa((_RECOMPUTE, '''\
        scores = (Q @ K.transpose(-2, -1)) * ctx.scale
        P = (scores - lse.unsqueeze(-1)).exp()
        if mask is not None:
            P = torch.where(mask, P, torch.zeros((), dtype=P.dtype))'''), name=M)),
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
        ("return (ctx.scale * grad_S @ K if", "return (grad_S @ K * ctx.scale if"),
        ("ctx.scale * grad_S.transpose(-2, -1) @ Q if",
         "grad_S.transpose(-2, -1) @ Q * ctx.scale if"),
        name=M)),
    Unusual(M, "L saved with keepdim, shape (..., Lq, 1)", edit(
        MEMORY, ("ctx.save_for_backward(Q, K, V, output, lse.squeeze(-1), mask)",
                 "ctx.save_for_backward(Q, K, V, output, lse, mask)"),
        ("P = (scores - lse.unsqueeze(-1)).exp()", "P = (scores - lse).exp()"))),
    Unusual(M, "the mask saved as an expanded view of the one given", edit(
        MEMORY, ("ctx.save_for_backward(Q, K, V, output, lse.squeeze(-1), mask)",
                 "ctx.save_for_backward(Q, K, V, output, lse.squeeze(-1), "
                 "None if mask is None else mask.expand(scores.shape))"))),
]

MISTAKES = [
    # dP and dS built when V alone needs a gradient, as Exercise 1's W15 (review 76)
    Mistake(M, "dP and dS built even when V alone needs a gradient",
            "computes dP = dO V^T", _sdpa(
                ("        if not (need_Q or need_K):\n            return None, None, grad_V, "
                 "None, None\n", ""), name=M)),
    # e^S and e^L apart: e^S of a large score overflows, of a very negative one underflows to
    # 0, and 0 / 0 or inf / inf is nan (review at 32340a34: was blamed on the mask's fill)
    Mistake(M, "P = exp(S) / exp(L) in backward", "exp(S) and exp(L) apart", edit(
        MEMORY, ("P = (scores - lse.unsqueeze(-1)).exp()",
                 "P = scores.exp() / lse.unsqueeze(-1).exp()"))),
    # the plain answer without its gates: every gradient computed and returned, needed or not
    Mistake(M, "ignores needs_input_grad", IGNORES_NEEDS, _sdpa(*UNGATED, name=M)),
    # every gradient computed, the needed ones returned (review 74c: passed both)
    Mistake(M, "every gradient computed, returned only when needed",
            "computes dK = dS^T Q (a (4, 2) product here, or its transpose) when only Q",
            _sdpa(*COMPUTED_UNASKED[M], name=M)),
    # P cached in a dict on the class between forward and backward, popped there: was named
    # as a backward that normalises the scores again (review)
    Mistake(M, "P kept in a dict on the class, keyed by id(ctx)", "kept state outside "
            "ctx: the class (MemoryEfficientAttention._kept, shared by every call)", edit(
                MEMORY, ("class MemoryEfficientAttention(torch.autograd.Function):\n",
                         "class MemoryEfficientAttention(torch.autograd.Function):\n"
                         "    _kept = {}\n\n"),
                ("output = (scores - lse).exp() @ V", "P = (scores - lse).exp()\n"
                 "        MemoryEfficientAttention._kept[id(ctx)] = P\n        output = P @ V"),
                ("P = (scores - lse.unsqueeze(-1)).exp()",
                 "P = MemoryEfficientAttention._kept.pop(id(ctx))")), named=True),
    # Exercise 1's answer handed in as Exercise 2's
    Mistake(M, "saves the probabilities", "saved an intermediate tensor of shape (2, 16, 19) "
            "(4864 bytes), as big as the Lq x Lk probabilities: save one log-sum-exp per query "
            "row",
            SDPA + "\n\nclass MemoryEfficientAttention(ScaledDotProductAttention):\n    pass\n",
            named=True, nbgrader=True),
    Mistake(M, "saves the scores as well", "as big as the Lq x Lk probabilities", _sdpa(
        ("ctx.save_for_backward(Q, K, V, output, lse.squeeze(-1), mask)",
         "ctx.save_for_backward(Q, K, V, output, lse.squeeze(-1), mask, scores)"),
        ("Q, K, V, output, lse, mask = ctx.saved_tensors",
         "Q, K, V, output, lse, mask, _ = ctx.saved_tensors"), name=M), named=True),
    # autograd drops a gradient for the mask (it needs none), so no value showed it
    Mistake(M, "zeros returned as the mask's gradient", "returned a tensor of zeros for "
            "its bool input mask", _sdpa(("grad_V, None, None)",
                                         "grad_V, None,\n"
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
    Mistake(M, "log-sum-exp with one global max, the mask filled first", "subtracts one "
            "maximum for the whole tensor instead of each row's own",
            edit(MEMORY, ("lse = torch.logsumexp(scores, dim=-1, keepdim=True)",
                          "top = scores.max()\n"
                          "        lse = top + (scores - top).exp().sum(-1, keepdim=True).log()")),
            named=True),
    Mistake(M, "no row sum", "MemoryEfficientAttention's backward treats the softmax as "
            "element-wise, dS = P * dP", _sdpa(
        ("grad_S = P * (grad_P - (grad_output * output).sum(dim=-1, keepdim=True))",
         "grad_S = P * grad_P"), name=M), named=True),
    Mistake(M, "D = rowsum(dO * O) without keepdim", "drops the dimension of its row sum",
            _sdpa(("(grad_output * output).sum(dim=-1, keepdim=True)",
                   "(grad_output * output).sum(dim=-1)"), name=M)),
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
    # forward masks, backward forgets: exp(S - L) is not 0 at the masked keys (dV shows it)
    Mistake(M, "mask left out of backward's recomputation",
            "recomputes the probabilities without the mask", _sdpa((_RECOMPUTE, '''\
        scores = (Q @ K.transpose(-2, -1)) * ctx.scale
        P = (scores - lse.unsqueeze(-1)).exp()'''), name=M), named=True),
    # exp of an unfilled masked score far above L is inf, and inf * 0 is nan: right values,
    # nan gradients on the masked-above case (review: a generic nan message)
    Mistake(M, "the recomputed P multiplied by the mask", "inf times the mask's 0 is nan",
            _sdpa((_RECOMPUTE, '''\
        scores = (Q @ K.transpose(-2, -1)) * ctx.scale
        P = (scores - lse.unsqueeze(-1)).exp()
        if mask is not None:
            P = P * mask'''), name=M), named=True),
    # forward fills -inf, backward -1e4: was named as a backward that drops the mask (review)
    Mistake(M, "masked scores refilled with -1e4 in backward only", "backward mask loses to "
            "large scores", edit(MEMORY, ('scores = scores.masked_fill(~mask, float("-inf"))\n'
                                          "        P = (scores", "scores = scores.masked_fill("
                                          "~mask, -1e4)\n        P = (scores")), named=True),
    Mistake(M, "masked scores filled with -1e4 in both passes", "mask loses to large scores",
            edit(MEMORY, *[(FILL, "scores = scores.masked_fill(~mask, -1e4)")])),
    # a (Lq, Lk) bool made by ~mask, under the O(Lq) budget's size test: it was told only a
    # byte count
    Mistake(M, "the inverted mask saved", "saved a bool tensor of shape", edit(
        MEMORY, ('scores = scores.masked_fill(~mask, float("-inf"))\n        lse',
                 'blocked = ~mask\n            scores = scores.masked_fill(blocked, float("-inf"))'
                 '\n        else:\n            blocked = None\n        lse'),
        ("ctx.save_for_backward(Q, K, V, output, lse.squeeze(-1), mask)",
         "ctx.save_for_backward(Q, K, V, output, lse.squeeze(-1), blocked)"),
        ("Q, K, V, output, lse, mask = ctx.saved_tensors",
         "Q, K, V, output, lse, blocked = ctx.saved_tensors\n"
         "        mask = None if blocked is None else ~blocked"))),
    # told to subtract each row's maximum, which it does: on the scores in the thousands the
    # masked ones set the maximum
    Mistake(M, "row maximum taken before the mask fill", TAKE_PART, edit(
        MEMORY, ("scores = (Q @ K.transpose(-2, -1)) * scale\n",
                 "scores = (Q @ K.transpose(-2, -1)) * scale\n"
                 "        top = scores.amax(-1, keepdim=True)\n"),
        ("lse = torch.logsumexp(scores, dim=-1, keepdim=True)",
         "lse = top + (scores - top).exp().sum(-1, keepdim=True).log()"))),
    # 8 bytes an entry for float64 where the bool mask given is already kept for the caller
    Mistake(M, "mask saved as a float copy", "saved a float64 copy of the mask", edit(
        MEMORY, ("ctx.save_for_backward(Q, K, V, output, lse.squeeze(-1), mask)",
                 "ctx.save_for_backward(Q, K, V, output, lse.squeeze(-1),\n"
                 "                              None if mask is None else mask.to(Q.dtype))"),
        ("scores = scores.masked_fill(~mask, float(\"-inf\"))\n        P = (scores",
         "scores = scores.masked_fill(mask == 0, float(\"-inf\"))\n        P = (scores"))),
    # nothing but Q, K, V and the mask saved, the softmax recomputed whole: within the memory
    # contract, but not "backward recomputes P from L" (was catalogued as a correct answer
    # before that bullet had a check)
    Mistake(M, "nothing but Q, K, V and the mask saved: the softmax recomputed whole",
            "forward saved no per-row number", _sdpa(
                ("ctx.save_for_backward(Q, K, V, output, lse.squeeze(-1), mask)",
                 "ctx.save_for_backward(Q, K, V, mask)"),
                ("Q, K, V, output, lse, mask = ctx.saved_tensors",
                 "Q, K, V, mask = ctx.saved_tensors"),
                ("P = (scores - lse.unsqueeze(-1)).exp()", "P = torch.softmax(scores, -1)"),
                ("(grad_output * output).sum(dim=-1, keepdim=True)",
                 "(grad_P * P).sum(-1, keepdim=True)"), name=M)),
    # backward normalises the scores again, ignoring the saved L (issue 45: "backward
    # recomputes P from L" had no check)
    Mistake(M, "backward calls softmax again, ignoring the saved log-sum-exp",
            "backward normalises the scores again instead of recomputing P from a saved log-sum-exp",
            edit(MEMORY, ("P = (scores - lse.unsqueeze(-1)).exp()",
                          "P = torch.softmax(scores, dim=-1)"))),
    # L read, then cancelled by a second pass over each row "to be safe": the gradients move
    # only by rounding when L does (review: passed both while the probe asked for equality)
    Mistake(M, "backward divides exp(S - L) by its row sum again", "backward divides the "
            "recomputed probabilities by their row sum again", edit(
                MEMORY, ("P = (scores - lse.unsqueeze(-1)).exp()",
                         "P = (scores - lse.unsqueeze(-1)).exp()\n"
                         "        P = P / P.sum(dim=-1, keepdim=True)")), named=True),
    # the saved copies the save-a-copy check names: Q.contiguous() is Q itself on contiguous
    # inputs, a copy on the multi-head layout
    Mistake(M, "saves Q.contiguous(), a copy on the multi-head layout", "saved a copy of its "
            "input Q", edit(MEMORY, ("ctx.save_for_backward(Q, K, V,",
                                     "ctx.save_for_backward(Q.contiguous(), K, V,"))),
    # K^T made contiguous once "for backward's products": as many numbers as K, kept besides it
    Mistake(M, "saves K transposed and made contiguous", "bytes besides Q, K, V, the mask and "
            "the output", edit(MEMORY, ("ctx.save_for_backward(Q, K, V, output,",
                                        "ctx.save_for_backward(Q, K.transpose(-2, -1).contiguous(), "
                                        "V, output,"),
                               ("Q, K, V, output, lse, mask = ctx.saved_tensors",
                                "Q, K_t, V, output, lse, mask = ctx.saved_tensors\n"
                                "        K = K_t.transpose(-2, -1)"))),
    Mistake(M, "saves a float64 copy of the output for accuracy", "saved a float64 copy of its "
            "float32 output", edit(MEMORY, ("ctx.save_for_backward(Q, K, V, output,",
                                            "ctx.save_for_backward(Q, K, V, output.double(),"),
                                   ("Q, K, V, output, lse, mask = ctx.saved_tensors",
                                    "Q, K, V, output, lse, mask = ctx.saved_tensors\n"
                                    "        output = output.to(Q.dtype)"))),
    # a stride-0 view holds one number per row: named by the storage it holds, not its shape
    Mistake(M, "L saved expanded to the scores' shape",
            "one number per query row expanded to the scores' shape", edit(
                MEMORY, ("ctx.save_for_backward(Q, K, V, output, lse.squeeze(-1), mask)",
                         "ctx.save_for_backward(Q, K, V, output, lse.expand(scores.shape), mask)"),
                ("P = (scores - lse.unsqueeze(-1)).exp()", "P = (scores - lse).exp()"))),
    # a tensor inside a list on ctx escapes save_for_backward (rule 4), named as such
    Mistake(M, "L kept in a list on ctx", "keeps a per-row tensor of shape", edit(
        MEMORY, ("ctx.save_for_backward(Q, K, V, output, lse.squeeze(-1), mask)",
                 "ctx.save_for_backward(Q, K, V, output, mask)\n"
                 "        ctx.lse = [lse.squeeze(-1)]"),
        ("Q, K, V, output, lse, mask = ctx.saved_tensors",
         "Q, K, V, output, mask = ctx.saved_tensors\n        lse = ctx.lse[0]"))),
    # a second pass over each row beside L, which the shift probe cannot see
    Mistake(M, "backward takes each row's maximum again beside the saved L",
            "takes each row's maximum again", edit(
                MEMORY, ("P = (scores - lse.unsqueeze(-1)).exp()",
                         "m = scores.amax(dim=-1, keepdim=True)\n"
                         "        P = (scores - m).exp() * (m - lse.unsqueeze(-1)).exp()"))),
    Mistake(M, "the scale saved as a 0-d tensor beside L", "saves a tensor of shape ()", edit(
        MEMORY, ("ctx.save_for_backward(Q, K, V, output, lse.squeeze(-1), mask)",
                 "ctx.save_for_backward(Q, K, V, output, lse.squeeze(-1), mask, "
                 "torch.tensor(scale, dtype=Q.dtype))"),
        ("Q, K, V, output, lse, mask = ctx.saved_tensors",
         "Q, K, V, output, lse, mask, _ = ctx.saved_tensors"))),
    Mistake(M, "an all-True mask made and saved when mask is None",
            "that forward made though mask is None", edit(
                MEMORY, ("scores = (Q @ K.transpose(-2, -1)) * scale",
                         "scores = (Q @ K.transpose(-2, -1)) * scale\n        if mask is None:\n"
                         "            mask = torch.ones(scores.shape[-2:], dtype=torch.bool, "
                         "device=Q.device)"))),
    # squeeze() drops a batch of one or a single query too: its rows no longer line up
    Mistake(M, "L squeezed of every dimension of size 1",
            "saves its per-row statistic with shape", edit(
                MEMORY, ("ctx.save_for_backward(Q, K, V, output, lse.squeeze(-1), mask)",
                         "ctx.save_for_backward(Q, K, V, output, lse.squeeze(), mask)"))),
    # L kept as a row, the keepdim column transposed, and read back as one (review 78, W2c:
    # the message spoke of squeeze())
    Mistake(M, "L saved as a row (..., 1, Lq)",
            "saves its per-row statistic as a row (..., 1, Lq)", edit(
                MEMORY, ("ctx.save_for_backward(Q, K, V, output, lse.squeeze(-1), mask)",
                         "ctx.save_for_backward(Q, K, V, output, lse.transpose(-2, -1), mask)"),
                ("P = (scores - lse.unsqueeze(-1)).exp()",
                 "P = (scores - lse.transpose(-2, -1)).exp()"))),
    # the log-sum-exp of Q K^T, multiplied by scale afterwards: right only at scale 1 (review
    # 78, W2h: "output is wrong" with no cause)
    Mistake(M, "log-sum-exp of the unscaled scores, multiplied by scale afterwards",
            "takes the log-sum-exp of the unscaled scores", edit(
                MEMORY, ("lse = torch.logsumexp(scores, dim=-1, keepdim=True)",
                         "raw = scores / scale if scale != 0 else scores\n"
                         "        lse = torch.logsumexp(raw, dim=-1, keepdim=True) * scale"))),
    Mistake(M, "saves a copy of the output", "saved a copy of its output O", edit(
        MEMORY, ("ctx.save_for_backward(Q, K, V, output, lse.squeeze(-1), mask)",
                 "ctx.save_for_backward(Q, K, V, output.clone(), lse.squeeze(-1), mask)"))),
]


# Correct over the scores models meet: they failed only on rows near -finfo(dtype).max / 2
# or at finfo(dtype).min, which the grader no longer tries (issue 69 item 4).
UNUSUAL += [
    Unusual(M, 'masked scores filled with -1e9 in both passes',
            edit(MEMORY, *[(FILL, "scores = scores.masked_fill(~mask, -1e9)")])),
    # finfo.min only ties with a visible score equal to it, where masked keys take a share
    Unusual(M, 'masked scores filled with torch.finfo(dtype).min',
            edit(MEMORY, (FILL, FILL.replace('float("-inf")', "torch.finfo(scores.dtype).min")))),
]


# (fresh review of 2026-11-29) L as a plain ctx attribute was called a second normalisation
# ("forward saved no per-row number"); L computed in float32 and cast back, a bare "gradient
# is wrong: 1.75e-07"
MISTAKES += [
    Mistake(M, "L kept as a ctx attribute", "stores a tensor as ctx.lse", _sdpa(
        ("ctx.save_for_backward(Q, K, V, output, lse.squeeze(-1), mask)",
         "ctx.save_for_backward(Q, K, V, output, mask)\n        ctx.lse = lse.squeeze(-1)"),
        ("Q, K, V, output, lse, mask = ctx.saved_tensors",
         "Q, K, V, output, mask = ctx.saved_tensors\n        lse = ctx.lse"), name=M)),
    Mistake(M, "log-sum-exp computed in float32 for float64 inputs, cast back",
            "computed in float32?", _sdpa(
                ("lse = torch.logsumexp(scores, dim=-1, keepdim=True)",
                 "lse = torch.logsumexp(scores.float(), dim=-1, keepdim=True).to(scores.dtype)"),
                name=M)),
]


# three numbers per row where the contract allows two (review 75: the hint said "one
# log-sum-exp per query row needs 256: save only that", against the contract's "at most two")
MISTAKES += [
    Mistake(M, "keeps the row maximum, the row sum and L", "at most two numbers per query row",
            edit(MEMORY, ("lse = torch.logsumexp(scores, dim=-1, keepdim=True)",
                          "row_max = scores.amax(dim=-1, keepdim=True)\n"
                          "        row_sum = (scores - row_max).exp().sum(dim=-1, keepdim=True)\n"
                          "        lse = row_max + row_sum.log()"),
                 ("ctx.save_for_backward(Q, K, V, output, lse.squeeze(-1), mask)",
                  "ctx.save_for_backward(Q, K, V, output, lse.squeeze(-1), row_max, row_sum, "
                  "mask)"),
                 ("Q, K, V, output, lse, mask = ctx.saved_tensors",
                  "Q, K, V, output, lse, row_max, row_sum, mask = ctx.saved_tensors"))),
]
