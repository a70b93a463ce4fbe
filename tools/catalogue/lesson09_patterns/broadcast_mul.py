"""Lesson 09: answers with known verdicts for BroadcastMul: gradients summed back to each
input's shape (the leading dims and the size-1 dims, lined up from the right), never left in a
shape the engine would sum (this exercise's own contract, stricter than rule 2); the other
factor, not the output divided by an input; no work for a gradient nobody needs."""

from .. import Mistake, Unusual
from .answers import _MUL_BOTH, _function, _mul


UNUSUAL = [
    Unusual("BroadcastMul", "leading dims summed in a loop, size-1 dims with keepdim", _mul('''
        grads = []
        for needed, other, own in ((ctx.needs_input_grad[0], b, a),
                                   (ctx.needs_input_grad[1], a, b)):
            if not needed:
                grads.append(None)
                continue
            g = grad_output * other
            while g.dim() > own.dim():
                g = g.sum(0)
            dims = [i for i, size in enumerate(own.shape) if size == 1 and g.shape[i] != 1]
            grads.append(g.sum(dims, keepdim=True) if dims else g)
        return tuple(grads)
''')),
    Unusual("BroadcastMul", "saves the output too, unused (no saving rule in the contract)",
            _mul("""
        grad_a = grad_b = None
        if ctx.needs_input_grad[0]:
            grad_a = (grad_output * b).sum_to_size(a.shape)
        if ctx.needs_input_grad[1]:
            grad_b = (grad_output * a).sum_to_size(b.shape)
        return grad_a, grad_b
""", forward="""    def forward(ctx, a, b):
        y = a * b
        ctx.save_for_backward(a, b, y)
        return y
""").replace("a, b = ctx.saved_tensors", "a, b, _ = ctx.saved_tensors")),
    Unusual("BroadcastMul", "broadcast_tensors, then sum_to_size", _mul('''
        grad_a = grad_b = None
        big_a, big_b = torch.broadcast_tensors(a, b)
        if ctx.needs_input_grad[0]:
            grad_a = (grad_output * big_b).sum_to_size(a.shape)
        if ctx.needs_input_grad[1]:
            grad_b = (grad_output * big_a).sum_to_size(b.shape)
        return grad_a, grad_b
''')),
    Unusual("BroadcastMul", "saves expanded views, reduces with a helper", _mul('''
        def reduce(g, shape):
            lead = g.dim() - len(shape)
            g = g.sum(tuple(range(lead))) if lead else g
            dims = tuple(i for i, s in enumerate(shape) if s == 1)
            return g.sum(dims, keepdim=True) if dims else g

        grad_a = reduce(grad_output * b, a.shape) if ctx.needs_input_grad[0] else None
        grad_b = reduce(grad_output * a, b.shape) if ctx.needs_input_grad[1] else None
        return grad_a, grad_b
''', forward='''
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return torch.mul(a, b)
''')),
    Unusual("BroadcastMul", "saves only what each gradient needs (None placeholders)",
            _function("BroadcastMul",
            '''
    def forward(ctx, a, b):
        ctx.save_for_backward(b if ctx.needs_input_grad[0] else None,
                              a if ctx.needs_input_grad[1] else None)
        ctx.shapes = (a.shape, b.shape)
        return a * b
''', '''
    def backward(ctx, g):
        b, a = ctx.saved_tensors
        sa, sb = ctx.shapes
        ga = (g * b).sum_to_size(sa) if ctx.needs_input_grad[0] else None
        gb = (g * a).sum_to_size(sb) if ctx.needs_input_grad[1] else None
        return ga, gb
''')),
    Unusual("BroadcastMul", "0-d branches with .sum(), reshape to shape", _mul('''
        out = []
        for need, other, own in ((ctx.needs_input_grad[0], b, a), (ctx.needs_input_grad[1], a, b)):
            if not need:
                out.append(None); continue
            g = grad_output * other
            if own.dim() == 0:
                out.append(g.sum()); continue
            lead = g.dim() - own.dim()
            g = g.sum(dim=list(range(lead))) if lead else g
            keep = [i for i in range(own.dim()) if own.shape[i] == 1 and g.shape[i] != 1]
            out.append(g.sum(dim=keep, keepdim=True) if keep else g)
        return tuple(out)
''')),
    Unusual("BroadcastMul", "sum_to_size(*shape), with a 0-d branch", _mul('''
        ga = gb = None
        if ctx.needs_input_grad[0]:
            ga = (torch.mul(grad_output, b).sum_to_size(*a.shape) if a.dim()
                  else (grad_output * b).sum())
        if ctx.needs_input_grad[1]:
            gb = (torch.mul(grad_output, a).sum_to_size(*b.shape) if b.dim()
                  else (grad_output * a).sum())
        return ga, gb
''')),
]


