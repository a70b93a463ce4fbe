"""Lesson 11: SmoothedCrossEntropy answers beyond smoothed_cross_entropy.py's: the smoothed
target distribution as a temporary (correct), and slips of the smoothing and z-loss terms'
divisors and rows, and of label_smoothing = 1."""

from .. import Mistake, Unusual, edit
from .smoothed_cross_entropy import ANSWER as SMOOTHED

CE, LCE, SCE = "CrossEntropy", "linear_cross_entropy", "SmoothedCrossEntropy"

LCE, SCE = "linear_cross_entropy", "SmoothedCrossEntropy"


UNUSUAL = [
    Unusual(SCE, "the smoothed target distribution q as a temporary, constants as Python "
                 "numbers on ctx", '''
class SmoothedCrossEntropy(torch.autograd.Function):
    @staticmethod
    def forward(ctx, logits, target, ignore_index, label_smoothing, z_loss):
        keep = target != ignore_index
        C = logits.shape[1]
        t = target.masked_fill(~keep, 0)
        q = torch.full_like(logits, label_smoothing / C).scatter_add_(
            1, t[:, None], torch.full((len(t), 1), 1.0 - label_smoothing, dtype=logits.dtype,
                                     device=logits.device))
        lse = torch.logsumexp(logits, 1, keepdim=True)
        per_row = (q * (lse - logits)).sum(1) + z_loss * lse.squeeze(1) ** 2
        ctx.M, ctx.eps, ctx.z, ctx.ii = int(keep.sum()), label_smoothing, z_loss, ignore_index
        ctx.save_for_backward(logits, lse, target)
        return per_row.masked_fill(~keep, 0).sum() / ctx.M

    @staticmethod
    def backward(ctx, grad_output):
        logits, lse, target = ctx.saved_tensors
        keep = target != ctx.ii
        C = logits.shape[1]
        q = torch.full_like(logits, ctx.eps / C).scatter_add_(
            1, target.masked_fill(~keep, 0)[:, None],
            torch.full((len(target), 1), 1.0 - ctx.eps, dtype=logits.dtype,
                       device=logits.device))
        p = torch.exp(logits - lse)
        g = (1 + 2 * ctx.z * lse) * p - q
        return g.masked_fill(~keep[:, None], 0) * (grad_output / ctx.M), None, None, None, None
'''),
]

MISTAKES = [
    Mistake(SCE, "label_smoothing / N in the gradient", "is label_smoothing / N", edit(
        SMOOTHED, ("smoothing / logits.shape[1]", "smoothing / logits.shape[0]"))),
    Mistake(SCE, "the smoothing term averaged over every row, ignored ones included",
            "averages the smoothing term over every row", '''
class SmoothedCrossEntropy(torch.autograd.Function):
    @staticmethod
    def forward(ctx, logits, target, ignore_index, label_smoothing, z_loss):
        counted = target != ignore_index
        safe_target = torch.where(counted, target, 0)
        lse = torch.logsumexp(logits, dim=1)
        picked = logits.gather(1, safe_target[:, None]).squeeze(1)
        smooth = lse - logits.mean(dim=1)
        per_row = (1 - label_smoothing) * (lse - picked) + z_loss * lse ** 2
        ctx.save_for_backward(logits, lse, safe_target, counted)
        ctx.label_smoothing, ctx.z_loss = label_smoothing, z_loss
        return (torch.where(counted, per_row, 0.0).sum() / counted.sum()
                + label_smoothing * smooth.mean())

    @staticmethod
    def backward(ctx, grad_output):
        logits, lse, target, counted = ctx.saved_tensors
        eps, z = ctx.label_smoothing, ctx.z_loss
        probs = torch.exp(logits - lse[:, None])
        grad = probs * (1 - eps + 2 * z * lse)[:, None]
        grad[torch.arange(len(target)), target] -= 1 - eps
        grad = grad * (grad_output * counted / counted.sum())[:, None]
        return (grad + eps * grad_output * (probs - 1 / logits.shape[1]) / len(target),
                None, None, None, None)
'''),
    Mistake(SCE, "the smoothing term as the mean of log softmax",
            "never exp of raw logits or the log of a probability", edit(
        SMOOTHED, ("smooth = lse - logits.mean(dim=1)",
                   "smooth = -torch.softmax(logits, 1).log().mean(dim=1)"))),
    Mistake(SCE, "label_smoothing = 1 refused", "raised AssertionError", edit(
        SMOOTHED, ("        counted = target != ignore_index\n",
                   "        assert label_smoothing < 1\n"
                   "        counted = target != ignore_index\n"))),
    Mistake(SCE, "the z-loss summed over the counted rows, divided by N",
            "divides the counted rows' sum of lse ** 2 by N", edit(
        SMOOTHED, ("        per_row = ((1 - label_smoothing) * (lse - picked) + label_smoothing * smooth\n"
                   "                   + z_loss * lse ** 2)\n",
                   "        per_row = (1 - label_smoothing) * (lse - picked) + label_smoothing * smooth\n"),
        ("        return torch.where(counted, per_row, 0.0).sum() / counted.sum()\n",
         "        return (torch.where(counted, per_row, 0.0).sum() / counted.sum()\n"
         "                + z_loss * torch.where(counted, lse ** 2, 0.0).sum() / len(target))\n"),
        ("grad = probs * (1 + 2 * z_loss * lse)[:, None] - smoothing / logits.shape[1]",
         "grad = probs - smoothing / logits.shape[1]"),
        ("        return grad * scale[:, None], None, None, None, None",
         "        z_rows = grad_output * counted / len(target)\n"
         "        z_grad = 2 * z_loss * lse[:, None] * probs * z_rows[:, None]\n"
         "        return grad * scale[:, None] + z_grad, None, None, None, None"))),
]
