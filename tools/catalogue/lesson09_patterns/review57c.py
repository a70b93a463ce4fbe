"""Lesson 09, review 57 round C: the rules every exercise follows are now listed in the lesson's
introduction (no tensor as a ctx attribute, no state outside ctx, grad_output and the inputs not
written, backward twice, any layout), so BroadcastMul and ProdOverDim keeping their inputs as
ctx attributes are mistakes whose message cites that rule (their contracts have no saving
clause); BroadcastMul writing into grad_output when one gradient is asked for; Normalize placing
a row by its squared norm compared with eps**2 in float32, which is wrong at eps = 0.7 but right
at 1e-12, so it is told what the failing case shows, never "compared in float64"."""

from .. import Mistake, edit
from .answers import (_MUL_BOTH, _MUL_FORWARD, _NORMALIZE_FORWARD, _PROD_EXACT, _PROD_FORWARD,
                      _mul, _normalize, _prod)

_MUL_NEEDED = '''        grad_a = (grad_output * b).sum_to_size(a.shape) if ctx.needs_input_grad[0] else None
        grad_b = (grad_output * a).sum_to_size(b.shape) if ctx.needs_input_grad[1] else None
        return grad_a, grad_b
'''

MISTAKES = [
    Mistake("BroadcastMul", "a and b kept as ctx attributes",
            "a tensor is never a ctx attribute (a rule for every exercise",
            edit(_mul(_MUL_NEEDED, edit(_MUL_FORWARD, ("ctx.save_for_backward(a, b)",
                                                       "ctx.a, ctx.b = a, b"))),
                 ("a, b = ctx.saved_tensors", "a, b = ctx.a, ctx.b"))),
    Mistake("ProdOverDim", "x kept as a ctx attribute",
            "a tensor is never a ctx attribute (a rule for every exercise",
            edit(_prod(_PROD_EXACT, edit(_PROD_FORWARD, ("ctx.save_for_backward(x)",
                                                         "ctx.x = x"))),
                 ("x, = ctx.saved_tensors", "x = ctx.x"))),
    Mistake("BroadcastMul", "grad_output multiplied in place when one gradient is asked for",
            "modified grad_output in place", _mul('''
        if ctx.needs_input_grad[0] and ctx.needs_input_grad[1]:
''' + "    " + _MUL_BOTH + '''        if ctx.needs_input_grad[0]:
            return grad_output.mul_(b).sum_to_size(a.shape), None
        return None, grad_output.mul_(a).sum_to_size(b.shape)
''')),
    Mistake("Normalize", "the squared norm saved and compared with eps**2 (in float32)",
            "for a row below eps (its gradient is grad_output / eps, no projection)",
            edit(_normalize('''
        radial = (y * grad_output).sum(-1, keepdim=True)
        above = sq >= ctx.eps ** 2
        return (grad_output - y * radial * above) / torch.where(above, sq.sqrt(), ctx.eps), None
''', edit(_NORMALIZE_FORWARD, ("ctx.save_for_backward(y, norm)",
                                "ctx.save_for_backward(y, norm * norm)"))),
                 ("y, norm = ctx.saved_tensors", "y, sq = ctx.saved_tensors"))),
]

UNUSUAL = []
