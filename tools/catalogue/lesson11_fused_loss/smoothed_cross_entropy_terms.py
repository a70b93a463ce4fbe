"""Lesson 11, SmoothedCrossEntropy: wrong answers the grader names by term, the same logits
with the z-loss or the smoothing set to 0 (autograder's smoothed_terms)."""

from .. import Mistake, edit
from .smoothed_cross_entropy import ANSWER, SCE

MISTAKES = []


# a review's answers (lesson 11, score 8, the second): outside the named mistakes, the first
# line said only that the gradient was wrong; the same logits with z_loss = 0 (Hint 3's check
# by hand) now say which term is
MISTAKES += [
    Mistake(SCE, "the z-loss factor (1 + 2 lambda lse) on the whole P - Y",
            "right without z-loss and wrong with it (label_smoothing=0.1, z_loss=0.01): your "
            "z-loss term's gradient", edit(
                ANSWER, ("grad = probs * (1 + 2 * z_loss * lse)[:, None] - smoothing / logits.shape[1]",
                         "grad = probs - smoothing / logits.shape[1]"),
                ("        grad[rows, target] -= 1 - smoothing\n",
                 "        grad[rows, target] -= 1 - smoothing\n"
                 "        grad = grad * (1 + 2 * z_loss * lse)[:, None]\n"))),
    Mistake(SCE, "z-loss of the max-shifted log-sum-exp, forward and backward",
            "right without z-loss and wrong with it (label_smoothing=0.1, z_loss=0.01): your "
            "z-loss term's value", '''
class SmoothedCrossEntropy(torch.autograd.Function):
    @staticmethod
    def forward(ctx, logits, target, ignore_index, label_smoothing, z_loss):
        counted = target != ignore_index
        safe_target = torch.where(counted, target, 0)
        m = logits.amax(dim=1)
        shifted = torch.log(torch.exp(logits - m[:, None]).sum(1))
        lse = m + shifted
        picked = logits.gather(1, safe_target[:, None]).squeeze(1)
        smooth = lse - logits.mean(dim=1)
        per_row = ((1 - label_smoothing) * (lse - picked) + label_smoothing * smooth
                   + z_loss * shifted ** 2)
        ctx.save_for_backward(logits, lse, safe_target, counted, shifted)
        ctx.label_smoothing, ctx.z_loss = label_smoothing, z_loss
        return torch.where(counted, per_row, 0.0).sum() / counted.sum()

    @staticmethod
    def backward(ctx, grad_output):
        logits, lse, target, counted, shifted = ctx.saved_tensors
        smoothing, z_loss = ctx.label_smoothing, ctx.z_loss
        probs = torch.exp(logits - lse[:, None])
        grad = probs * (1 + 2 * z_loss * shifted)[:, None] - smoothing / logits.shape[1]
        rows = torch.arange(len(target), device=target.device)
        grad[rows, target] -= 1 - smoothing
        scale = grad_output * counted / counted.sum()
        return grad * scale[:, None], None, None, None, None
'''),
    Mistake(SCE, "the smoothing gradient over 2C classes",
            "right without label smoothing and wrong with it", edit(
                ANSWER, ("- smoothing / logits.shape[1]", "- smoothing / (2 * logits.shape[1])"))),
    Mistake(SCE, "the z-loss factor on the smoothing term too",
            "right without z-loss and right without label smoothing", edit(
                ANSWER, ("grad = probs * (1 + 2 * z_loss * lse)[:, None] - smoothing / logits.shape[1]",
                         "grad = (probs - smoothing / logits.shape[1]) * (1 + 2 * z_loss * lse)[:, None]"))),
]
