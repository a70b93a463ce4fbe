"""Lesson 07: answers with known verdicts for SortWithIndices, a Function with an integer output
(indices marked non-differentiable, the permutation saved, the gradient scattered back)."""

from .. import Mistake, Unusual


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
    # PyTorch's own: derivatives.yaml gives sort's values the gradient
    # value_selecting_reduction_backward(grad, dim, indices, sizes, keepdim=True)
    Unusual("SortWithIndices", "PyTorch's own formula, value_selecting_reduction_backward",
            _sort(backward=_sort_backward(
                "        return torch.ops.aten.value_selecting_reduction_backward(\n"
                "            grad_values, -1, indices, list(indices.shape), True)\n"))),
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
    Mistake("SortWithIndices", "scattered into torch.zeros (float32)",
            "every value of grad_x is exactly a float32 number", _sort(backward=_sort_backward(
                "        g = torch.zeros(grad_values.shape, device=grad_values.device)\n"
                "        return g.scatter(-1, indices, grad_values.to(g.dtype))\n"))),
]
