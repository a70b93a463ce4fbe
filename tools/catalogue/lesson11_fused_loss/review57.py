"""Lesson 11, review 57: linear_cross_entropy's float32 sums cast to float16 before the division
by N (the loss, grad_weight, under no_grad, with only weight requiring grad), whose sums over
the rows pass 65504 where the means do not; the log-sum-exp and softmax computed in float16;
SmoothedCrossEntropy's z-loss summed over the counted rows and divided by N.
Unusual: a grad-mode flag, torch.split, float16 products upcast, grad_x written in the input
dtype chunk by chunk; a second pass that recomputes every chunk's logits for the gradients
(8NdV FLOPs, not 6NdV, which the contract does not bound)."""

from .. import Mistake, Unusual, edit
from .answers import LINEAR
from .smoothed_cross_entropy import ANSWER as SMOOTHED

LCE, SCE = "linear_cross_entropy", "SmoothedCrossEntropy"
_RETURN = "        return (loss / N).to(x.dtype)\n"
_SAVE_W = "None if grad_weight is None else grad_weight.to(weight.dtype)"

_FLAG_SPLIT_INPUT_DTYPE = '''
class LinearCrossEntropy(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, target, chunk_size, grad_enabled):
        want_x = grad_enabled and ctx.needs_input_grad[0]
        want_w = grad_enabled and ctx.needs_input_grad[1]
        N = x.shape[0]
        acc = torch.float64 if x.dtype == torch.float64 else torch.float32
        loss = torch.zeros((), dtype=acc, device=x.device)
        gx = torch.empty_like(x) if want_x else None
        gw = torch.zeros(weight.shape, dtype=acc, device=x.device) if want_w else None
        start = 0
        for xc, tc in zip(torch.split(x, chunk_size), torch.split(target, chunk_size)):
            z = (xc @ weight.T).to(acc)
            lse = torch.logsumexp(z, 1)
            loss += (lse - z.gather(1, tc[:, None]).squeeze(1)).sum()
            if want_x or want_w:
                G = torch.softmax(z, 1)
                G.scatter_add_(1, tc[:, None], -torch.ones(len(tc), 1, dtype=acc, device=x.device))
                G.div_(N)
                if want_x:
                    gx[start:start + len(tc)] = (G @ weight.to(acc)).to(x.dtype)
                if want_w:
                    gw += G.T @ xc.to(acc)
            start += len(tc)
        ctx.save_for_backward(gx, None if gw is None else gw.to(weight.dtype))
        return (loss / N).to(x.dtype)

    @staticmethod
    def backward(ctx, g):
        gx, gw = ctx.saved_tensors
        return (None if gx is None else torch.mul(gx, g), None if gw is None else torch.mul(gw, g),
                None, None, None)


def linear_cross_entropy(x, weight, target, chunk_size=1024):
    return LinearCrossEntropy.apply(x, weight, target, chunk_size, torch.is_grad_enabled())
'''

UNUSUAL = [
    Unusual(LCE, "a grad-mode flag, torch.split, products in the input dtype then upcast, grad_x "
            "written in the input dtype as each chunk's rows are done", _FLAG_SPLIT_INPUT_DTYPE),
    # 8NdV with both gradients, not 6NdV: the contract bounds only the work of fewer gradients
    # (the syllabus's), and chunking over the vocabulary with an online log-sum-exp needs the
    # same second pass
    Unusual(LCE, "a loss pass, then a second pass recomputing every chunk's logits for the "
            "gradients", edit(
        LINEAR, ("            if want_x or want_weight:\n",
                 "        for start in range(0, N, chunk_size) if want_x or want_weight else ():\n"
                 "            rows = slice(start, start + chunk_size)\n"
                 "            x_chunk, target_chunk = x[rows].to(wide), target[rows]\n"
                 "            probs = torch.softmax(x_chunk @ weight_wide.T, 1)\n"
                 "            if True:\n"),
        ("                probs /= sums\n", ""))),
]

MISTAKES = [
    Mistake(LCE, "the float32 loss cast to float16 before the division by N",
            "loss is not finite in float16 (N=4096", edit(
        LINEAR, (_RETURN, "        return loss.to(x.dtype) / N\n"))),
    Mistake(LCE, "the loss cast before the division by N only under no_grad",
            "loss is not finite in float16 under torch.no_grad()", edit(
        LINEAR, (_RETURN, "        if grad_enabled:\n    " + _RETURN
                 + "        return loss.to(x.dtype) / N\n"))),
    Mistake(LCE, "G = P - Y per chunk, the gradients cast, then divided by N",
            "grad_weight is not finite in float16 (N=4096", edit(
        LINEAR, ("                probs /= N\n", ""),
        ("ctx.save_for_backward(None if grad_x is None else grad_x.to(x.dtype),",
         "ctx.save_for_backward(None if grad_x is None else grad_x.to(x.dtype) / N,"),
        (_SAVE_W, "None if grad_weight is None else grad_weight.to(weight.dtype) / N"))),
    Mistake(LCE, "grad_weight alone: its sum over the rows cast before the division by N",
            "grad_weight is not finite in float16 with only weight requiring grad", edit(
        LINEAR, (_SAVE_W, "None if grad_weight is None else grad_weight.to(weight.dtype) "
                 "if want_x else (grad_weight * N).to(weight.dtype) / N"))),
    Mistake(LCE, "each chunk's log-sum-exp and softmax computed in float16, accumulators in float32",
            "log-sum-exp and softmax computed in float16", edit(
        LINEAR, ("            logits = x_chunk @ weight_wide.T\n"
                 "            picked = logits.gather(1, target_chunk[:, None])\n"
                 "            row_max = logits.amax(dim=1, keepdim=True)\n"
                 "            probs = logits.sub_(row_max).exp_()\n"
                 "            sums = probs.sum(dim=1, keepdim=True)\n"
                 "            loss += (row_max + sums.log() - picked).sum()\n",
                 "            logits = x[rows] @ weight.T\n"
                 "            lse = torch.logsumexp(logits, 1, keepdim=True)\n"
                 "            loss += (lse - logits.gather(1, target_chunk[:, None])).to(wide).sum()\n"
                 "            probs = (logits - lse).exp().to(wide)\n"),
        ("                probs /= sums\n", ""))),
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
