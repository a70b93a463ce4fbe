"""Lesson 11, review 53: a log-sum-exp shifted by one maximum for the whole batch or the whole
chunk, rows counted as "a valid class" rather than "not ignore_index", tensors kept on ctx (a
0-d count, a list), linear_cross_entropy accumulating in float32 for float64 inputs, a float16
running loss, a float32 loss returned for bfloat16 inputs, an (N, V) one-hot, a wrapper that
detaches only x under no_grad; SmoothedCrossEntropy's eps / N, a smoothing term averaged over
every row, a log of each probability, label_smoothing = 1 refused. Unusual: index_select and a
recomputed softmax, logits multiplied in the input dtype (allowed by the contract), a grad-mode
flag with torch.split and float64 accumulators, the smoothed target distribution built."""

from .. import Mistake, Unusual, edit
from .answers import CROSS_ENTROPY, LINEAR
from .smoothed_cross_entropy import ANSWER as SMOOTHED

CE, LCE, SCE = "CrossEntropy", "linear_cross_entropy", "SmoothedCrossEntropy"

_LCE_FLAG_SPLIT_F64 = '''
class LinearCrossEntropy(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, target, chunk_size, grad_enabled):
        want_x = grad_enabled and ctx.needs_input_grad[0]
        want_w = grad_enabled and ctx.needs_input_grad[1]
        N = x.shape[0]
        acc = torch.float64
        w = weight.to(acc)
        total = torch.zeros((), dtype=acc, device=x.device)
        gx_parts, gw = [], (torch.zeros_like(w) if want_w else None)
        for xc, tc in zip(torch.split(x, chunk_size), torch.split(target, chunk_size)):
            xc = xc.to(acc)
            z = xc @ w.T
            lse = torch.logsumexp(z, 1)
            total = total + (lse - z.gather(1, tc[:, None]).squeeze(1)).sum()
            if want_x or want_w:
                G = torch.exp(z - lse[:, None])
                G.scatter_add_(1, tc[:, None], torch.full((len(tc), 1), -1.0, dtype=acc,
                                                           device=x.device))
                G.div_(N)
                if want_x:
                    gx_parts.append((G @ w).to(x.dtype))
                if want_w:
                    gw += G.T @ xc
        gx = torch.cat(gx_parts) if want_x else None
        ctx.save_for_backward(gx, None if gw is None else gw.to(weight.dtype))
        return (total / N).to(x.dtype)

    @staticmethod
    def backward(ctx, grad_output):
        gx, gw = ctx.saved_tensors
        return (None if gx is None else torch.mul(gx, grad_output),
                None if gw is None else torch.mul(gw, grad_output), None, None, None)


def linear_cross_entropy(x, weight, target, chunk_size=1024):
    return LinearCrossEntropy.apply(x, weight, target, chunk_size, torch.is_grad_enabled())
'''

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
    # the contract allows it; the course's solution upcasts first, closer in bfloat16 at large logits
    Unusual(LCE, "each chunk's logits multiplied in the input dtype, then upcast", edit(
        LINEAR, ("logits = x_chunk @ weight_wide.T", "logits = (x[rows] @ weight.T).to(wide)"))),
    Unusual(LCE, "a grad-mode flag, torch.split, grad_x by torch.cat, float64 accumulators",
            _LCE_FLAG_SPLIT_F64),
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
    Mistake(LCE, "one maximum per chunk", "returns -inf at float32 logits of magnitude 100", edit(
        LINEAR, ("row_max = logits.amax(dim=1, keepdim=True)", "row_max = logits.amax()"))),
    Mistake(LCE, "float32 accumulators for float64 inputs too", "is exactly a float32 number", edit(
        LINEAR, ("wide = torch.promote_types(x.dtype, torch.float32)", "wide = torch.float32"))),
    Mistake(LCE, "the running loss kept in the input dtype",
            "accumulate the loss and the gradients in float32", edit(
        LINEAR, ("loss = torch.zeros((), dtype=wide, device=x.device)",
                 "loss = torch.zeros((), dtype=x.dtype, device=x.device)"),
        ("loss += (row_max + sums.log() - picked).sum()",
         "loss += (row_max + sums.log() - picked).sum().to(x.dtype)"))),
    Mistake(LCE, "the loss returned in float32 for low-precision inputs",
            "returned torch.float32 for bfloat16 inputs", edit(
        LINEAR, ("return (loss / N).to(x.dtype)", "return loss / N"))),
    Mistake(LCE, "an (N, V) one-hot built once, sliced per chunk",
            "is not a matrix product, so this is no chunk's logits", edit(
        LINEAR, ("        for start in range(0, N, chunk_size):\n",
                 "        Y = F.one_hot(target, weight.shape[0]).to(wide)\n"
                 "        for start in range(0, N, chunk_size):\n"),
        ("probs[torch.arange(len(target_chunk), device=x.device), target_chunk] -= 1",
         "probs -= Y[rows]"))),
    Mistake(LCE, "only x detached under no_grad", "reach both x and weight?", edit(
        LINEAR, ("    return LinearCrossEntropy.apply(x, weight, target, chunk_size, "
                 "torch.is_grad_enabled())",
                 "    if not torch.is_grad_enabled():\n        x = x.detach()\n"
                 "    return LinearCrossEntropy.apply(x, weight, target, chunk_size, True)"))),
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
]
