"""Lesson 11's transfer exercise: answers with known verdicts for SmoothedCrossEntropy."""

from .. import Mistake, Unusual, edit

SCE = "SmoothedCrossEntropy"

ANSWER = '''
class SmoothedCrossEntropy(torch.autograd.Function):
    @staticmethod
    def forward(ctx, logits, target, ignore_index, label_smoothing, z_loss):
        counted = target != ignore_index
        safe_target = torch.where(counted, target, 0)
        lse = torch.logsumexp(logits, dim=1)
        picked = logits.gather(1, safe_target[:, None]).squeeze(1)
        smooth = lse - logits.mean(dim=1)
        per_row = ((1 - label_smoothing) * (lse - picked) + label_smoothing * smooth
                   + z_loss * lse ** 2)
        ctx.save_for_backward(logits, lse, safe_target, counted)
        ctx.label_smoothing, ctx.z_loss = label_smoothing, z_loss
        return torch.where(counted, per_row, 0.0).sum() / counted.sum()

    @staticmethod
    def backward(ctx, grad_output):
        logits, lse, target, counted = ctx.saved_tensors
        smoothing, z_loss = ctx.label_smoothing, ctx.z_loss
        probs = torch.exp(logits - lse[:, None])
        grad = probs * (1 + 2 * z_loss * lse)[:, None] - smoothing / logits.shape[1]
        rows = torch.arange(len(target), device=target.device)
        grad[rows, target] -= 1 - smoothing
        scale = grad_output * counted / counted.sum()
        return grad * scale[:, None], None, None, None, None
'''


UNUSUAL = [
    Unusual(SCE, "Liger-Kernel's per-row formula, ported from its Triton kernel", '''
class SmoothedCrossEntropy(torch.autograd.Function):
    # linkedin/Liger-Kernel, src/liger_kernel/ops/cross_entropy.py (liger_cross_entropy_kernel):
    # per row, m = max, d = sum exp(x - m), lse = m + log d; loss = lse - x_y, smoothed with
    # eps = label_smoothing / n_cols, plus lse_square_scale * lse^2; the gradient
    # softmax * (1 + 2 * lse_square_scale * lse) - eps, and - (1 - label_smoothing) at y
    @staticmethod
    def forward(ctx, X, Y, ignore_index, label_smoothing, lse_square_scale):
        n_cols = X.shape[1]
        valid = Y != ignore_index
        n_non_ignore = valid.sum()
        m = X.amax(1, keepdim=True)
        d = torch.exp(X - m).sum(1, keepdim=True)
        lse = (m + d.log()).squeeze(1)
        x_y = X.gather(1, torch.where(valid, Y, 0)[:, None]).squeeze(1)
        eps = label_smoothing / n_cols
        smooth_loss = eps * (n_cols * lse - X.sum(1))
        loss = lse - x_y
        loss = loss * (1 - label_smoothing) + smooth_loss + lse_square_scale * lse * lse
        ctx.save_for_backward(X, lse, torch.where(valid, Y, 0), valid)
        ctx.eps, ctx.smoothing, ctx.z = eps, label_smoothing, lse_square_scale
        return (loss * valid).sum() / n_non_ignore

    @staticmethod
    def backward(ctx, grad_output):
        X, lse, Y, valid = ctx.saved_tensors
        dX = torch.exp(X - lse[:, None]) * (1 + 2 * ctx.z * lse[:, None]) - ctx.eps
        dX = dX.scatter_add(1, Y[:, None], torch.full_like(lse[:, None], ctx.smoothing - 1))
        dX = dX * (valid.to(X.dtype) / valid.sum())[:, None]
        return dX * grad_output, None, None, None, None
'''),
    Unusual(SCE, "the smoothed target distribution built explicitly", edit(
        ANSWER,
        ("        grad = probs * (1 + 2 * z_loss * lse)[:, None] - smoothing / logits.shape[1]\n"
         "        rows = torch.arange(len(target), device=target.device)\n"
         "        grad[rows, target] -= 1 - smoothing\n",
         "        C = logits.shape[1]\n"
         "        q = torch.full_like(probs, smoothing / C)\n"
         "        q.scatter_add_(1, target[:, None],\n"
         "                       torch.full_like(lse[:, None], 1 - smoothing))\n"
         "        grad = probs + 2 * z_loss * lse[:, None] * probs - q\n"))),
    Unusual(SCE, "log_softmax in forward, a float mask, the per-row lse saved", '''
class SmoothedCrossEntropy(torch.autograd.Function):
    @staticmethod
    def forward(ctx, logits, target, ignore_index, label_smoothing, z_loss):
        mask = (target != ignore_index).to(logits.dtype)
        t = target.clamp(min=0) * (target != ignore_index)
        log_probs = torch.log_softmax(logits, dim=-1)
        nll = -log_probs.gather(-1, t[:, None]).squeeze(-1)
        uniform = -log_probs.mean(-1)
        lse = torch.logsumexp(logits, -1)
        rows = (1 - label_smoothing) * nll + label_smoothing * uniform + z_loss * lse.square()
        ctx.save_for_backward(logits, lse, t, mask)
        ctx.eps, ctx.z = label_smoothing, z_loss
        return (rows * mask).sum() / mask.sum()

    @staticmethod
    def backward(ctx, grad_output):
        logits, lse, t, mask = ctx.saved_tensors
        p = (logits - lse[:, None]).exp()
        one_hot = torch.zeros_like(p).scatter_(1, t[:, None], 1.0)
        grad = (1 + 2 * ctx.z * lse[:, None]) * p - (1 - ctx.eps) * one_hot - ctx.eps / p.shape[1]
        return grad * (mask * grad_output / mask.sum())[:, None], None, None, None, None
'''),
]

