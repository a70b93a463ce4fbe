"""Lesson 07: answers with known verdicts for SortWithIndices, a Function with an integer output
(indices marked non-differentiable, the permutation saved, the gradient scattered back)."""

from .. import Mistake, Unusual, edit


_SORT_FORWARD = '''
    @staticmethod
    def forward(ctx, x):
        values, indices = torch.sort(x, dim=-1)
        ctx.mark_non_differentiable(indices)
        ctx.save_for_backward(indices)
        return values, indices
'''


def _sort(forward: str = _SORT_FORWARD, backward: str = "") -> str:
    return f"class SortWithIndices(torch.autograd.Function):\n{forward}\n{backward}"


def _sort_backward(body: str) -> str:
    return ("    @staticmethod\n    def backward(ctx, grad_values, grad_indices):\n"
            "        indices, = ctx.saved_tensors\n" + body)


_SCATTER = _sort_backward(
    "        return torch.zeros_like(grad_values).scatter(-1, indices, grad_values)\n")


UNUSUAL = [
    Unusual("SortWithIndices", "argsort and gather", _sort('''
    @staticmethod
    def forward(ctx, x):
        indices = torch.argsort(x, dim=-1)
        ctx.mark_non_differentiable(indices)
        ctx.save_for_backward(indices)
        return x.gather(-1, indices), indices
''', _SCATTER)),
    Unusual("SortWithIndices", "scatter_add_ into new_zeros", _sort(backward=_sort_backward(
        "        return grad_values.new_zeros(grad_values.shape).scatter_add_(-1, indices, "
        "grad_values)\n"))),
    Unusual("SortWithIndices", "gather with the inverse permutation", _sort(
        backward=_sort_backward(
            "        inverse = torch.argsort(indices, dim=-1)  # where each x went\n"
            "        return grad_values.gather(-1, inverse)\n"))),
    Unusual("SortWithIndices", "stable sort, materialisation off", _sort('''
    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        values, indices = torch.sort(x, dim=-1, stable=True)
        ctx.mark_non_differentiable(indices)
        ctx.save_for_backward(indices)
        return values, indices
''', _sort_backward(
        "        if grad_values is None:\n            return None\n"
        "        out = torch.empty_like(grad_values)\n"
        "        out.scatter_(-1, indices, grad_values)\n        return out\n"))),
    Unusual("SortWithIndices", "saves the inverse permutation and gathers", _sort('''
    @staticmethod
    def forward(ctx, x):
        values, indices = torch.sort(x, dim=-1)
        ctx.mark_non_differentiable(indices)
        ctx.save_for_backward(torch.argsort(indices, dim=-1) if x.dim() else indices)
        return values, indices
''', '''
    @staticmethod
    def backward(ctx, grad_values, grad_indices):
        inverse, = ctx.saved_tensors  # where each entry of x went
        return grad_values.gather(-1, inverse) if grad_values.dim() else grad_values
''')),
    Unusual("SortWithIndices", "topk of every entry, smallest first", _sort('''
    @staticmethod
    def forward(ctx, x):
        values, indices = torch.topk(x, x.shape[-1] if x.dim() else 1, dim=-1, largest=False)
        ctx.mark_non_differentiable(indices)
        ctx.save_for_backward(indices)
        return values, indices
''', _SCATTER)),
]


