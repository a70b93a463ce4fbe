"""Lesson 03: answers of review 58 kept where no entry held them: a tensor kept as a ctx
attribute in FakeQuantize (x and scale) and in StraightThroughSoftmax (the softmax), which
Exercises 3 and 4 now state as Exercises 1 and 2 do ("tensors through ctx.save_for_backward,
never a ctx attribute"); SignClippedSTE's boolean mask on a ctx attribute; the straight-through
softmax's backward by the built-in _softmax_backward_data, or through
torch.autograd.functional.vjp."""

from .. import Mistake, edit
from .answers import FQ_LSQ, READ, RIGHT, _clipped, _fq_scale, _sts

_FQ = _fq_scale(FQ_LSQ)
_STS = _sts(READ + RIGHT)

MISTAKES = [
    Mistake("FakeQuantize", "x and scale kept as ctx attributes", "stores a tensor as ctx.x",
            edit(_FQ, ("ctx.save_for_backward(x, scale)", "ctx.x, ctx.scale = x, scale"),
                 ("x, scale = ctx.saved_tensors", "x, scale = ctx.x, ctx.scale"))),
    Mistake("StraightThroughSoftmax", "the softmax kept as a ctx attribute",
            "stores a tensor as ctx.soft",
            edit(_STS, ("ctx.save_for_backward(soft)", "ctx.soft = soft"),
                 ("soft, = ctx.saved_tensors", "soft = ctx.soft"))),
    Mistake("SignClippedSTE", "the boolean mask kept as a ctx attribute",
            "stores a tensor as ctx.mask",
            _clipped("        return grad_output * ctx.mask",
                     "        ctx.mask = x.abs() <= 1\n        return torch.sign(x)")),
    Mistake("StraightThroughSoftmax", "backward by the built-in _softmax_backward_data",
            "the built-in op _softmax_backward_data",
            _sts(READ + "        return torch._softmax_backward_data(grad_output, soft, -1, "
                 "soft.dtype) / ctx.tau, None")),
    Mistake("StraightThroughSoftmax", "backward through torch.autograd.functional.vjp",
            "through torch.autograd.functional.vjp",
            _sts("        logits, = ctx.saved_tensors\n"
                 "        return torch.autograd.functional.vjp(lambda z: torch.softmax(z / ctx.tau, "
                 "-1), logits, grad_output)[1], None",
                 "        ctx.save_for_backward(logits)\n        ctx.tau = tau\n"
                 "        return F.one_hot(logits.argmax(-1), logits.shape[-1]).to(logits.dtype)")),
]

UNUSUAL = []