MISTAKES = [
    Mistake(SCE, "smoothing term left out of the gradient", "misses the smoothing term", edit(
        ANSWER, ("grad = probs * (1 + 2 * z_loss * lse)[:, None] - smoothing / logits.shape[1]",
                 "grad = probs * (1 + 2 * z_loss * lse)[:, None]")), nbgrader=True),
    Mistake(SCE, "backward ignores label_smoothing", "your backward ignores label_smoothing",
            edit(ANSWER, ("grad = probs * (1 + 2 * z_loss * lse)[:, None] - smoothing / "
                          "logits.shape[1]", "grad = probs * (1 + 2 * z_loss * lse)[:, None]"),
                 ("grad[rows, target] -= 1 - smoothing", "grad[rows, target] -= 1"))),
    Mistake(SCE, "(1 - smoothing)(P - Y) without the smoothing term's gradient",
            "nothing for the smoothing term", edit(
        ANSWER, ("grad = probs * (1 + 2 * z_loss * lse)[:, None] - smoothing / logits.shape[1]",
                 "grad = probs * (1 - smoothing + 2 * z_loss * lse)[:, None]"))),
    Mistake(SCE, "z-loss left out of the gradient", "misses the z-loss term", edit(
        ANSWER, ("grad = probs * (1 + 2 * z_loss * lse)[:, None]", "grad = probs"))),
    Mistake(SCE, "z-loss gradient without the factor 2", "half what it should be", edit(
        ANSWER, ("(1 + 2 * z_loss * lse)", "(1 + z_loss * lse)"))),
    Mistake(SCE, "dividing by N instead of the counted rows", "divides by N", edit(
        ANSWER, ("return torch.where(counted, per_row, 0.0).sum() / counted.sum()",
                 "return torch.where(counted, per_row, 0.0).sum() / len(target)"),
        ("scale = grad_output * counted / counted.sum()",
         "scale = grad_output * counted / len(target)"))),
    Mistake(SCE, "z-loss of raw exp sums", "not finite at logits of magnitude 1e4", edit(
        ANSWER, ("lse = torch.logsumexp(logits, dim=1)",
                 "lse = logits.exp().sum(dim=1).log()"))),
    Mistake(SCE, "saves the probabilities", "besides the logits", edit(
        ANSWER, ("ctx.save_for_backward(logits, lse, safe_target, counted)",
                 "ctx.save_for_backward(logits, torch.softmax(logits, 1), lse, safe_target, "
                 "counted)"),
        ("logits, lse, target, counted = ctx.saved_tensors\n",
         "logits, probs, lse, target, counted = ctx.saved_tensors\n"),
        ("        probs = torch.exp(logits - lse[:, None])\n", ""))),
    Mistake(SCE, "ignored targets made valid with clamp(min=0)", "past the last class", edit(
        ANSWER, ("safe_target = torch.where(counted, target, 0)",
                 "safe_target = target.clamp(min=0)"))),
    Mistake(SCE, "smoothing spread over the C - 1 other classes", "the C - 1 classes", edit(
        ANSWER, ("smooth = lse - logits.mean(dim=1)",
                 "smooth = lse - (logits.sum(dim=1) - picked) / max(logits.shape[1] - 1, 1)"),
        ("grad = probs * (1 + 2 * z_loss * lse)[:, None] - smoothing / logits.shape[1]",
         "grad = (probs * (1 + 2 * z_loss * lse)[:, None]\n"
         "                - smoothing / max(logits.shape[1] - 1, 1))"),
        ("grad[rows, target] -= 1 - smoothing",
         "grad[rows, target] -= 1 - smoothing - smoothing / max(logits.shape[1] - 1, 1)"))),
    Mistake(SCE, "smoothing over the C - 1 other classes in the gradient only",
            "(fairseq's convention), though its loss does not", edit(
        ANSWER, ("grad = probs * (1 + 2 * z_loss * lse)[:, None] - smoothing / logits.shape[1]",
                 "grad = (probs * (1 + 2 * z_loss * lse)[:, None]\n"
                 "                - smoothing / max(logits.shape[1] - 1, 1))"),
        ("grad[rows, target] -= 1 - smoothing",
         "grad[rows, target] -= 1 - smoothing - smoothing / max(logits.shape[1] - 1, 1)"))),
    Mistake(SCE, "z-loss differentiated as z_loss * lse", "the derivative of z_loss * lse",
            edit(ANSWER, ("grad = probs * (1 + 2 * z_loss * lse)[:, None]",
                          "grad = probs * (1 + z_loss)"))),
    Mistake(SCE, "z-loss of lse, not lse ** 2, in forward and backward",
            "adds z_loss * lse, not z_loss * lse ** 2", edit(
        ANSWER, ("+ z_loss * lse ** 2)", "+ z_loss * lse)"),
        ("grad = probs * (1 + 2 * z_loss * lse)[:, None]", "grad = probs * (1 + z_loss)"))),
    Mistake(SCE, "z-loss averaged over every row", "averages the z-loss over every row", edit(
        ANSWER, ("return torch.where(counted, per_row, 0.0).sum() / counted.sum()",
                 "return (torch.where(counted, per_row - z_loss * lse ** 2, 0.0).sum()\n"
                 "                / counted.sum() + z_loss * (lse ** 2).mean())"))),
    Mistake(SCE, "z-loss summed over every row, divided by the counted rows",
            "z-loss counts the ignored rows", edit(
        ANSWER, ("return torch.where(counted, per_row, 0.0).sum() / counted.sum()",
                 "return (torch.where(counted, per_row - z_loss * lse ** 2, 0.0).sum()\n"
                 "                + z_loss * (lse ** 2).sum()) / counted.sum()"))),
    Mistake(SCE, "z-loss gradient without the log-sum-exp factor",
            "with nothing for the log-sum-exp itself", edit(
        ANSWER, ("grad = probs * (1 + 2 * z_loss * lse)[:, None]",
                 "grad = probs * (1 + 2 * z_loss)"))),
    Mistake(SCE, "ignored rows left in the gradient", "not 0 on the ignored ones", edit(
        ANSWER, ("scale = grad_output * counted / counted.sum()",
                 "scale = grad_output / counted.sum() * torch.ones_like(lse)"))),
    Mistake(SCE, "smoothing subtracted on ignored rows too", "not 0 on the ignored ones", edit(
        ANSWER, ("return grad * scale[:, None], None, None, None, None",
                 "grad = grad * scale[:, None] - (smoothing / logits.shape[1]) * grad_output"
                 " * (~counted)[:, None] / counted.sum()\n"
                 "        return grad, None, None, None, None"))),
    Mistake(SCE, "logits saved as a contiguous copy", "saves a copy of the logits", edit(
        ANSWER, ("ctx.save_for_backward(logits, lse, safe_target, counted)",
                 "ctx.save_for_backward(logits.contiguous(), lse, safe_target, counted)"))),
    Mistake(SCE, "ignored rows' targets made class 1", "index 1 is out of bounds", edit(
        ANSWER, ("safe_target = torch.where(counted, target, 0)",
                 "safe_target = torch.where(counted, target, 1)"))),
    Mistake(SCE, "a gradient for the target", "returned a gradient for target", edit(
        ANSWER, ("        return grad * scale[:, None], None, None, None, None",
                 "        return grad * scale[:, None], torch.zeros_like(logits[:, 0]), None, "
                 "None, None"))),
]

