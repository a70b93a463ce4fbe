"""Lesson 09's transfer exercise, CumMax: answers with known verdicts (each output's gradient
sent to the position of its running maximum, summed where outputs share one, ties to the
latest)."""

from .. import Mistake, Unusual
from .answers import _CUMMAX_FORWARD, _SCATTER_ADD, _cummax, _function

_MOVEDIM_FORWARD = '''    def forward(ctx, x, dim):
        values, indices = torch.cummax(x.movedim(dim, -1), -1)
        ctx.save_for_backward(indices.movedim(-1, dim)KEEP)
        ctx.dim = dim
        return values.movedim(-1, dim)
'''
_SCATTER_BACK = '''    def backward(ctx, grad_output):
        indices, = ctx.saved_tensors
        return torch.zeros_like(grad_output).scatter_add(ctx.dim, indices, grad_output), None
'''


# the saved x reused as the zero buffer of the scatter-add
CUMMAX_BUFFER_IS_X = _function("CumMax", '''
    def forward(ctx, x, dim):
        values, indices = torch.cummax(x, dim)
        ctx.save_for_backward(x, indices)
        ctx.dim = dim
        return values
''', '''
    def backward(ctx, grad_output):
        x, indices = ctx.saved_tensors
        return x.zero_().scatter_add_(ctx.dim, indices, grad_output), None
''')


# the running maximum by a loop over positions, ties to the earliest (strict >) or the latest
_LOOP_FORWARD = '''    def forward(ctx, x, dim):
        moved = x.movedim(dim, -1)
        values, indices = torch.empty_like(moved), torch.zeros_like(moved, dtype=torch.int64)
        best, where = moved[..., 0], torch.zeros_like(moved[..., 0], dtype=torch.int64)
        for i in range(moved.shape[-1]):
            better = moved[..., i] COMPARE best
            best = torch.where(better, moved[..., i], best)
            where = torch.where(better, i, where)
            values[..., i], indices[..., i] = best, where
        ctx.save_for_backward(indices.movedim(-1, dim))
        ctx.dim = dim
        return values.movedim(-1, dim)
'''


UNUSUAL = [
    Unusual("CumMax", "PyTorch's own cummaxmin_backward (aten/src/ATen/native/ReduceOps.cpp) "
            "in Python", _cummax('''
        if indices.numel() == 0:
            return grad_output.clone(), None
        result = torch.zeros(indices.shape, dtype=grad_output.dtype, device=grad_output.device)
        return result.scatter_add_(ctx.dim, indices, grad_output), None
''')),
    Unusual("CumMax", "in-place scatter_add_ on new_zeros, dim normalised", _cummax('''
        out = grad_output.new_zeros(grad_output.shape)
        out.scatter_add_(ctx.dim % max(grad_output.dim(), 1), indices, grad_output)
        return out, None
''')),
    Unusual("CumMax", "cummax along the last dim after movedim, the indices saved as a view",
            _function("CumMax", _MOVEDIM_FORWARD.replace("KEEP", ""), _SCATTER_BACK)),
    Unusual("CumMax", "a running maximum by a loop (ties to the latest: >=), scatter_reduce, "
            "a 0-d x as a row of one", _cummax('''
        zeros = torch.zeros_like(grad_output)
        return zeros.scatter_reduce(ctx.dim, indices, grad_output, "sum"), None
''', forward=_LOOP_FORWARD.replace("COMPARE", ">=").replace(
                "x.movedim(dim, -1)", "(x.movedim(dim, -1) if x.dim() else x.reshape(1))").replace(
                "indices.movedim(-1, dim)", "indices.movedim(-1, dim).reshape(x.shape)").replace(
                "values.movedim(-1, dim)", "values.movedim(-1, dim).reshape(x.shape)"))),
]


