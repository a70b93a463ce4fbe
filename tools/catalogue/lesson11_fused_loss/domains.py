"""Lesson 11: the kinds of answer issue 37 found passing elsewhere (a constant or saved state
kept on the class, a statistic saved narrower than the input, rows read with a contiguous
tensor's strides, accumulation in the input's dtype), each caught by the declared domain."""

from .. import Mistake, edit
from .answers import CROSS_ENTROPY, LINEAR
from .smoothed_cross_entropy import ANSWER

CE, LCE, SCE = "CrossEntropy", "linear_cross_entropy", "SmoothedCrossEntropy"

MISTAKES = [
    # ignore_index on the class; backward rebuilds the mask from it
    Mistake(CE, "ignore_index kept on the class",
            "sets CrossEntropy.ignore_index: a class attribute", edit(
        CROSS_ENTROPY,
        ("        ctx.save_for_backward(logits, lse, safe_target, counted)\n",
         "        CrossEntropy.ignore_index = ignore_index\n"
         "        ctx.save_for_backward(logits, lse, safe_target, target)\n"),
        ("        logits, lse, target, counted = ctx.saved_tensors\n",
         "        logits, lse, target, original = ctx.saved_tensors\n"
         "        counted = original != CrossEntropy.ignore_index\n"))),
    Mistake(CE, "float32 log-sum-exp saved for float64 logits",
            "saved a float32 tensor of shape (6,) for float64 inputs", edit(
        CROSS_ENTROPY, ("        lse = torch.logsumexp(logits, dim=1)\n",
                        "        lse = torch.logsumexp(logits.float(), dim=1)\n"))),
    # the gradients computed in forward kept on the class, not saved on ctx
    Mistake(LCE, "gradients kept on the class",
            "not for two calls in one graph", edit(
        LINEAR,
        ("        ctx.save_for_backward(None if grad_x is None else grad_x.to(x.dtype),\n"
         "                              None if grad_weight is None else grad_weight.to(weight.dtype))\n",
         "        LinearCrossEntropy.grads = (None if grad_x is None else grad_x.to(x.dtype),\n"
         "                                    None if grad_weight is None else grad_weight.to(weight.dtype))\n"),
        ("        grad_x, grad_weight = ctx.saved_tensors\n",
         "        grad_x, grad_weight = LinearCrossEntropy.grads\n"))),
    Mistake(SCE, "label_smoothing and z_loss kept on the class",
            "sets SmoothedCrossEntropy.label_smoothing: a class attribute", edit(
        ANSWER,
        ("        ctx.label_smoothing, ctx.z_loss = label_smoothing, z_loss\n",
         "        SmoothedCrossEntropy.label_smoothing = label_smoothing\n"
         "        SmoothedCrossEntropy.z_loss = z_loss\n"),
        ("        smoothing, z_loss = ctx.label_smoothing, ctx.z_loss\n",
         "        smoothing = SmoothedCrossEntropy.label_smoothing\n"
         "        z_loss = SmoothedCrossEntropy.z_loss\n"))),
    Mistake(SCE, "float32 log-sum-exp saved for float64 logits",
            "saved a float32 tensor of shape (6,) for float64 inputs", edit(
        ANSWER, ("        lse = torch.logsumexp(logits, dim=1)\n",
                 "        lse = torch.logsumexp(logits.float(), dim=1)\n"))),
    # the logits read as if they were contiguous
    Mistake(SCE, "logits read with a contiguous tensor's strides",
            "output is wrong: largest error", edit(
        ANSWER, ("        counted = target != ignore_index\n",
                 "        logits = logits.as_strided(logits.shape, (logits.shape[1], 1))\n"
                 "        counted = target != ignore_index\n"))),
]