# bool / int64 divides in the default dtype: float32 weights for float64 logits, a ported
# kernel's row weights 1e-8 off, which float64's tolerance now sees
_LIGER = next(entry.code for entry in UNUSUAL if entry.name.startswith("Liger-Kernel"))
MISTAKES += [
    Mistake(SCE, "row weights valid / n computed in float32", "agrees with the truth to five digits or more",
            edit(_LIGER, ("valid.to(X.dtype) / valid.sum()", "valid / valid.sum()"))),
]


# a review's answers (lesson 11, score 8), each named by the self-check's first line
MISTAKES += [
    Mistake(SCE, 'the z-loss gradient not multiplied by grad_output', 'z-loss gradient is not multiplied by grad_output', '''
class SmoothedCrossEntropy(torch.autograd.Function):
    """F.cross_entropy with label smoothing, plus z_loss * mean(lse ** 2) over counted rows."""

    @staticmethod
    def forward(ctx, logits, target, ignore_index, label_smoothing, z_loss):
        counted = target != ignore_index
        safe_target = torch.where(counted, target, 0)
        lse = torch.logsumexp(logits, dim=1)
        picked = logits.gather(1, safe_target[:, None]).squeeze(1)
        smooth = lse - logits.mean(dim=1)  # the row mean of -log p
        per_row = ((1 - label_smoothing) * (lse - picked) + label_smoothing * smooth
                   + z_loss * lse ** 2)
        ctx.save_for_backward(logits, lse, safe_target, counted)
        ctx.label_smoothing, ctx.z_loss = label_smoothing, z_loss
        return torch.where(counted, per_row, 0.0).sum() / counted.sum()

    @staticmethod
    def backward(ctx, grad_output):
        logits, lse, target, counted = ctx.saved_tensors
        smoothing, z_loss = ctx.label_smoothing, ctx.z_loss
        probs = torch.exp(logits - lse[:, None])
        grad = probs - smoothing / logits.shape[1]
        rows = torch.arange(len(target), device=target.device)
        grad[rows, target] -= 1 - smoothing
        scale = grad_output * counted / counted.sum()
        zgrad = probs * (2 * z_loss * lse)[:, None] * (counted / counted.sum())[:, None]
        return grad * scale[:, None] + zgrad, None, None, None, None  # the mistake: zgrad not times g
'''),
    Mistake(SCE, 'the z-loss gradient without the softmax factor', 'the same number for each', '''
class SmoothedCrossEntropy(torch.autograd.Function):
    """F.cross_entropy with label smoothing, plus z_loss * mean(lse ** 2) over counted rows."""

    @staticmethod
    def forward(ctx, logits, target, ignore_index, label_smoothing, z_loss):
        counted = target != ignore_index
        safe_target = torch.where(counted, target, 0)
        lse = torch.logsumexp(logits, dim=1)
        picked = logits.gather(1, safe_target[:, None]).squeeze(1)
        smooth = lse - logits.mean(dim=1)  # the row mean of -log p
        per_row = ((1 - label_smoothing) * (lse - picked) + label_smoothing * smooth
                   + z_loss * lse ** 2)
        ctx.save_for_backward(logits, lse, safe_target, counted)
        ctx.label_smoothing, ctx.z_loss = label_smoothing, z_loss
        return torch.where(counted, per_row, 0.0).sum() / counted.sum()

    @staticmethod
    def backward(ctx, grad_output):
        logits, lse, target, counted = ctx.saved_tensors
        smoothing, z_loss = ctx.label_smoothing, ctx.z_loss
        probs = torch.exp(logits - lse[:, None])
        grad = probs + (2 * z_loss * lse)[:, None] - smoothing / logits.shape[1]
        rows = torch.arange(len(target), device=target.device)
        grad[rows, target] -= 1 - smoothing
        scale = grad_output * counted / counted.sum()
        return grad * scale[:, None], None, None, None, None
'''),
    Mistake(SCE, 'label_smoothing / N (rows) in the gradient instead of / C', 'label_smoothing / N, with N', '''
class SmoothedCrossEntropy(torch.autograd.Function):
    """F.cross_entropy with label smoothing, plus z_loss * mean(lse ** 2) over counted rows."""

    @staticmethod
    def forward(ctx, logits, target, ignore_index, label_smoothing, z_loss):
        counted = target != ignore_index
        safe_target = torch.where(counted, target, 0)
        lse = torch.logsumexp(logits, dim=1)
        picked = logits.gather(1, safe_target[:, None]).squeeze(1)
        smooth = lse - logits.mean(dim=1)  # the row mean of -log p
        per_row = ((1 - label_smoothing) * (lse - picked) + label_smoothing * smooth
                   + z_loss * lse ** 2)
        ctx.save_for_backward(logits, lse, safe_target, counted)
        ctx.label_smoothing, ctx.z_loss = label_smoothing, z_loss
        return torch.where(counted, per_row, 0.0).sum() / counted.sum()

    @staticmethod
    def backward(ctx, grad_output):
        logits, lse, target, counted = ctx.saved_tensors
        smoothing, z_loss = ctx.label_smoothing, ctx.z_loss
        probs = torch.exp(logits - lse[:, None])
        grad = probs * (1 + 2 * z_loss * lse)[:, None] - smoothing / logits.shape[0]
        rows = torch.arange(len(target), device=target.device)
        grad[rows, target] -= 1 - smoothing
        scale = grad_output * counted / counted.sum()
        return grad * scale[:, None], None, None, None, None
'''),
    Mistake(SCE, 'the row mean of the logits in float32', "forward loses float64's digits", '''
class SmoothedCrossEntropy(torch.autograd.Function):
    """F.cross_entropy with label smoothing, plus z_loss * mean(lse ** 2) over counted rows."""

    @staticmethod
    def forward(ctx, logits, target, ignore_index, label_smoothing, z_loss):
        counted = target != ignore_index
        safe_target = torch.where(counted, target, 0)
        lse = torch.logsumexp(logits, dim=1)
        picked = logits.gather(1, safe_target[:, None]).squeeze(1)
        smooth = lse - logits.float().mean(dim=1).to(logits.dtype)  # the row mean of -log p
        per_row = ((1 - label_smoothing) * (lse - picked) + label_smoothing * smooth
                   + z_loss * lse ** 2)
        ctx.save_for_backward(logits, lse, safe_target, counted)
        ctx.label_smoothing, ctx.z_loss = label_smoothing, z_loss
        return torch.where(counted, per_row, 0.0).sum() / counted.sum()

    @staticmethod
    def backward(ctx, grad_output):
        logits, lse, target, counted = ctx.saved_tensors
        smoothing, z_loss = ctx.label_smoothing, ctx.z_loss
        probs = torch.exp(logits - lse[:, None])
        grad = probs * (1 + 2 * z_loss * lse)[:, None] - smoothing / logits.shape[1]
        rows = torch.arange(len(target), device=target.device)
        grad[rows, target] -= 1 - smoothing
        scale = grad_output * counted / counted.sum()
        return grad * scale[:, None], None, None, None, None
'''),
]

# the course-wide rules the contract states: logits untouched, tensors through save_for_backward
MISTAKES += [
    Mistake(SCE, "softmax computed in place in the saved logits", "modified its input logits", edit(
        ANSWER, ("        probs = torch.exp(logits - lse[:, None])\n",
                 "        probs = logits.sub_(lse[:, None]).exp_()  # no (N, C) allocation\n"))),
    Mistake(SCE, "the log-sum-exp kept on ctx", "stores a tensor as", edit(
        ANSWER, ("        ctx.save_for_backward(logits, lse, safe_target, counted)\n",
                 "        ctx.save_for_backward(logits, safe_target, counted)\n"
                 "        ctx.lse = lse\n"),
        ("        logits, lse, target, counted = ctx.saved_tensors\n",
         "        logits, target, counted = ctx.saved_tensors\n"
         "        lse = ctx.lse\n"))),
]
