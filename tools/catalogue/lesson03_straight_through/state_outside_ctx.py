"""Lesson 03: answers of review 57 kept where no entry held them: state kept outside ctx, in a
module-global dict keyed by id(ctx) (x for SignClippedSTE, the softmax for
StraightThroughSoftmax), which every value the battery compares leaves right, and the same
clause's other exercises (SignSTE's x in a dict popped by backward, RoundSTE's x bound to a
global); grad_output written in place by FakeQuantize and StraightThroughSoftmax, whose
contracts now state it; and the reviewer's correct RoundSTE that rounds in float64 and
casts back."""

from .. import Mistake, Unusual, edit
from .answers import (FQ_LSQ, FQ_READ, READ, READ_X, RIGHT, SIGN, _clipped, _fake_quantize,
                      _round, _sign, _sts)

_STORE = "_store = {}\n"
_HINT = "kept state outside ctx: _store in a module global"

MISTAKES = [
    Mistake("SignClippedSTE", "x kept in a module-global dict keyed by id(ctx)", _HINT,
            _STORE + edit(_clipped(READ_X + "        return grad_output * (x.abs() <= 1)"),
                          ("ctx.save_for_backward(x)", "_store[id(ctx)] = x"),
                          ("x, = ctx.saved_tensors", "x = _store[id(ctx)]"))),
    Mistake("StraightThroughSoftmax", "softmax kept in a module-global dict keyed by id(ctx)",
            _HINT, _STORE + edit(_sts(READ + RIGHT),
                                 ("ctx.save_for_backward(soft)", "_store[id(ctx)] = soft"),
                                 ("soft, = ctx.saved_tensors", "soft = _store[id(ctx)]"))),
    Mistake("SignSTE", "x kept in a module-global dict by id(ctx), popped by backward", _HINT,
            _STORE + _sign("        _store[id(ctx)] = x\n" + SIGN,
                           "        _store.pop(id(ctx), None)\n        return grad_output")),
    Mistake("RoundSTE", "x bound to a module global by forward",
            "kept state outside ctx: _last in a module global",
            "_last = None\n" + _round("        global _last\n        _last = x\n"
                                      "        return torch.round(x)")),
    # the clause "backward leaves grad_output as it was", now stated by Exercises 3 and 4 too
    Mistake("FakeQuantize", "grad_output multiplied by the mask in place",
            "backward modified grad_output in place",
            _fake_quantize(FQ_READ + f"        grad_scale = (grad_output * ({FQ_LSQ})).sum()\n"
                           "        return grad_output.mul_(inside), grad_scale, None, None")),
    # instructor trial 82 (erin): the same write before the scale gradient, which then reads the
    # masked grad_output; the value probe named its symptom (clipped-elements-left-out, a right
    # formula) until the watch's write came first (autograder.untouched.write_first)
    Mistake("FakeQuantize", "grad_output masked in place before the scale gradient reads it",
            "FakeQuantize.backward modified grad_output in place",
            _fake_quantize(
                "        x, scale = ctx.saved_tensors\n        v = x / scale\n"
                "        inside = (v >= ctx.qmin) & (v <= ctx.qmax)\n"
                "        grad_x = grad_output.mul_(inside) if ctx.needs_input_grad[0] else None\n"
                "        grad_scale = None\n"
                "        if ctx.needs_input_grad[1]:\n"
                "            clipped = torch.where(v < ctx.qmin, float(ctx.qmin), "
                "float(ctx.qmax))\n"
                "            local = torch.where(inside, torch.round(v) - v, clipped)\n"
                "            grad_scale = (grad_output * local).sum()\n"
                "        return grad_x, grad_scale, None, None")),
    Mistake("StraightThroughSoftmax", "grad_output changed in place",
            "backward modified grad_output in place",
            _sts(READ + "        row = (grad_output * soft).sum(-1, keepdim=True)\n"
                 "        return grad_output.sub_(row).mul_(soft).div_(ctx.tau), None")),
]

UNUSUAL = [
    Unusual("RoundSTE", "rounds in float64 and casts back; backward multiplies by a 0-dim one",
            _round("        return torch.round(x.to(torch.float64)).to(x.dtype)",
                   "        return grad_output * torch.ones((), dtype=grad_output.dtype)")),
]
