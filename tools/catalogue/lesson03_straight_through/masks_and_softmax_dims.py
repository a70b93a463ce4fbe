"""Lesson 03: answers of review 57 (round C) kept where no entry held them: FakeQuantize's
scale gradient with 0/1 masks multiplied into round(v) - v, nan where x / scale is +-inf (x
infinite, or a finite x whose x / scale overflows), which the contract's "any value, +-inf
included" now grades; its x and scale kept in a module-global dict (the per-call clause that
Exercise 3 now states); StraightThroughSoftmax's softmax over dim 1, "the class dim", and over
F.softmax's implicit dim (0 for 3-D logits), now named, and over dim 1 on 1-d logits (an
IndexError, its shape named); the reviewer's correct variants
(RoundSTE as copysign(round(|x|), x); FakeQuantize on x * (1 / scale) with the clamped code
minus v inside, unsummed)."""

from .. import Mistake, Unusual, edit
from .answers import FQ_LSQ, READ, RIGHT, _fake_quantize, _fq_scale, _round, _sts

_SOLUTION = _fq_scale(FQ_LSQ)
_WRONG_DIM = "its softmax is taken over dim"

MISTAKES = [
    Mistake("FakeQuantize", "x and scale kept in a module-global dict keyed by id(ctx)",
            "kept state outside ctx: _store in a module global",
            "_store = {}\n" + edit(_SOLUTION,
                                   ("ctx.save_for_backward(x, scale)", "_store[id(ctx)] = x, scale"),
                                   ("x, scale = ctx.saved_tensors", "x, scale = _store[id(ctx)]"))),
    Mistake("StraightThroughSoftmax", "softmax over dim 1, 'the class dim', for logits of 2 dims "
            "or more", _WRONG_DIM + " 1",
            _sts(READ + RIGHT, edit(
                "        soft = torch.softmax(logits / tau, dim=-1)\n"
                "        ctx.save_for_backward(soft)\n        ctx.tau = tau\n"
                "        return F.one_hot(logits.argmax(-1), logits.shape[-1]).to(logits.dtype)",
                ("dim=-1", "dim=1 if logits.dim() > 1 else 0")))),
    # review 8: the learner's own IndexError, on the battery's 1-d logits, names their shape
    Mistake("StraightThroughSoftmax", "softmax over dim=1 whatever the logits' dims",
            "StraightThroughSoftmax.forward raised IndexError with logits of shape (6,)",
            _sts(READ + RIGHT, edit(
                "        soft = torch.softmax(logits / tau, dim=-1)\n"
                "        ctx.save_for_backward(soft)\n        ctx.tau = tau\n"
                "        return F.one_hot(logits.argmax(-1), logits.shape[-1]).to(logits.dtype)",
                ("dim=-1", "dim=1")))),
    Mistake("StraightThroughSoftmax", "softmax over F.softmax's implicit dim (0 for 3-D logits)",
            "F.softmax with no dim= picks dim 0 for a 3-D tensor",
            _sts(READ + RIGHT,
                 "        soft = F.softmax(logits / tau, dim=0 if logits.dim() in (1, 3) else 1)\n"
                 "        ctx.save_for_backward(soft)\n        ctx.tau = tau\n"
                 "        return F.one_hot(logits.argmax(-1), logits.shape[-1]).to(logits.dtype)")),
]

UNUSUAL = [
    Unusual("RoundSTE", "copysign(round(|x|), x): half-to-even is symmetric, copysign keeps -0",
            _round("        return torch.copysign(torch.round(x.abs()), x)",
                   "        return grad_output.view_as(grad_output)")),
    Unusual("FakeQuantize", "v = x * (1 / scale); scale's term the clamped code minus v inside, "
            "left unsummed",
            _fake_quantize(
                "        x, scale = ctx.saved_tensors\n        v = x * (1 / scale)\n"
                "        code = torch.clamp(torch.round(v), ctx.qmin, ctx.qmax)\n"
                "        inside = (v >= ctx.qmin) & (v <= ctx.qmax)\n"
                "        return (torch.where(inside, grad_output, 0) if ctx.needs_input_grad[0] "
                "else None,\n"
                "                grad_output * (code - torch.where(inside, v, 0)) "
                "if ctx.needs_input_grad[1] else None, None, None)",
                "        ctx.save_for_backward(x, scale)\n        ctx.qmin, ctx.qmax = qmin, qmax\n"
                "        return torch.clamp(torch.round(x * (1 / scale)), qmin, qmax) * scale")),
]

# correct since issue 69: an infinite x / scale left the domain (no value a model meets)
UNUSUAL.append(Unusual("FakeQuantize", "scale's gradient with the masks multiplied in: nan where x / scale is inf",
        _fq_scale("inside * (r - v) + (v < ctx.qmin) * ctx.qmin + (v > ctx.qmax) * ctx.qmax",
                  gated=True)))
