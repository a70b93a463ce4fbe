"""Lesson 09: answers with known verdicts for IndexSelect (repeated rows added, not written,
into a buffer of x's shape and dtype)."""

from .. import Mistake, Unusual
from .answers import _INDEX_ADD, _function, _select


UNUSUAL = [
    Unusual("IndexSelect", "scatter_add with an expanded index, a 0-d x apart", _select('''
        if grad_output.dim() == 0:  # a 0-d x: index is [0], the gradient grad_output itself
            return grad_output.clone(), None
        rows = index.reshape(-1, *([1] * (grad_output.dim() - 1))).expand_as(grad_output)
        return grad_output.new_zeros(ctx.shape).scatter_add(0, rows, grad_output), None
''')),
    Unusual("IndexSelect", "index_put_ with accumulate=True, a 0-d x apart", _select('''
        if grad_output.dim() == 0:
            return grad_output.clone(), None
        grad_x = torch.zeros(ctx.shape, dtype=grad_output.dtype, device=grad_output.device)
        grad_x.index_put_((index,), grad_output, accumulate=True)
        return grad_x, None
''')),
    Unusual("IndexSelect", "in-place index_add_ on torch.zeros of x's shape", _select('''
        out = torch.zeros(ctx.shape, dtype=grad_output.dtype, device=grad_output.device)
        out.index_add_(0, index, grad_output)
        return out, None
''')),
    Unusual("IndexSelect", "python loop accumulating rows, a 0-d x apart", _select('''
        if grad_output.dim() == 0:
            return grad_output.clone(), None
        out = grad_output.new_zeros(ctx.shape)
        for k, s in enumerate(index.tolist()):
            out[s] += grad_output[k]
        return out, None
''')),
]


