"""Lesson 02, review 59b: state kept outside ctx where the state checks did not look, each
named on its first line: an attribute forward sets on an input tensor (x hung on weight, a mask
on x, the bias flag on x1), a mutable default argument of forward (a dict keyed by id(ctx), the
output kept) or of backward (grad_weight appended to a list); grad_output scaled in place. Unusual:
Bilinear's grad_bias returned as grad_output itself for 1-D inputs, a dict default that
forward only reads, and the reviewer's mask taken from the output, flattened and scattered back
by boolean index (their einsum/tensordot MyLinearFunction and F.bilinear Bilinear are already
catalogued in state_and_work and bilinear)."""

from .. import Mistake, Unusual, edit
from .answers import FLAT, FUSED_FORWARD, FUSED_READ, FUSED_RETURN, GUARDED, _RETURN, _fused, _linear
from .bilinear import GW, GX1, GX2, _bilinear_with

_LINEAR = _linear(FLAT + GUARDED + "        grad_bias = g2.sum(0) if ctx.has_bias and "
                  "ctx.needs_input_grad[2] else None\n" + _RETURN)
_FUSED = _fused(FUSED_READ + FUSED_RETURN)
_BILINEAR = _bilinear_with(GX1, GX2, GW)
_LINEAR_DEF = "def forward(ctx, x, weight, bias=None):"

MISTAKES = [
    Mistake("MyLinearFunction", "x hung on weight.__dict__ (review 59b)",
            "set weight.last_input, an attribute on its input weight", edit(
                _LINEAR, ("ctx.save_for_backward(x, weight)\n",
                          "ctx.save_for_backward(weight)\n"
                          "        weight.__dict__['last_input'] = x\n"),
                ("x, weight = ctx.saved_tensors\n",
                 "weight, = ctx.saved_tensors\n        x = weight.__dict__['last_input']\n"))),
    Mistake("MyLinearFunction",
            "the bias flag in a dict default of forward, keyed by id(ctx) (review 59b)",
            "changed its own mutable default argument _saved", edit(
                _LINEAR, (_LINEAR_DEF, _LINEAR_DEF.replace("None)", "None, _saved={})")),
                ("ctx.has_bias = bias is not None", "_saved[id(ctx)] = bias is not None"),
                ("if ctx.has_bias and",
                 "if MyLinearFunction.forward.__defaults__[1][id(ctx)] and"))),
    Mistake("FusedLinearReLU", "the output kept in a dict default of forward (review 59b)",
            "changed its own mutable default argument _cache", edit(
                _FUSED, (_LINEAR_DEF, _LINEAR_DEF.replace("None)", "None, _cache={})")),
                ("        return z.clamp(min=0)",
                 "        _cache['last'] = z.clamp(min=0)\n        return _cache['last']"))),
    Mistake("FusedLinearReLU", "the mask hung on x.__dict__ (review 59b)",
            "set x.relu_mask, an attribute on its input x", _fused(
                edit(FUSED_READ, ("x, weight, mask = ctx.saved_tensors\n",
                                  "x, weight = ctx.saved_tensors\n"
                                  "        mask = x.__dict__['relu_mask']\n")) + FUSED_RETURN,
                edit(FUSED_FORWARD, ("ctx.save_for_backward(x, weight, mask)",
                                     "ctx.save_for_backward(x, weight)\n"
                                     "        x.__dict__['relu_mask'] = mask")))),
    Mistake("Bilinear", "the bias flag hung on x1.__dict__ (review 59b)",
            "set x1.has_bias, an attribute on its input x1", edit(
                _BILINEAR, ("ctx.has_bias = bias is not None",
                            "x1.__dict__['has_bias'] = bias is not None"),
                ("if ctx.has_bias and", "if x1.__dict__['has_bias'] and"))),
    Mistake("Bilinear", "grad_weight kept in a list default of backward (review 59b)",
            "Bilinear.backward kept state in its mutable default argument _last", edit(
                _BILINEAR, ("def backward(ctx, grad_output):",
                            "def backward(ctx, grad_output, _last=[]):"),
                ("        return grad_x1,",
                 "        _last[:] = [grad_weight]\n        return grad_x1,"))),
    Mistake("Bilinear", "grad_output scaled in place for grad_x1 (review 59b)",
            "modified grad_output in place", _bilinear_with(
                GX1.replace("grad_output,", "grad_output.mul_(1.0),"), GX2, GW)),
]

UNUSUAL = [
    # a mistake until a later review dropped the check that no gradient shares
    # grad_output's memory: x @ W.T + b's own backward returns grad_output itself too
    Unusual("Bilinear", "grad_bias = grad_output itself for 1-D inputs (review 59b)",
            _bilinear_with(GX1, GX2, GW, "(grad_output if grad_output.dim() == 1 else "
                           "grad_output.reshape(-1, weight.shape[0]).sum(0))")),
    Unusual("MyLinearFunction", "a dict default that forward only reads (review 59b)", edit(
        _LINEAR, (_LINEAR_DEF, _LINEAR_DEF.replace("None)", "None, _names={'bias': 'bias'})")),
        ("ctx.has_bias = bias is not None", "setattr(ctx, 'has_' + _names['bias'], "
                                            "bias is not None)"))),
    Unusual("FusedLinearReLU", "mask from y > 0, scattered back by boolean index (review 59b)",
            _fused("        x, w, keep = ctx.saved_tensors\n"
                   "        n = tuple(ctx.needs_input_grad) + (False,)\n"
                   "        gz = grad_output.new_zeros(ctx.out_shape)\n"
                   "        gz.view(-1)[keep] = grad_output.reshape(-1)[keep]\n"
                   "        gz2 = gz.reshape(-1, gz.shape[-1])\n"
                   "        gx = gz @ w if n[0] else None\n"
                   "        gw = torch.einsum('mo,mi->oi', gz2, x.reshape(-1, x.shape[-1])) "
                   "if n[1] else None\n"
                   "        gb = gz2.sum(0) if n[2] else None\n"
                   "        return gx, gw, gb",
                   "        y = torch.relu(torch.nn.functional.linear(x, weight, bias))\n"
                   "        keep = y > 0\n"
                   "        ctx.save_for_backward(x, weight, keep.flatten())\n"
                   "        ctx.out_shape = y.shape\n"
                   "        return y")),
]