MISTAKES = [
    Mistake("SortWithIndices", "indices not marked non-differentiable",
            "did not mark its indices with ctx.mark_non_differentiable", _sort('''
    @staticmethod
    def forward(ctx, x):
        values, indices = torch.sort(x, dim=-1)
        ctx.save_for_backward(indices)
        return values, indices
''', _SCATTER), named=True, nbgrader=True),
    Mistake("SortWithIndices", "saves the values too", "saves the values", _sort('''
    @staticmethod
    def forward(ctx, x):
        values, indices = torch.sort(x, dim=-1)
        ctx.mark_non_differentiable(indices)
        ctx.save_for_backward(indices, values)
        return values, indices
''', '''
    @staticmethod
    def backward(ctx, grad_values, grad_indices):
        indices, values = ctx.saved_tensors
        return torch.zeros_like(values).scatter(-1, indices, grad_values)
'''), named=True),
    Mistake("SortWithIndices", "saves x instead of the indices", "saves its input x", _sort('''
    @staticmethod
    def forward(ctx, x):
        values, indices = torch.sort(x, dim=-1)
        ctx.mark_non_differentiable(indices)
        ctx.save_for_backward(x)
        return values, indices
''', '''
    @staticmethod
    def backward(ctx, grad_values, grad_indices):
        x, = ctx.saved_tensors
        indices = torch.sort(x, dim=-1).indices
        return torch.zeros_like(grad_values).scatter(-1, indices, grad_values)
'''), named=True),
    Mistake("SortWithIndices", "gather instead of scatter", "gathered grad_values", _sort(
        backward=_sort_backward("        return grad_values.gather(-1, indices)\n")),
        named=True),
    Mistake("SortWithIndices", "every row's indices at once", "every row's indices", _sort(
        backward=_sort_backward("        g = torch.zeros_like(grad_values)\n"
                                "        g[..., indices] = grad_values\n        return g\n")),
        named=True),
    Mistake("SortWithIndices", "a loop over j, every row's indices", "every row's indices", _sort(
        backward=_sort_backward(
            "        g = torch.zeros_like(grad_values)\n        for j in range(g.shape[-1]):\n"
            "            g[..., indices[..., j]] = grad_values[..., j]\n        return g\n"))),
    Mistake("SortWithIndices", "positions found by comparing values", "ties", _sort('''
    @staticmethod
    def forward(ctx, x):
        values, indices = torch.sort(x, dim=-1)
        ctx.mark_non_differentiable(indices)
        ctx.save_for_backward(x, values)
        return values, indices
''', '''
    @staticmethod
    def backward(ctx, grad_values, grad_indices):
        x, values = ctx.saved_tensors
        match = (x.unsqueeze(-1) == values.unsqueeze(-2)).to(grad_values.dtype)
        return (match * grad_values.unsqueeze(-2)).sum(-1)
'''), named=True),
    # a review (score 7): the indices returned are a stable sort's, the permutation saved is
    # argsort's (unstable): on rows of 32 with ties the two order ties differently, so the right
    # gradients land permuted (rows of 9 are too few for the two orders to differ)
    Mistake("SortWithIndices", "stable sort's indices returned, argsort's saved",
            "another ordering of the ties", _sort('''
    @staticmethod
    def forward(ctx, x):
        values, indices = torch.sort(x, dim=-1, stable=True)
        ctx.mark_non_differentiable(indices)
        ctx.save_for_backward(torch.argsort(x, dim=-1))
        return values, indices
''', _SCATTER)),
    # a review (score 7): told that it saved no indices, while its mistake is the class
    # attribute; the class is checked first
    Mistake("SortWithIndices", "indices kept on the Function class",
            "a class attribute is shared by every call", _sort('''
    @staticmethod
    def forward(ctx, x):
        values, indices = torch.sort(x, dim=-1)
        ctx.mark_non_differentiable(indices)
        SortWithIndices.last_indices = indices
        return values, indices
''', '''
    @staticmethod
    def backward(ctx, grad_values, grad_indices):
        indices = SortWithIndices.last_indices
        return torch.zeros_like(grad_values).scatter(-1, indices, grad_values)
''')),
    # a review (score 8): the rows flattened with view(-1, n) and looped over; grad_values is not
    # contiguous in the battery, and the hint names the line and the tensor viewed
    Mistake("SortWithIndices", "rows flattened with grad_values.view(-1, n), looped over",
            "views grad_values, which is not contiguous here", _sort(backward=_sort_backward(
                "        n = grad_values.shape[-1]\n"
                "        g = grad_values.view(-1, n)\n"
                "        idx = indices.view(-1, n)\n"
                "        out = torch.zeros_like(g)\n"
                "        for r in range(g.shape[0]):\n"
                "            out[r, idx[r]] = g[r]\n"
                "        return out.view(grad_values.shape)\n"))),
    # a widely copied write-up of ctx's API sorts along the last dim and scatters along dim 0
    Mistake("SortWithIndices", "scatter along dim 0", "SortWithIndices.backward raised RuntimeError",
            _sort(backward=_sort_backward(
                "        return torch.zeros_like(grad_values).scatter(0, indices, grad_values)\n"
            ))),
    Mistake("SortWithIndices", "indices and their inverse both saved",
            "one permutation is all backward needs", _sort('''
    @staticmethod
    def forward(ctx, x):
        values, indices = torch.sort(x, dim=-1)
        ctx.mark_non_differentiable(indices)
        ctx.save_for_backward(indices, torch.argsort(indices, dim=-1))
        return values, indices
''', '''
    @staticmethod
    def backward(ctx, grad_values, grad_indices):
        indices, inverse = ctx.saved_tensors
        return grad_values.gather(-1, inverse)
''')),
    # int32 is accepted (review 53): int16 holds positions up to 32767 only
    Mistake("SortWithIndices", "indices saved as int16", "saves the permutation as int16", _sort('''
    @staticmethod
    def forward(ctx, x):
        values, indices = torch.sort(x, dim=-1)
        ctx.mark_non_differentiable(indices)
        ctx.save_for_backward(indices.to(torch.int16))
        return values, indices
''', _sort_backward(
        "        return torch.zeros_like(grad_values).scatter(-1, indices.long(), grad_values)\n"))),
    # indices marked non-differentiable have no grad_fn: no cycle, but no version check either
    Mistake("SortWithIndices", "indices kept as a ctx attribute", "stores a tensor as ctx.indices",
            _sort('''
    @staticmethod
    def forward(ctx, x):
        values, indices = torch.sort(x, dim=-1)
        ctx.mark_non_differentiable(indices)
        ctx.indices = indices
        return values, indices
''', '''
    @staticmethod
    def backward(ctx, grad_values, grad_indices):
        return torch.zeros_like(grad_values).scatter(-1, ctx.indices, grad_values)
''')),
    # Issue 37, values that separate answers: sorting a float32 copy orders float64 values one ulp
    # apart at random (in float32 they tie), so the gradient goes to the wrong positions; pairs of
    # twins one float64 ulp apart, the pairs apart in float32, show the order float32's.
    Mistake("SortWithIndices", "sorts a float32 copy of x, gathers the values from x",
            "sorts x only as float32 numbers",
            _sort(_SORT_FORWARD.replace(
                "values, indices = torch.sort(x, dim=-1)",
                "indices = torch.sort(x.float(), dim=-1).indices\n"
                "        values = x.gather(-1, indices)"), _SCATTER)),
    # PyTorch's own: derivatives.yaml gives sort's values the gradient
    # value_selecting_reduction_backward(grad, dim, indices, sizes, keepdim=True); right values,
    # but a built-in backward op, not the formula by hand (rule 3; was UNUSUAL before the generic
    # by-hand check)
    Mistake("SortWithIndices", "PyTorch's own formula, value_selecting_reduction_backward",
            "the built-in op value_selecting_reduction_backward", _sort(backward=_sort_backward(
                "        return torch.ops.aten.value_selecting_reduction_backward(\n"
                "            grad_values, -1, indices, list(indices.shape), True)\n"))),
    Mistake("SortWithIndices", "scattered into torch.zeros (float32)",
            "every value of grad_x is exactly a float32 number", _sort(backward=_sort_backward(
                "        g = torch.zeros(grad_values.shape, device=grad_values.device)\n"
                "        return g.scatter(-1, indices, grad_values.to(g.dtype))\n"))),
]