MISTAKES = [
    # W26 of review 74: x flattened with x.view(x.shape[0], -1), which a 3-D x whose leading dims
    # are transposed (or one expanded in dim 1) refuses; a 2-D x keeps its shape under it
    Mistake("IndexSelect", "x flattened with x.view(x.shape[0], -1)",
            "IndexSelect refused an x of shape (4, 2, 3), a (2, 4, 3) tensor transposed",
            _select(_INDEX_ADD, forward='''
    def forward(ctx, x, index):
        ctx.save_for_backward(index)
        ctx.shape = x.shape
        flat = x.view(x.shape[0], -1)
        return flat.index_select(0, index).view(len(index), *x.shape[1:])
''')),
    # UNUSUAL until review 74: each raises on a 0-d x, which torch.index_select takes with
    # index [0] (rule 1)
    Mistake("IndexSelect", "scatter_add with an expanded index",
            "IndexSelect.backward raised RuntimeError on a 0-d x with index=[0]", _select('''
        rows = index.reshape(-1, *([1] * (grad_output.dim() - 1))).expand_as(grad_output)
        return grad_output.new_zeros(ctx.shape).scatter_add(0, rows, grad_output), None
''')),
    Mistake("IndexSelect", "index_put_ with accumulate=True",
            "IndexSelect.backward raised IndexError on a 0-d x with index=[0]", _select('''
        grad_x = torch.zeros(ctx.shape, dtype=grad_output.dtype, device=grad_output.device)
        grad_x.index_put_((index,), grad_output, accumulate=True)
        return grad_x, None
''')),
    # (W24 of review 74 too: the rows counted with x.shape[0])
    Mistake("IndexSelect", "in-place index_add_ on torch.zeros, the shape kept in two parts",
            "IndexSelect raised IndexError (tuple index out of range) on a 0-d x with index=[0]",
            _function("IndexSelect",
            '''
    def forward(ctx, x, index):
        ctx.save_for_backward(index)
        ctx.rows, ctx.rest = x.shape[0], x.shape[1:]
        return x.index_select(0, index)
''', '''
    def backward(ctx, g):
        index, = ctx.saved_tensors
        out = torch.zeros((ctx.rows, *ctx.rest), dtype=g.dtype, device=g.device)
        out.index_add_(0, index, g)
        return out, None
''')),
    Mistake("IndexSelect", "python loop accumulating rows",
            "IndexSelect.backward raised IndexError on a 0-d x with index=[0]", _select('''
        out = grad_output.new_zeros(ctx.shape)
        for k, s in enumerate(index.tolist()):
            out[s] += grad_output[k]
        return out, None
''')),
    Mistake("IndexSelect", "sparse COO tensor to_dense",
            "IndexSelect.backward raised IndexError on a 0-d x with index=[0]", _select('''
        n = index.shape[0]
        flat = grad_output.reshape(n, math.prod(ctx.shape[1:]))
        if n == 0 or math.prod(ctx.shape[1:]) == 0:
            return grad_output.new_zeros(ctx.shape), None
        cols = torch.arange(flat.shape[1], device=index.device)
        i = torch.stack([index.repeat_interleave(flat.shape[1]), cols.repeat(n)])
        size = (ctx.shape[0], flat.shape[1])
        dense = torch.sparse_coo_tensor(i, flat.reshape(-1), size).to_dense()
        return dense.reshape(ctx.shape), None
''')),
    # UNUSUAL until review 67: the Jacobian, a one-hot matrix (k x n), built as a matrix; rule 3
    # keeps backward's memory linear in the sizes
    Mistake("IndexSelect", "a one-hot matrix product",
            "its largest tensor of shape (1024, 1024)", _select('''
        one_hot = F.one_hot(index, ctx.shape[0]).to(grad_output.dtype)  # (k, n)
        flat = grad_output.reshape(index.shape[0], math.prod(ctx.shape[1:]))
        return (one_hot.T @ flat).reshape(ctx.shape), None
''', forward='''
    def forward(ctx, x, index):
        ctx.save_for_backward(index)
        ctx.shape = x.shape
        return x[index]
''')),
    # the same, flattened with reshape(k, -1), which raises on an empty index: the dense matrix
    # is proven by the probe on 1024 rows and named first (review 71)
    Mistake("IndexSelect", "a one-hot matrix product, grad_output flattened with reshape(k, -1)",
            "its largest tensor of shape (1024, 1024)", _select('''
        one_hot = F.one_hot(index, ctx.shape[0]).to(grad_output.dtype)  # (k, n)
        return (one_hot.T @ grad_output.reshape(grad_output.shape[0], -1)).reshape(ctx.shape), None
''')),
    # a built-in *_backward op that decomposes before a dispatch mode sees it (review 09)
    Mistake("IndexSelect", "PyTorch's own index_select_backward, a built-in *_backward op",
            "uses the built-in op index_select_backward", _select(
                "        return torch.ops.aten.index_select_backward(grad_output, "
                "list(ctx.shape), 0, index), None\n")),
    Mistake("IndexSelect", "grad[index] = grad_output", "lost repeated rows", _select('''
        grad_x = grad_output.new_zeros(ctx.shape)
        grad_x[index] = grad_output
        return grad_x, None
'''), named=True, nbgrader=True),
    Mistake("IndexSelect", "saves x", "saves its input x", _select(_INDEX_ADD, forward='''
    def forward(ctx, x, index):
        ctx.save_for_backward(x, index)
        return torch.index_select(x, 0, index)
''').replace("index, = ctx.saved_tensors", "x, index = ctx.saved_tensors").replace(
        "ctx.shape", "x.shape"), named=True),
    Mistake("IndexSelect", "index kept on ctx", "stores a tensor as ctx.index", _function(
        "IndexSelect", '''    def forward(ctx, x, index):
        ctx.index = index
        ctx.shape = x.shape
        return torch.index_select(x, 0, index)
''', '''    def backward(ctx, grad_output):
        return grad_output.new_zeros(ctx.shape).index_add(0, ctx.index, grad_output), None
'''), named=True),
    Mistake("IndexSelect", "zeros in the default dtype", "keep the input's dtype", _select(
        "        return torch.zeros(ctx.shape).index_add(0, index, grad_output.float()), None\n")),
    Mistake("IndexSelect", "index_copy (a write)", "IndexSelect lost repeated rows", _select('''
        return grad_output.new_zeros(ctx.shape).index_copy(0, index, grad_output), None
''')),
    Mistake("IndexSelect", "scatter (no add) with expanded index", "IndexSelect lost repeated rows",
            _select('''
        rows = index.reshape(-1, *([1] * (grad_output.dim() - 1))).expand_as(grad_output)
        return grad_output.new_zeros(ctx.shape).scatter(0, rows, grad_output), None
''')),
    Mistake("IndexSelect", "zeros in float32 always (torch.zeros(ctx.shape))", "keep the input's dtype",
            _select('''
        return torch.zeros(ctx.shape, device=grad_output.device).index_add(0, index, grad_output.float()), None
''')),
    Mistake("IndexSelect", "index_reduce with 'mean': repeats averaged, not added",
            "IndexSelect's gradient is wrong only on row 4", _select('''
        out = grad_output.new_zeros(ctx.shape)
        return out.index_reduce(0, index, grad_output, "mean", include_self=False), None
''')),
    Mistake("IndexSelect", "grad[index] += grad_output (+= on an indexed tensor is a write)",
            "IndexSelect lost repeated rows", _select('''
        grad_x = grad_output.new_zeros(ctx.shape)
        grad_x[index] += grad_output
        return grad_x, None
'''), named=True),
    Mistake("IndexSelect", "buffer from torch.zeros(ctx.shape), float32 whatever x is",
            "IndexSelect's backward added values into a tensor of another dtype", _select(
                "        return torch.zeros(ctx.shape).index_add(0, index, grad_output), None\n")),
    # a copy only for a strided index: the case of every other entry of a longer index
    Mistake("IndexSelect", "index.contiguous() saved, a copy of a strided index",
            "saves a copy of index", _select('''
        rows = index.reshape(-1, *([1] * (grad_output.dim() - 1))).expand_as(grad_output)
        return grad_output.new_zeros(ctx.shape).scatter_add(0, rows, grad_output), None
''', forward='''
    def forward(ctx, x, index):
        ctx.save_for_backward(index.contiguous())
        ctx.shape = x.shape
        return x[index]
''')),
    # every other entry of a wider grad_output flattens with .view; a transposed one does not
    Mistake("IndexSelect", "grad_output flattened with .view", "view size is not compatible",
            _select('''
        one_hot = F.one_hot(index, ctx.shape[0]).to(grad_output.dtype)  # (k, n)
        flat = grad_output.view(index.shape[0], math.prod(ctx.shape[1:]))
        return (one_hot.T @ flat).reshape(ctx.shape), None
''', forward='''
    def forward(ctx, x, index):
        ctx.save_for_backward(index)
        ctx.shape = x.shape
        return x[index]
''')),
    # named by the shared outside-ctx check, which runs first for IndexSelect
    Mistake("IndexSelect", "x's trailing shape kept in a module global",
            "IndexSelect.forward kept state outside ctx: REST in a module global",
            _function("IndexSelect", '''
    def forward(ctx, x, index):
        global REST
        ctx.save_for_backward(index)
        ctx.rows, REST = x.shape[0], x.shape[1:]
        return x.index_select(0, index)
''', '''
    def backward(ctx, g):
        index, = ctx.saved_tensors
        out = torch.zeros((ctx.rows, *REST), dtype=g.dtype, device=g.device)
        out.index_add_(0, index, g)
        return out, None
''')),
    # review 71: autograd drops a gradient for a tensor that cannot require grad without a word
    Mistake("IndexSelect", "zeros returned for the integer index",
            "IndexSelect.backward returned a tensor of zeros for its int64 input index",
            _select('''
        return (grad_output.new_zeros(ctx.shape).index_add(0, index, grad_output),
                torch.zeros_like(index))
''')),
    # review 73 (E2): a buffer with the right dtype but no device=, right on CPU; the message is
    # the course's, citing the Function contract's rule 1, not one of this lesson's own
    Mistake("IndexSelect", "zeros with dtype= but without device=",
            "(Function contract, rule 1",
            _select('''
        return torch.zeros(ctx.shape, dtype=grad_output.dtype).index_add(0, index, grad_output), None
''')),
]
