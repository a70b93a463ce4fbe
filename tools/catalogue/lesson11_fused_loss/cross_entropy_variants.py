"""Lesson 11: CrossEntropy answers beyond cross_entropy.py's: correct ones written another way
(counted rows by index_select with the softmax rebuilt by scatter_add_; forward by
F.cross_entropy with a hand-written backward) and slips of the shift, the counted rows and
what is kept on ctx."""

from .. import Mistake, Unusual, edit
from .answers import CROSS_ENTROPY

CE, LCE, SCE = "CrossEntropy", "linear_cross_entropy", "SmoothedCrossEntropy"


UNUSUAL = [
    Unusual(CE, "counted rows by index_select, the softmax recomputed in backward with "
                "scatter_add_", '''
class CrossEntropy(torch.autograd.Function):
    @staticmethod
    def forward(ctx, logits, target, ignore_index=-100):
        keep = target != ignore_index
        rows = keep.nonzero().squeeze(1)
        z = logits.index_select(0, rows)
        loss = (torch.logsumexp(z, 1) - z.gather(1, target[rows, None]).squeeze(1)).mean()
        ctx.ignore_index = ignore_index
        ctx.save_for_backward(logits.detach(), target)
        return loss

    @staticmethod
    def backward(ctx, grad_output):
        logits, target = ctx.saved_tensors
        keep = target != ctx.ignore_index
        g = torch.softmax(logits, 1)
        g.scatter_add_(1, torch.where(keep, target, 0)[:, None], -keep[:, None].to(g.dtype))
        g = g.masked_fill(~keep[:, None], 0) * (grad_output / keep.sum())
        return g, None, None
'''),
    Unusual(CE, "forward by F.cross_entropy, the logits and target saved, backward by softmax "
            "minus one_hot", '''
class CrossEntropy(torch.autograd.Function):
    @staticmethod
    def forward(ctx, logits, target, ignore_index=-100):
        ctx.ignore_index = ignore_index
        ctx.save_for_backward(logits, target)
        return F.cross_entropy(logits, target, ignore_index=ignore_index)

    @staticmethod
    def backward(ctx, grad_output):
        logits, target = ctx.saved_tensors
        counted = target != ctx.ignore_index
        p = torch.softmax(logits, dim=1)
        y = F.one_hot(torch.where(counted, target, 0), logits.shape[1]).to(p.dtype)
        g = (p - y) * (counted.to(p.dtype) / counted.sum())[:, None]
        return g * grad_output, None, None
'''),
]

UNUSUAL.append(
    Unusual(CE, "the log-sum-exp and the counted mask stacked into one (N, 2) saved tensor",
            edit(CROSS_ENTROPY,
                 ("ctx.save_for_backward(logits, lse, safe_target, counted)",
                  "ctx.save_for_backward(logits, torch.stack([lse, counted.to(lse.dtype)], 1), "
                  "safe_target)"),
                 ("logits, lse, target, counted = ctx.saved_tensors",
                  "logits, stats, target = ctx.saved_tensors\n"
                  "        lse, counted = stats.unbind(1)"))))

MISTAKES = [
    Mistake(CE, "one maximum for the whole batch",
            "subtract each row's maximum before exp, and take the log", edit(
        CROSS_ENTROPY, ("        lse = torch.logsumexp(logits, dim=1)\n",
                        "        top = logits.max()\n"
                        "        lse = top + (logits - top).exp().sum(1).log()\n"))),
    Mistake(CE, "counted rows: those whose target is a valid class", "gives ignored rows", edit(
        CROSS_ENTROPY, ("counted = target != ignore_index",
                        "counted = (target >= 0) & (target < logits.shape[1])"))),
    Mistake(CE, "the count of counted rows kept on ctx, a 0-d tensor",
            "stores a tensor as ctx.M", edit(
        CROSS_ENTROPY, ("        return losses.sum() / counted.sum()",
                        "        ctx.M = counted.sum()\n        return losses.sum() / ctx.M"),
        ("scale = grad_output * counted / counted.sum()",
         "scale = grad_output * counted / ctx.M"))),
    Mistake(CE, "tensors kept on ctx in a list", "stores a tensor as ctx.extras[0]", edit(
        CROSS_ENTROPY, ("ctx.save_for_backward(logits, lse, safe_target, counted)",
                        "ctx.save_for_backward(logits)\n"
                        "        ctx.extras = [lse, safe_target, counted]"),
        ("logits, lse, target, counted = ctx.saved_tensors",
         "logits, = ctx.saved_tensors\n        lse, target, counted = ctx.extras"))),
]