# Answers reviewers of the lesson wrote, kept with their verdicts and the first lines
# they now get (they were grouped by review round before).

_NARROW_SCATTER = _sort_backward(
    "        return torch.zeros_like(grad_values).scatter(-1, indices.long(), grad_values)\n")

UNUSUAL += [
    # Correct but unusual: forward saves the INVERSE permutation (int64, x's shape) instead of the
    # indices, built with a scatter of arange; backward is a gather with it.
    Unusual('SortWithIndices', 'the inverse permutation saved (a scatter of arange), gathered',
            '''
class SortWithIndices(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        values, indices = torch.sort(x, dim=-1)
        ctx.mark_non_differentiable(indices)
        if x.dim() == 0:
            inverse = torch.zeros_like(indices)
        else:
            ar = torch.arange(x.shape[-1], device=x.device).expand_as(indices)
            inverse = torch.empty_like(indices).scatter_(-1, indices, ar)
        ctx.save_for_backward(inverse)
        return values, indices
    @staticmethod
    def backward(ctx, grad_values, grad_indices):
        inverse, = ctx.saved_tensors
        return grad_values.gather(-1, inverse)
'''),
    # Correct but unusual: stable argsort, values gathered, the INVERSE permutation saved (int64,
    # same size), backward a gather with it (take_along_dim).
    Unusual('SortWithIndices', 'stable argsort, the inverse permutation saved, take_along_dim', '''
class SortWithIndices(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        indices = torch.argsort(x, dim=-1, stable=True)
        values = torch.take_along_dim(x, indices, dim=-1) if x.dim() else x.clone()
        inverse = torch.argsort(indices, dim=-1) if x.dim() else indices.clone()
        ctx.mark_non_differentiable(indices)
        ctx.save_for_backward(inverse)
        return values, indices

    @staticmethod
    def backward(ctx, grad_values, grad_indices):
        inverse, = ctx.saved_tensors
        if inverse.dim() == 0:
            return grad_values.clone()
        return torch.take_along_dim(grad_values, inverse, dim=-1)
'''),
    Unusual('SortWithIndices',
            'the inverse permutation saved (argsort of the indices), a gather in backward', '''
class SortWithIndices(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        values, indices = torch.sort(x, dim=-1)
        ctx.mark_non_differentiable(indices)
        ctx.save_for_backward(torch.argsort(indices, dim=-1) if indices.dim() else indices)
        return values, indices

    @staticmethod
    def backward(ctx, grad_values, grad_indices):
        inverse, = ctx.saved_tensors
        return grad_values.gather(-1, inverse) if inverse.dim() else grad_values.clone()
'''),
    Unusual('SortWithIndices', 'the permutation saved as int32, widened in backward', '''
class SortWithIndices(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        values, indices = torch.sort(x, dim=-1)
        ctx.mark_non_differentiable(indices)
        ctx.save_for_backward(indices.to(torch.int32))
        return values, indices
    @staticmethod
    def backward(ctx, gv, gi):
        idx, = ctx.saved_tensors
        return torch.zeros_like(gv).scatter(-1, idx.long(), gv)
'''),
    Unusual('SortWithIndices', 'the narrowest dtype that holds the row length', '''
class SortWithIndices(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        values, indices = torch.sort(x, dim=-1)
        ctx.mark_non_differentiable(indices)
        n = x.shape[-1] if x.dim() else 1
        dtype = torch.int16 if n <= 2 ** 15 else torch.int32
        ctx.save_for_backward(indices.to(dtype))
        return values, indices
    @staticmethod
    def backward(ctx, gv, gi):
        idx, = ctx.saved_tensors
        return torch.zeros_like(gv).scatter(-1, idx.long(), gv)
'''),
    Unusual('SortWithIndices', 'int32 indices put back with empty_like and scatter_', '''
class SortWithIndices(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        values, indices = torch.sort(x, dim=-1)
        ctx.mark_non_differentiable(indices)
        ctx.save_for_backward(indices.to(torch.int32))
        return values, indices
    @staticmethod
    def backward(ctx, gv, gi):
        idx, = ctx.saved_tensors
        return torch.empty_like(gv).scatter_(-1, idx.long(), gv)
'''),
    Unusual("SortWithIndices", "indices saved in the narrowest dtype that holds the row, int8 up",
            _sort(edit(_SORT_FORWARD, ("        ctx.save_for_backward(indices)\n",
                                       "        n = x.shape[-1] if x.dim() else 1\n"
                                       "        narrow = next(d for d in (torch.int8, torch.int16,"
                                       " torch.int32, torch.int64)\n"
                                       "                      if n - 1 <= torch.iinfo(d).max)\n"
                                       "        ctx.save_for_backward(indices.to(narrow))\n")),
                  _NARROW_SCATTER)),
]

