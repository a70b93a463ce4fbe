"""Lesson 03: answers of review 56 and of a newcomer instructor's class, kept where no entry held
them: FakeQuantize with no clip mask for either gradient, and a StraightThroughSoftmax that
recomputes the softmax from the saved logits and leaves out 1 / tau (both graded with their ids);
scale's gradient dropped for an empty x; the softmax's backward borrowed through torch.func or
Tensor.backward; RoundSTE saving x widened; and the reviewer's correct variants (x * scale's
reciprocal judged on round(v) with scale's gradient left unsummed; SignClippedSTE saving |x|)."""

from .. import Mistake, Unusual, edit
from .answers import FQ_LSQ, _clipped, _fake_quantize, _fq_scale, _round, _sts

# the lesson's solution, with its mask on v
_SOLUTION = _fq_scale(FQ_LSQ)
# forward saves the logits; backward rebuilds s from them, stably, by logsumexp
_FROM_LOGITS = ("        ctx.save_for_backward(logits)\n        ctx.tau = tau\n"
                "        return F.one_hot(logits.argmax(-1), logits.shape[-1]).to(logits.dtype)")
_REBUILT = ("        logits, = ctx.saved_tensors\n        z = logits / ctx.tau\n"
            "        soft = torch.exp(z - torch.logsumexp(z, -1, keepdim=True))\n"
            "        row = (grad_output * soft).sum(-1, keepdim=True)\n"
            "        return soft * (grad_output - row) / ctx.tau, None")

MISTAKES = [
    Mistake("FakeQuantize", "no clip mask: round's surrogate applied everywhere, both gradients",
            "FakeQuantize's gradient for x is not clipped",
            _fq_scale("r - v", grad_x="grad_output")),
    Mistake("StraightThroughSoftmax", "softmax rebuilt from the saved logits, 1 / tau left out",
            "it lacks the factor 1 / tau",
            _sts(edit(_REBUILT, ("(grad_output - row) / ctx.tau", "(grad_output - row)")),
                 _FROM_LOGITS)),
    Mistake("FakeQuantize", "None for scale when x is empty (nothing to sum)",
            "FakeQuantize returned None for scale",
            edit(_SOLUTION, ("(grad_output * (torch.where(inside, r - v, clipped))).sum()",
                             "(grad_output * (torch.where(inside, r - v, clipped))).sum() "
                             "if x.numel() else None"))),
    Mistake("StraightThroughSoftmax", "softmax's vector-Jacobian product by torch.func.vjp",
            "calls torch.autograd.grad through torch.func",
            _sts("        logits, = ctx.saved_tensors\n        tau = ctx.tau\n"
                 "        _, vjp = torch.func.vjp(lambda l: torch.softmax(l / tau, -1), logits)\n"
                 "        return vjp(grad_output)[0], None", _FROM_LOGITS)),
    Mistake("StraightThroughSoftmax", "Tensor.backward on a rebuilt softmax under enable_grad",
            "backward calls Tensor.backward",
            _sts("        logits, = ctx.saved_tensors\n        with torch.enable_grad():\n"
                 "            leaf = logits.detach().requires_grad_()\n"
                 "            torch.softmax(leaf / ctx.tau, -1).backward(grad_output)\n"
                 "        return leaf.grad, None", _FROM_LOGITS)),
    Mistake("RoundSTE", "saves x.double() it never reads", "saved a wider copy of x",
            _round("        ctx.save_for_backward(x.double())\n        return torch.round(x)")),
]

UNUSUAL = [
    Unusual("FakeQuantize", "x * scale.reciprocal(), inside as round(v) == its clamp, scale's "
            "gradient unsummed", _fake_quantize(
                "        x, scale = ctx.saved_tensors\n        qmin, qmax = ctx.q\n"
                "        v = x * scale.reciprocal()\n        r = torch.round(v)\n"
                "        code = r.clamp(qmin, qmax)\n        inside = code == r\n"
                "        gx = grad_output * inside if ctx.needs_input_grad[0] else None\n"
                "        gs = (grad_output * torch.where(inside, r - v, code)\n"
                "              if ctx.needs_input_grad[1] else None)\n"
                "        return gx, gs, None, None",
                "        ctx.save_for_backward(x, scale)\n        ctx.q = (qmin, qmax)\n"
                "        return torch.clamp(torch.round(x * scale.reciprocal()), qmin, qmax)"
                " * scale")),
    Unusual("SignClippedSTE", "saves |x|, a new tensor as large as x, and masks on it",
            _clipped("        a, = ctx.saved_tensors\n        return grad_output * (a <= 1)",
                     "        ctx.save_for_backward(x.abs())\n        return torch.sign(x)")),
    Unusual("StraightThroughSoftmax", "softmax rebuilt from the saved logits by logsumexp",
            _sts(_REBUILT, _FROM_LOGITS)),
]