MISTAKES = [
    # W22 of review 74: dim turned into a position with dim % x.dim(), which divides by zero on
    # a 0-d x (torch.cummax takes one along dim 0 and -1, a row of one)
    Mistake("CumMax", "dim normalised with dim % x.dim() in forward",
            "CumMax raised ZeroDivisionError on a 0-d x (dim=0, float64), which torch.cummax "
            "takes", _cummax(_SCATTER_ADD, forward='''
    def forward(ctx, x, dim):
        dim = dim % x.dim()
        values, indices = torch.cummax(x, dim)
        ctx.save_for_backward(indices)
        ctx.dim = dim
        return values
''')),
    # UNUSUAL until review 74: each raises on a 0-d x, which torch.cummax takes along dim 0 and
    # -1 (rule 1)
    Mistake("CumMax", "a running maximum by a loop (ties to the latest: >=), scatter_reduce",
            "CumMax raised IndexError on a 0-d x",
            _cummax('''
        zeros = torch.zeros_like(grad_output)
        return zeros.scatter_reduce(ctx.dim, indices, grad_output, "sum"), None
''', forward=_LOOP_FORWARD.replace("COMPARE", ">="))),
    Mistake("CumMax", "index_put_ with accumulate=True on flattened rows",
            "CumMax.backward raised IndexError on a 0-d x", _cummax('''
        g = grad_output.movedim(ctx.dim, -1)
        idx = indices.movedim(ctx.dim, -1)
        n = g.shape[-1]
        rows = torch.arange(g.numel() // max(n, 1), device=g.device).repeat_interleave(n)
        flat = torch.zeros(g.numel() // max(n, 1), n, dtype=g.dtype, device=g.device)
        flat.index_put_((rows, idx.reshape(-1)), g.reshape(-1), accumulate=True)
        return flat.reshape(g.shape).movedim(-1, ctx.dim), None
''')),
    Mistake("CumMax", "scatter_add_ one output position at a time",
            "CumMax raised ZeroDivisionError on a 0-d x", _cummax('''
        d = ctx.dim % grad_output.dim()
        g, idx = grad_output.movedim(d, -1), indices.movedim(d, -1)
        out = torch.zeros_like(g)
        for o in range(g.shape[-1]):
            out.scatter_add_(-1, idx[..., o:o + 1], g[..., o:o + 1])
        return out.movedim(-1, d), None
''')),
    Mistake("CumMax", "index_add one flattened slice at a time",
            "CumMax raised ZeroDivisionError on a 0-d x", _cummax('''
        d = ctx.dim % grad_output.dim()
        g = grad_output.movedim(d, -1).reshape(-1, grad_output.shape[d])
        i = indices.movedim(d, -1).reshape(-1, grad_output.shape[d])
        out = torch.zeros_like(g)
        for r in range(g.shape[0]):
            out[r] = out[r].index_add(0, i[r], g[r])
        return out.reshape(grad_output.movedim(d, -1).shape).movedim(-1, d), None
''', forward=_CUMMAX_FORWARD)),
    # a built-in *_backward op that decomposes before a dispatch mode sees it, grad_output
    # standing in for x (the op reads only its shape and options) (review 09)
    Mistake("CumMax", "PyTorch's own cummaxmin_backward, a built-in *_backward op",
            "uses the built-in op cummaxmin_backward", _cummax(
                "        return torch.ops.aten.cummaxmin_backward(grad_output, grad_output, "
                "indices, ctx.dim), None\n")),
    Mistake("CumMax", "an assignment where outputs share an entry (scatter without add)",
            "CumMax lost gradients where several outputs take their value from the same entry",
            _cummax("        return torch.zeros_like(grad_output).scatter(ctx.dim, indices, "
                    "grad_output), None\n"), named=True, nbgrader=True),
    Mistake("CumMax", "ties to the earliest of equal values (strict >)",
            "CumMax sends a tied maximum's gradient to the earliest of the equal values",
            _cummax(_SCATTER_ADD.replace("torch.zeros_like(grad_output)",
                                         "grad_output.new_zeros(grad_output.shape)"),
                    forward=_LOOP_FORWARD.replace("COMPARE", ">")), named=True),
    # learner trial 81 (issue 68): caught, but named only "wrong, largest error" before the probe
    Mistake("CumMax", "each output's gradient to every earlier entry equal to its running maximum "
            "(a mask of ties)",
            "CumMax sends each output's gradient to every entry up to it that equals its running "
            "maximum", _function("CumMax", '''
    def forward(ctx, x, dim):
        values = torch.cummax(x, dim).values
        ctx.save_for_backward(x, values)
        ctx.dim = dim
        return values
''', '''
    def backward(ctx, grad_output):
        x, values = ctx.saved_tensors
        d = ctx.dim
        n = x.shape[d]
        grad = torch.zeros_like(x)
        for o in range(n):
            vo = values.narrow(d, o, 1)
            go = grad_output.narrow(d, o, 1)
            mask = (x.narrow(d, 0, o + 1) == vo)
            grad.narrow(d, 0, o + 1).add_(mask * go)
        return grad, None
''')),
    Mistake("CumMax", "saves x and recomputes the indices in backward", "CumMax saves its input x",
            _function("CumMax", '''    def forward(ctx, x, dim):
        ctx.save_for_backward(x)
        ctx.dim = dim
        return torch.cummax(x, dim).values
''', '''    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        indices = torch.cummax(x, ctx.dim).indices
        return torch.zeros_like(x).scatter_add(ctx.dim, indices, grad_output), None
'''), named=True),
    Mistake("CumMax", "each new maximum keeps only its own output's gradient (no sum over its run)",
            "that entry's gradient is the sum of all of their grad_output",
            _cummax("""
        dim = ctx.dim % grad_output.dim()
        shape = [-1 if d == dim else 1 for d in range(grad_output.dim())]
        position = torch.arange(grad_output.shape[dim], device=grad_output.device).view(shape)
        return grad_output * (indices == position), None
""")),
    Mistake("CumMax", "the gradient of each output to its own position",
            "returns grad_output unchanged",
            _cummax("        return grad_output.clone(), None\n")),
    Mistake("CumMax", "grad_output gathered with the indices (the forward's direction)",
            "CumMax gathers grad_output with the indices",
            _cummax("        return grad_output.gather(ctx.dim, indices), None\n")),
    Mistake("CumMax", "the indices saved as int32",
            "saves a tensor in int32 (84 bytes for the 21 entries of x), a dtype torch.cummax "
            "never returns its indices in: forward made it only to be saved",
            _cummax("        return torch.zeros_like(grad_output).scatter_add(ctx.dim, "
                    "indices.long(), grad_output), None\n",
                    _CUMMAX_FORWARD.replace("save_for_backward(indices)",
                                     "save_for_backward(indices.int())"))),
    Mistake("CumMax", "saves values and indices", "CumMax saves its output", _function("CumMax",
            '''
    def forward(ctx, x, dim):
        values, indices = torch.cummax(x, dim)
        ctx.save_for_backward(indices, values)
        ctx.dim = dim
        return values
''', '''
    def backward(ctx, g):
        indices, _ = ctx.saved_tensors
        return torch.zeros_like(g).scatter_add(ctx.dim, indices, g), None
''')),
    Mistake("CumMax", "saves the indices and an arange of positions",
            "more than torch.cummax gave forward beside the values", _function("CumMax", '''
    def forward(ctx, x, dim):
        values, indices = torch.cummax(x, dim)
        ctx.save_for_backward(indices, torch.arange(x.shape[dim], device=x.device))
        ctx.dim = dim
        return values
''', '''
    def backward(ctx, g):
        indices, _ = ctx.saved_tensors
        return torch.zeros_like(g).scatter_add(ctx.dim, indices, g), None
''')),
    # as many bytes as the indices, so the byte count passed it (review 09)
    Mistake("CumMax", "the indices rebuilt by hand and saved (torch.cummax's discarded)",
            "not those indices themselves", _cummax(_SCATTER_ADD, forward='''
    def forward(ctx, x, dim):
        values = torch.cummax(x, dim).values
        n = x.shape[dim]
        shape = [1] * x.dim()
        shape[dim] = n
        position = torch.arange(n, device=x.device).view(shape).expand_as(x)
        held = torch.where(x == values, position, torch.full_like(position, -1))
        ctx.save_for_backward(held.cummax(dim).values)
        ctx.dim = dim
        return values
'''.lstrip("\n"))),
    Mistake("CumMax", "scatter_add along the last dim, whatever dim is",
            "CumMax's gradient is right when dim is the last dimension but wrong for dim=0",
            _cummax("        return torch.zeros_like(grad_output).scatter_add(-1, indices, "
                    "grad_output), None\n")),
    Mistake("CumMax", "the saved x zeroed and used as the scatter-add buffer",
            "CumMax.backward modified its input x in place", CUMMAX_BUFFER_IS_X),
    Mistake("CumMax", "buffer from torch.zeros(grad_output.shape), float32 whatever x is",
            "CumMax's backward added values into a tensor of another dtype", _cummax(
                "        return torch.zeros(grad_output.shape).scatter_add(ctx.dim, indices, "
                "grad_output), None\n")),
    Mistake("CumMax", "a negative dim turned into -1 in backward",
            "right for dim=0 but wrong for dim=-2", _cummax(
                "        dim = ctx.dim if ctx.dim >= 0 else -1\n"
                "        return torch.zeros_like(grad_output).scatter_add(dim, indices, "
                "grad_output), None\n")),
    # right values, but an n x n one-hot matrix per row, (..., out, in): memory in n^2 where
    # a scatter-add needs n (rule 3; both were UNUSUAL before the generic memory check)
    Mistake("CumMax", "a one-hot matrix per row, summed over the outputs",
            "a Jacobian built as a matrix", _cummax('''
        idx = indices.movedim(ctx.dim, -1)
        one_hot = F.one_hot(idx, idx.shape[-1]).to(grad_output.dtype)  # (..., out, in)
        g = grad_output.movedim(ctx.dim, -1).unsqueeze(-1)
        return (one_hot * g).sum(-2).movedim(-1, ctx.dim), None
''')),
    Mistake("CumMax", "one-hot compare with arange",
            "made by eq: a Jacobian built as a matrix", _cummax('''
        d = ctx.dim % grad_output.dim()
        idx = indices.movedim(d, -1)
        n = idx.shape[-1]
        hit = (idx.unsqueeze(-1) == torch.arange(n, device=idx.device)).to(grad_output.dtype)
        return (hit * grad_output.movedim(d, -1).unsqueeze(-1)).sum(-2).movedim(-1, d), None
''')),
    # a copy wherever dim is not the last
    Mistake("CumMax", "cummax after movedim, the indices moved back with .contiguous() (a copy)",
            "forward made beside the indices torch.cummax returned",
            _function("CumMax", _MOVEDIM_FORWARD.replace("KEEP", ".contiguous()"),
                      _SCATTER_BACK), named=True),
]
