"""Lesson 06: answers from the fourth fresh review, each the plain answer with one change: a
mask that large scores beat (a finite fill, or HF BERT's additive -10000), a running maximum
started at a finite number, a score tile computed in the half-precision input dtype."""

from tools.catalogue import Mistake, Unusual, edit
from tools.catalogue.lesson06 import MEMORY, SDPA
from tools.catalogue.lesson06_flash import FLASH

S, M, FA = "ScaledDotProductAttention", "MemoryEfficientAttention", "FlashAttention"
FILL = 'scores = scores.masked_fill(~mask, float("-inf"))'

UNUSUAL = [
    # far below any score the checks make: as right as -inf wherever a row keeps a key
    Unusual(S, "masked scores filled with torch.finfo(dtype).min", edit(
        SDPA, (FILL, "scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)"))),
]

MISTAKES = [
    # right while visible scores beat masked ones by less than 1e4: visible scores near -2e4
    # and masked ones near +7000 show it (it passed Exercises 1 and 2)
    Mistake(S, "masked scores filled with -1e4", "mask loses to large scores",
            edit(SDPA, (FILL, "scores = scores.masked_fill(~mask, -1e4)")), named=True),
    # HF BERT's extended attention mask: there the masked keys win, the reversed mask's output,
    # which was told as a reversed polarity (right at moderate scores)
    Mistake(S, "additive -10000 on masked scores", "mask loses to large scores",
            edit(SDPA, (FILL, "scores = scores + (~mask) * -10000.0"))),
    Mistake(M, "masked scores filled with -1e4 in both passes", "mask loses to large scores",
            edit(MEMORY, *[(FILL, "scores = scores.masked_fill(~mask, -1e4)")])),
]

MISTAKES += [
    # below the float32 rows near -160, so only float64 rows near -20000 show it: there
    # exp(S - m) = exp(-1e4) = 0 in every entry, and the row comes out 0 / 0
    Mistake(FA, "running maximum started at -1e4", "FlashAttention's forward underflows",
            edit(FLASH, ('m = torch.full(q.shape[:-1], float("-inf"), dtype=wide, '
                         'device=Q.device)', "m = torch.full(q.shape[:-1], -1e4, dtype=wide, "
                         "device=Q.device)")), named=True),
]

MISTAKES += [
    # the product taken in the input dtype, converted after: S rounded to bfloat16 (0.5 apart
    # near the low-precision case's scores of 85), 0.079 off where the solution is 0.0072
    Mistake(FA, "score tile computed in the input dtype", "attention whose scores were rounded "
            "to bfloat16", edit(FLASH, (
                "s = (q @ k.transpose(-2, -1)) * scale",
                "s = (Q[..., i:i + block, :] @ K[..., j:j + block, :].transpose(-2, -1))"
                ".to(wide) * scale"))),
]

MISTAKES += [
    # every single backward is right; gradcheck's second backward on the graph raised torch's
    # version-counter error, naming only a shape
    Mistake(S, "dS built in place on the saved P", "changes a tensor that forward saved, in "
            "place", edit(SDPA, ("grad_S = P * (grad_P - (grad_P * P).sum(dim=-1, keepdim=True))",
                                 "grad_S = P.mul_(grad_P - (grad_P * P).sum(dim=-1, "
                                 "keepdim=True))"))),
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
    # right to 4e-8 in float64, which only the domain's precision check saw (a 'step in
    # float32' without saying which)
    Mistake(FA, "log-sum-exp kept in float32 for float64 inputs", "keeps its log-sum-exp L in "
            "float32 for float64 inputs", edit(FLASH, (
                "L = torch.empty(Q.shape[:-1], dtype=wide, device=Q.device)",
                "L = torch.empty(Q.shape[:-1], dtype=torch.float32, device=Q.device)"))),
]