MISTAKES += [
    # Sort: marks a copy of the indices (not the returned tensor) as non-differentiable.
    Mistake('SortWithIndices', 'a clone of the indices marked', 'marked a copy of its indices', '''
class SortWithIndices(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        values, indices = torch.sort(x, dim=-1)
        ctx.save_for_backward(indices)
        ctx.mark_non_differentiable(indices.clone())
        return values, indices
    @staticmethod
    def backward(ctx, grad_values, grad_indices):
        indices, = ctx.saved_tensors
        return torch.zeros_like(grad_values).scatter(-1, indices, grad_values)
'''),
    # Sort: backward flattens leading dims to 2-D rows and scatters per row; reads n = shape[-1],
    # which a 0-d x (in the contract) does not have.
    Mistake('SortWithIndices', 'rows flattened with reshape(-1, n), 0-d x unhandled',
            'raised IndexError', '''
class SortWithIndices(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        values, indices = torch.sort(x, dim=-1)
        ctx.mark_non_differentiable(indices)
        ctx.save_for_backward(indices)
        return values, indices
    @staticmethod
    def backward(ctx, grad_values, grad_indices):
        indices, = ctx.saved_tensors
        n = indices.shape[-1]
        rows_i = indices.reshape(-1, n)
        rows_g = grad_values.reshape(-1, n)
        out = torch.zeros_like(rows_g)
        out.scatter_(1, rows_i, rows_g)
        return out.reshape(indices.shape)
'''),
    # Flattens leading dims to rows with x.shape[-1]: fine for every shape but a 0-d x.
    # graded raised:IndexError
    Mistake('SortWithIndices',
            'leading dims flattened with x.shape[-1], which a 0-d x lacks',
            'SortWithIndices.forward raised IndexError: tuple index out of range',
            '''
class SortWithIndices(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        n = x.shape[-1]
        values, indices = torch.sort(x.reshape(-1, n), dim=-1)
        values, indices = values.reshape(x.shape), indices.reshape(x.shape)
        ctx.mark_non_differentiable(indices)
        ctx.save_for_backward(indices)
        return values, indices
    @staticmethod
    def backward(ctx, grad_values, grad_indices):
        indices, = ctx.saved_tensors
        return torch.zeros_like(grad_values).scatter(-1, indices, grad_values)
'''),
    # index_add along the last dim: index_add takes a 1-D index, so this is right on one row only.
    # graded SortWithIndices/right-on-one-row-only
    Mistake('SortWithIndices',
            "index_add along the last dim with row 0's indices, right on one row only",
            "SortWithIndices's gradient is right for a single row and wrong for a batch of",
            '''
class SortWithIndices(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        values, indices = torch.sort(x, dim=-1)
        ctx.mark_non_differentiable(indices)
        ctx.save_for_backward(indices)
        return values, indices
    @staticmethod
    def backward(ctx, grad_values, grad_indices):
        indices, = ctx.saved_tensors
        return torch.zeros_like(grad_values).index_add(-1, indices.reshape(-1),
                                                       grad_values.reshape(-1)) \
            if indices.dim() <= 1 else torch.zeros_like(grad_values).index_add(
                -1, indices[0], grad_values)
'''),
    # Returns (and saves) the indices as int32 "to halve the memory": the contract says int64.
    # graded unnamed:check
    Mistake('SortWithIndices',
            'indices returned and saved as int32',
            "SortWithIndices's indices have dtype torch.int32: return the int64 indices of",
            '''
class SortWithIndices(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        values, indices = torch.sort(x, dim=-1)
        indices = indices.to(torch.int32)
        ctx.mark_non_differentiable(indices)
        ctx.save_for_backward(indices)
        return values, indices
    @staticmethod
    def backward(ctx, grad_values, grad_indices):
        indices, = ctx.saved_tensors
        return torch.zeros_like(grad_values).scatter(-1, indices.long(), grad_values)
'''),
    # Derived the inverse permutation correctly, but reads it with advanced indexing on the last
    # dim: right on one row, every row's inverse applied to every row on a batch.
    # graded SortWithIndices/right-on-one-row-only
    Mistake('SortWithIndices',
            'the inverse read by grad_values[..., inverse], right on one row only',
            "SortWithIndices's gradient is right for a single row and wrong for a batch of",
            '''
class SortWithIndices(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        values, indices = torch.sort(x, dim=-1)
        ctx.mark_non_differentiable(indices)
        ctx.save_for_backward(indices)
        return values, indices
    @staticmethod
    def backward(ctx, grad_values, grad_indices):
        indices, = ctx.saved_tensors
        inverse = torch.argsort(indices, dim=-1)
        return grad_values[..., inverse]
'''),
    # Saves the values as well, to get the dtype/shape for the zeros: more than backward needs.
    # graded SortWithIndices/saves-float-tensor
    Mistake('SortWithIndices',
            "the values saved beside the indices, for the zeros' dtype",
            'SortWithIndices saves the values with save_for_backward: backward needs only',
            '''
class SortWithIndices(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        values, indices = torch.sort(x, dim=-1)
        ctx.mark_non_differentiable(indices)
        ctx.save_for_backward(values, indices)
        return values, indices
    @staticmethod
    def backward(ctx, grad_values, grad_indices):
        values, indices = ctx.saved_tensors
        return torch.zeros_like(values).scatter(-1, indices, grad_values)
'''),
    # Returns the default sort's indices but saves and routes with argsort(stable=True): the two
    # order ties differently.
    # graded SortWithIndices/ties-in-another-order
    Mistake('SortWithIndices',
            "the default sort's indices returned, stable argsort's saved and routed",
            "SortWithIndices's gradient is wrong where x has equal values (ties), right on",
            '''
class SortWithIndices(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        values, indices = torch.sort(x, dim=-1)
        ctx.mark_non_differentiable(indices)
        ctx.save_for_backward(torch.argsort(x, dim=-1, stable=True))
        return values, indices
    @staticmethod
    def backward(ctx, grad_values, grad_indices):
        order, = ctx.saved_tensors
        return torch.zeros_like(grad_values).scatter(-1, order, grad_values)
'''),
    Mistake('SortWithIndices', 'indices and their inverse both saved as int32',
            'one permutation is all backward needs', '''
class SortWithIndices(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        values, indices = torch.sort(x, dim=-1)
        ctx.mark_non_differentiable(indices)
        inverse = torch.argsort(indices, dim=-1) if x.dim() else indices
        ctx.save_for_backward(indices.to(torch.int32), inverse.to(torch.int32))
        return values, indices
    @staticmethod
    def backward(ctx, gv, gi):
        idx, inv = ctx.saved_tensors
        return gv.gather(-1, inv.long())
'''),
    Mistake('SortWithIndices', "int32 indices and an unused bool mask of x's non-finite entries",
            'besides the permutation', '''
class SortWithIndices(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        v, i = torch.sort(x, dim=-1)
        ctx.mark_non_differentiable(i)
        ctx.save_for_backward(i.to(torch.int32), ~torch.isfinite(x))
        return v, i
    @staticmethod
    def backward(ctx, gv, gi):
        i, bad = ctx.saved_tensors
        return torch.zeros_like(gv).scatter(-1, i.long(), gv)
''', named=True),
    Mistake('SortWithIndices', "x's shape saved as an int32 tensor beside the indices",
            'besides the permutation', '''
class SortWithIndices(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        v, i = torch.sort(x, dim=-1)
        ctx.mark_non_differentiable(i)
        ctx.save_for_backward(i.to(torch.int32), torch.tensor(x.shape, dtype=torch.int32))
        return v, i
    @staticmethod
    def backward(ctx, gv, gi):
        i, shape = ctx.saved_tensors
        return torch.zeros(tuple(shape.tolist()), dtype=gv.dtype,
                           device=gv.device).scatter(-1, i.long(), gv)
'''),
    Mistake('SortWithIndices', 'the permutation matrix, a one-hot of the indices, multiplied in',
            'grows with the square of a row', '''
class SortWithIndices(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        values, indices = torch.sort(x, dim=-1)
        ctx.mark_non_differentiable(indices)
        ctx.save_for_backward(indices)
        return values, indices
    @staticmethod
    def backward(ctx, gv, gi):
        indices, = ctx.saved_tensors
        if indices.dim() == 0:
            return gv.clone()
        P = F.one_hot(indices, indices.shape[-1]).to(gv.dtype)  # P[..., j, i] = [indices[j] == i]
        return (gv.unsqueeze(-2) @ P).squeeze(-2)  # grad_x = P^T grad_values
''', named=True),
    Mistake("SortWithIndices", "the saved dtype picked from indices.max(), raising on an empty x",
            "with x of shape (0, 5)",
            _sort(edit(_SORT_FORWARD, ("        ctx.save_for_backward(indices)\n",
                                       "        top = int(indices.max())\n"
                                       "        narrow = torch.int16 if top <= 32767 else "
                                       "torch.int32\n"
                                       "        ctx.save_for_backward(indices.to(narrow))\n")),
                  _NARROW_SCATTER)),
    Mistake("SortWithIndices", "rows by reshape(-1, n) and a loop, raising on a 0-d x",
            "tuple index out of range at `n = indices.shape[-1]` (line", _sort(
                backward=_sort_backward(
                    "        n = indices.shape[-1]\n"
                    "        g2, i2 = grad_values.reshape(-1, n), indices.reshape(-1, n)\n"
                    "        out = torch.zeros_like(g2)\n"
                    "        for r in range(g2.shape[0]):\n"
                    "            out[r, i2[r]] = g2[r]\n"
                    "        return out.reshape(grad_values.shape)\n"))),
]
