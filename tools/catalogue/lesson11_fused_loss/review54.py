"""Lesson 11, review 54: linear_cross_entropy's gradients built row by row with ``mv`` and
``addr_`` (the page's grad_W = sum_i G_i^T x_i), which the work probe once could not see: the
course's design so written is correct (it failed, blamed for a grad_weight it skips); without the
grad-mode check it is named for that; with grad_weight always computed, for that. And the
saved gradients handed back themselves when grad_output == 1 (nothing to scale), which a caller
who clips the gradient in place turns into a version error on the next walk."""

from .. import Mistake, Unusual, edit
from .answers import LINEAR

LCE = "linear_cross_entropy"

ROWWISE = '''
class LinearCrossEntropy(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, target, chunk_size):
        want_x, want_weight = ctx.needs_input_grad[:2]
        N = x.shape[0]
        wide = torch.promote_types(x.dtype, torch.float32)
        weight_wide = weight.to(wide)
        loss = x.new_zeros((), dtype=wide)
        grad_x = x.new_empty(x.shape, dtype=wide) if want_x else None
        grad_weight = x.new_zeros(weight.shape, dtype=wide) if want_weight else None
        for start in range(0, N, chunk_size):
            rows = slice(start, start + chunk_size)
            x_chunk, target_chunk = x[rows].to(wide), target[rows]
            logits = x_chunk @ weight_wide.T
            picked = logits.gather(1, target_chunk[:, None])
            row_max = logits.amax(dim=1, keepdim=True)  #SHIFT
            probs = logits.sub_(row_max).exp_()
            sums = probs.sum(dim=1, keepdim=True)
            loss += (row_max + sums.log() - picked).sum()
            if want_x or want_weight:
                probs /= sums
                probs[torch.arange(len(target_chunk)), target_chunk] -= 1
                probs /= N
                for i in range(probs.shape[0]):  # grad_W = sum_i G_i^T x_i, row by row
                    if want_x:
                        grad_x[start + i] = weight_wide.T.mv(probs[i])
                    if want_weight:
                        grad_weight.addr_(probs[i], x_chunk[i])
            del logits, probs
        ctx.save_for_backward(None if grad_x is None else grad_x.to(x.dtype),
                              None if grad_weight is None else grad_weight.to(weight.dtype))
        return (loss / N).to(x.dtype)

    @staticmethod
    def backward(ctx, grad_output):
        grad_x, grad_weight = ctx.saved_tensors
        return (None if grad_x is None else grad_output * grad_x,
                None if grad_weight is None else grad_output * grad_weight, None, None)


def linear_cross_entropy(x, weight, target, chunk_size=1024):
    if not torch.is_grad_enabled():
        x, weight = x.detach(), weight.detach()
    return LinearCrossEntropy.apply(x, weight, target, chunk_size)
'''

UNUSUAL = [
    Unusual(LCE, "gradients row by row: weight.T.mv(G[i]) and grad_weight.addr_(G[i], x[i])",
            ROWWISE),
]

MISTAKES = [
    Mistake(LCE, "row by row with mv and addr_, no grad-mode check",
            "but not under no_grad", edit(
        ROWWISE, ("    if not torch.is_grad_enabled():\n        x, weight = x.detach(), weight.detach()\n",
                  ""))),
    Mistake(LCE, "row by row with mv and addr_, grad_weight always computed",
            "skip grad_weight when ctx.needs_input_grad[1] is False", edit(
        ROWWISE, ("grad_weight = x.new_zeros(weight.shape, dtype=wide) if want_weight else None",
                  "grad_weight = x.new_zeros(weight.shape, dtype=wide)"),
        ("                    if want_weight:\n                        grad_weight.addr_",
         "                    if True:\n                        grad_weight.addr_"),
        ("None if grad_weight is None else grad_weight.to(weight.dtype)",
         "grad_weight.to(weight.dtype) if want_weight else None"))),
    Mistake(LCE, "the saved gradients themselves returned when grad_output == 1",
            "returned the tensor forward saved, itself", edit(
        LINEAR, ("        grad_x, grad_weight = ctx.saved_tensors\n",
                 "        grad_x, grad_weight = ctx.saved_tensors\n"
                 "        if grad_output == 1:  # nothing to scale: hand them back as they are\n"
                 "            return grad_x, grad_weight, None, None, None\n"))),
]
