"""Lesson 11: linear_cross_entropy's dtypes and stability: products in the input's dtype then
upcast (correct), against a maximum per chunk instead of per row, accumulators or a running loss
in the wrong dtype, a loss cast before the division by N, G rounded before it is divided, and a
float16 softmax or loss-only sum."""

from .. import Mistake, Unusual, edit
from .answers import LINEAR

CE, LCE, SCE = "CrossEntropy", "linear_cross_entropy", "SmoothedCrossEntropy"

LCE, SCE = "linear_cross_entropy", "SmoothedCrossEntropy"

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

_RETURN = "        return (loss / N).to(x.dtype)\n"

_SAVE_W = "None if grad_weight is None else grad_weight.to(weight.dtype)"

LCE, CE = "linear_cross_entropy", "CrossEntropy"


UNUSUAL = [
    # the contract allows it; the course's solution upcasts first, closer in bfloat16 at large logits
    Unusual(LCE, "each chunk's logits multiplied in the input dtype, then upcast", edit(
        LINEAR, ("logits = x_chunk @ weight_wide.T", "logits = (x[rows] @ weight.T).to(wide)"))),
    Unusual(LCE, "a grad-mode flag, torch.split, products in the input dtype then upcast, grad_x "
            "written in the input dtype as each chunk's rows are done", _FLAG_SPLIT_INPUT_DTYPE),
]

MISTAKES = [
    Mistake(LCE, "one maximum per chunk", "returns -inf at float64 logits of magnitude 1e4", edit(
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
    Mistake(LCE, "the loss-only path sums each chunk's losses in float16 (F.cross_entropy, "
            "reduction='sum')",
            "loss is not finite in float16 under torch.no_grad() (N=4096, chunk_size=5000)",
            edit(LINEAR, ("        for start in range(0, N, chunk_size):\n",
                          "        if not (want_x or want_weight):\n"
                          "            for start in range(0, N, chunk_size):\n"
                          "                rows = slice(start, start + chunk_size)\n"
                          "                loss += F.cross_entropy(x[rows] @ weight.T, target[rows],"
                          " reduction='sum').to(wide)\n"
                          "            ctx.save_for_backward(None, None)\n"
                          "            return (loss / N).to(x.dtype)\n"
                          "        for start in range(0, N, chunk_size):\n"))),
]