MISTAKES = [
    # the gradients in the output's shape: rule 2 lets the engine sum them, this exercise's
    # contract does not (review 71)
    Mistake("BroadcastMul", "forgot to sum the broadcast dims",
            "not left to the engine",
            _mul("        return grad_output * b, grad_output * a\n"), named=True, nbgrader=True),
    Mistake("BroadcastMul", "leaves the broadcast sums to the engine (needs_input_grad respected)",
            "not left to the engine", _mul('''
        return (torch.mul(grad_output, b) if ctx.needs_input_grad[0] else None,
                torch.mul(grad_output, a) if ctx.needs_input_grad[1] else None)
''', forward='''    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return torch.mul(a, b)
'''), named=True),
    # correct under rule 2 (the engine sums a gradient of a shape the input broadcasts to),
    # mistakes since this exercise's contract asks for each input's own shape (review 71): each
    # leaves some broadcast dims unsummed
    Mistake("BroadcastMul", "sums leading dims only (size-1 dims unsummed)",
            "not left to the engine",
            _mul('''
        ga = gb = None
        if ctx.needs_input_grad[0]:
            g = grad_output * b
            ga = g.sum(dim=list(range(g.dim() - a.dim()))) if g.dim() > a.dim() else g
        if ctx.needs_input_grad[1]:
            g = grad_output * a
            gb = g.sum(dim=list(range(g.dim() - b.dim()))) if g.dim() > b.dim() else g
        return ga, gb
''')),
    Mistake("BroadcastMul", "sums only the dims where the input is smaller than the output",
            "not left to the engine",
            _mul('''
        def reduce_to(g, shape):
            lead = g.dim() - len(shape)
            g = g.sum(tuple(range(lead))) if lead else g
            dims = tuple(i for i, (s, o) in enumerate(zip(shape, g.shape)) if s < o)
            return g.sum(dims, keepdim=True) if dims else g
        grad_a = reduce_to(grad_output * b, a.shape) if ctx.needs_input_grad[0] else None
        grad_b = reduce_to(grad_output * a, b.shape) if ctx.needs_input_grad[1] else None
        return grad_a, grad_b
''')),
    Mistake("BroadcastMul", "summed with keepdim after left-padding (extra dims of size 1)",
            "it has extra dims of size 1 that",
            _mul('''
        def reduce(g, shape):
            padded = (1,) * (g.dim() - len(shape)) + tuple(shape)
            dims = [i for i, size in enumerate(padded) if size == 1 and g.shape[i] != 1]
            return g.sum(dims, keepdim=True) if dims else g

        return reduce(grad_output * b, a.shape), reduce(grad_output * a, b.shape)
''')),
    Mistake("BroadcastMul", "sum without keepdim", "keepdim", _mul('''
        def reduce(g, shape):
            while g.dim() > len(shape):
                g = g.sum(0)
            for i, size in enumerate(shape):
                if size == 1 and g.shape[i] != 1:
                    g = g.sum(i)
            return g

        return reduce(grad_output * b, a.shape), reduce(grad_output * a, b.shape)
'''), named=True),
    Mistake("BroadcastMul", "ignores needs_input_grad",
            "returns a tensor for b when only a requires grad", _mul(_MUL_BOTH), named=True),
    # learner trial 80: zeros where None belongs; the hint says a tensor of zeros is not None
    Mistake("BroadcastMul", "zeros instead of None for an input that needs no gradient",
            "returns a tensor of zeros for b when only a requires grad: a tensor of zeros is "
            "not None", _mul("""
        ga = (grad_output * b).sum_to_size(a.shape) if ctx.needs_input_grad[0] else torch.zeros_like(a)
        gb = (grad_output * a).sum_to_size(b.shape) if ctx.needs_input_grad[1] else torch.zeros_like(b)
        return ga, gb
""")),
    Mistake("BroadcastMul", "the other input recovered as y / a (nan where a holds 0)",
            "is inf or nan exactly where a holds 0", _mul("""
        y = a * b
        grad_a = grad_b = None
        if ctx.needs_input_grad[0]:
            grad_a = (grad_output * y / a).sum_to_size(a.shape)
        if ctx.needs_input_grad[1]:
            grad_b = (grad_output * y / b).sum_to_size(b.shape)
        return grad_a, grad_b
""")),
    Mistake("BroadcastMul", "gradients swapped", "grad_output times a itself", _mul(
        "        return (grad_output * a).sum_to_size(a.shape), "
        "(grad_output * b).sum_to_size(b.shape)\n")),
    Mistake("BroadcastMul", "computes grad_b always, returns None when not needed",
            "does the same work when only a",
            _mul('''
        ga = (grad_output * b).sum_to_size(a.shape)
        gb = (grad_output * a).sum_to_size(b.shape)
        return (ga if ctx.needs_input_grad[0] else None), (gb if ctx.needs_input_grad[1] else None)
''')),
    Mistake("BroadcastMul", "leading dims summed with t.sum(()) when there are none",
            "called sum with an empty tuple of dims", _mul('''
        def reduce(t, shape):
            t = t.sum(tuple(range(t.dim() - len(shape))))
            keep = tuple(i for i, s in enumerate(shape) if s == 1)
            return t.sum(keep, keepdim=True) if keep else t
        grad_a = reduce(grad_output * b, a.shape) if ctx.needs_input_grad[0] else None
        grad_b = reduce(grad_output * a, b.shape) if ctx.needs_input_grad[1] else None
        return grad_a, grad_b
''')),
    Mistake("BroadcastMul", "size-1 dims summed left-aligned, before the leading dims",
            "lining the shapes up from the left", _mul('''
        def reduce(t, shape):
            for i, s in enumerate(shape):
                if s == 1:
                    t = t.sum(i, keepdim=True)
            while t.dim() > len(shape):
                t = t.sum(0)
            return t
        grad_a = reduce(grad_output * b, a.shape) if ctx.needs_input_grad[0] else None
        grad_b = reduce(grad_output * a, b.shape) if ctx.needs_input_grad[1] else None
        return grad_a, grad_b
''')),
    # the two calls of the per-call check differ in both shapes: a module global holds the last
    Mistake("BroadcastMul", "the shapes kept in a module global", "two calls in one graph",
            _function("BroadcastMul",
            '''
    def forward(ctx, a, b):
        global SHAPES
        ctx.save_for_backward(a, b)
        SHAPES = (a.shape, b.shape)
        return a * b
''', '''
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        sa, sb = SHAPES
        ga = (g * b).sum_to_size(sa) if ctx.needs_input_grad[0] else None
        gb = (g * a).sum_to_size(sb) if ctx.needs_input_grad[1] else None
        return ga, gb
''')),
    # the other factor recovered from the output, its zeros guarded: 0 or inf where a * b
    # underflows or overflows
    Mistake("BroadcastMul", "the other factor recovered as y / a, zeros guarded with where",
            "is 0 or inf where a * b underflows or overflows", _mul('''
        y = a * b
        grad_a = grad_b = None
        if ctx.needs_input_grad[0]:
            grad_a = (grad_output * torch.where(a != 0, y / a, b)).sum_to_size(a.shape)
        if ctx.needs_input_grad[1]:
            grad_b = (grad_output * torch.where(b != 0, y / b, a)).sum_to_size(b.shape)
        return grad_a, grad_b
'''), named=True),
    Mistake("BroadcastMul", "grad_output multiplied in place when one gradient is asked for",
            "modified grad_output in place", _mul('''
        if ctx.needs_input_grad[0] and ctx.needs_input_grad[1]:
''' + "    " + _MUL_BOTH + '''        if ctx.needs_input_grad[0]:
            return grad_output.mul_(b).sum_to_size(a.shape), None
        return None, grad_output.mul_(a).sum_to_size(b.shape)
''')),
    # review 67: at the float64 ends its gradients match y / a as well (0 or inf); the probe
    # where a * b is ordinary tells it apart
    Mistake("BroadcastMul", "the gradients computed in float32 for float64 inputs",
            "rounded to float32", _mul('''
        g = grad_output.float()
        grad_a = grad_b = None
        if ctx.needs_input_grad[0]:
            grad_a = (g * b.float()).sum_to_size(a.shape).to(a.dtype)
        if ctx.needs_input_grad[1]:
            grad_b = (g * a.float()).sum_to_size(b.shape).to(b.dtype)
        return grad_a, grad_b
''')),
]
