"""Lesson 11: a .squeeze() without a dim, right for every N > 1, raising at N = 1 where it drops
the rows too (instructor trial 82, frank's answers). The integer target beside the logits once
kept the size-1 proof from running (raised:IndexError, and in forward no input shape at all);
the rows are grown with the target's now (autograder.size_one_raises), and each is named
<Exercise>/fails-on-size-one with the shapes it was tried with."""

from .. import Mistake, edit
from .answers import CROSS_ENTROPY
from .smoothed_cross_entropy import ANSWER as SMOOTHED

CE, SCE = "CrossEntropy", "SmoothedCrossEntropy"
_AT_ONE_ROW = ("raised IndexError where a dimension has size 1 (logits of shape (1, {C}), target "
               "of shape (1,)), and the same call runs with that dimension of size 2")

MISTAKES = [
    Mistake(CE, "logits squeezed before the log-sum-exp over dim 1",
            "CrossEntropy.forward " + _AT_ONE_ROW.format(C=6), edit(
                CROSS_ENTROPY, ("lse = torch.logsumexp(logits, dim=1)",
                                "lse = torch.logsumexp(logits.squeeze(), dim=1)"))),
    Mistake(CE, "log-sum-exp squeezed, read per row in backward",
            "CrossEntropy.backward " + _AT_ONE_ROW.format(C=6), edit(
                CROSS_ENTROPY, ("lse = torch.logsumexp(logits, dim=1)",
                                "lse = torch.logsumexp(logits, dim=1).squeeze()"))),
    Mistake(SCE, "log-sum-exp and the picked logits squeezed",
            "SmoothedCrossEntropy.backward " + _AT_ONE_ROW.format(C=5), edit(
                SMOOTHED, ("lse = torch.logsumexp(logits, dim=1)",
                           "lse = torch.logsumexp(logits, dim=1).squeeze()"),
                ("picked = logits.gather(1, safe_target[:, None]).squeeze(1)",
                 "picked = logits.gather(1, safe_target[:, None]).squeeze()"))),
]
