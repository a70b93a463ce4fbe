"""Lesson 07: answers written by a reviewer of the lesson (the second review that scored it 8),
kept with their verdicts: wrong ones across the exercises, each caught with its own first
line (a marked copy of the indices, a shape read from two None gradients and the int8 sign
as a ctx attribute were fixed after that review), and correct, unusual ones that must pass.
Their answers that repeat a catalogued mistake with the same hint are not kept."""

from .. import Mistake, Unusual


UNUSUAL = [
    # Correct but unusual: the sign stored as uint8 sign+1 (0, 1, 2: one byte), forward writes
    # |x| with a where(), backward subtracts the offset.
    Unusual('AbsInPlace', 'the sign as uint8 sign + 1, |x| written with torch.where', '''
class AbsInPlace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        code = (x > 0).to(torch.uint8) + (x >= 0).to(torch.uint8)   # 0 below, 1 at 0, 2 above
        torch.abs(x, out=x)
        ctx.mark_dirty(x)
        ctx.save_for_backward(code)
        return x
    @staticmethod
    def backward(ctx, grad_output):
        code, = ctx.saved_tensors
        return grad_output * (code.to(grad_output.dtype) - 1)
'''),
    # Correct but unusual: ReLU written with torch.where(..., out=x)-free masked_fill_, backward
    # multiplies by sign(y) (1 where y > 0, 0 at y == 0).
    Unusual('ReLUInPlace', 'masked_fill_, backward multiplies by sign(y)', '''
class ReLUInPlace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x.masked_fill_(x < 0, 0)
        ctx.mark_dirty(x)
        ctx.save_for_backward(x)
        return x
    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        return grad_output * torch.sign(y)
'''),
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
    # Correct but unusual: the missing half as a 0-d zero expanded (no memory), one torch.cat;
    # both present: torch.cat.
    Unusual('SplitHalves', 'the missing half a 0-d zero expanded, one torch.cat', '''
class SplitHalves(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        first, second = torch.tensor_split(x, 2, dim=-1)
        return first.clone(), second.clone()
    @staticmethod
    def backward(ctx, grad_first, grad_second):
        if grad_first is None and grad_second is None:
            return None
        known = grad_first if grad_first is not None else grad_second
        nothing = known.new_zeros(()).expand_as(known)
        return torch.cat([grad_first if grad_first is not None else nothing,
                          grad_second if grad_second is not None else nothing], dim=-1)
'''),
]


MISTAKES = [
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
    # Split: reads the shape from a gradient before checking both are None.
    Mistake('SplitHalves', 'a shape read before checking both gradients are None',
            "with neither output's gradient defined", '''
class SplitHalves(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        h = x.shape[-1] // 2
        return x[..., :h].clone(), x[..., h:].clone()
    @staticmethod
    def backward(ctx, grad_first, grad_second):
        known = grad_first if grad_first is not None else grad_second
        h = known.shape[-1]
        g = known.new_zeros(*known.shape[:-1], 2 * h)
        if grad_first is not None:
            g[..., :h] = grad_first
        if grad_second is not None:
            g[..., h:] = grad_second
        return g
'''),
    # Abs: the int8 sign as a ctx attribute instead of save_for_backward (AbsInPlace's contract
    # does not state the save_for_backward rule; ReLUInPlace's does).
    Mistake('AbsInPlace', 'the int8 sign kept as a ctx attribute',
            'stores a tensor as ctx.sign', '''
class AbsInPlace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.sign = torch.sign(x).to(torch.int8)
        x.abs_()
        ctx.mark_dirty(x)
        return x
    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * ctx.sign
'''),
    # ReLU: refuses a leaf itself, before writing (a friendlier error), instead of PyTorch's own.
    Mistake('ReLUInPlace', 'its own error for a leaf, raised before the write',
            'raised its own error for a leaf', '''
class ReLUInPlace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        if x.is_leaf and x.requires_grad:
            raise RuntimeError("ReLUInPlace: a leaf that requires grad: clone it first")
        x.clamp_(min=0)
        ctx.mark_dirty(x)
        ctx.save_for_backward(x)
        return x
    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        return grad_output * (y > 0)
'''),
    # ReLU: clamps x.reshape(-1) "to handle any shape": for a non-contiguous x reshape copies, so
    # the write lands in the copy and x is left unclamped.
    Mistake('ReLUInPlace', 'clamps x.reshape(-1), a copy for a transposed x',
            'the write went into a copy', '''
class ReLUInPlace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x.reshape(-1).clamp_(min=0)
        ctx.mark_dirty(x)
        ctx.save_for_backward(x)
        return x
    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        return grad_output * (y > 0)
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
    # Split: ".contiguous()" to get fresh halves: a no-op (a view of x) when the slice is already
    # contiguous, e.g. a 1-D x.
    Mistake('SplitHalves', 'halves made fresh with .contiguous()', 'returned views of x', '''
class SplitHalves(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        h = x.shape[-1] // 2
        return x[..., :h].contiguous(), x[..., h:].contiguous()
    @staticmethod
    def backward(ctx, grad_first, grad_second):
        if grad_first is None and grad_second is None:
            return None
        known = grad_first if grad_first is not None else grad_second
        h = known.shape[-1]
        g = known.new_zeros(*known.shape[:-1], 2 * h)
        if grad_first is not None:
            g[..., :h] = grad_first
        if grad_second is not None:
            g[..., h:] = grad_second
        return g
'''),
    # Abs: the int8 sign kept on the class: a second call overwrites the first's sign.
    Mistake('AbsInPlace', 'the int8 sign kept on the Function class', 'sets AbsInPlace.sign', '''
class AbsInPlace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        AbsInPlace.sign = torch.sign(x).to(torch.int8)
        x.abs_()
        ctx.mark_dirty(x)
        return x
    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * AbsInPlace.sign
'''),
    # ReLU: the mask kept on the class, not ctx: the second call's mask is used by the
    # first's backward.
    Mistake('ReLUInPlace', 'the mask kept on the Function class', 'sets ReLUInPlace.mask', '''
class ReLUInPlace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ReLUInPlace.mask = x > 0
        x.clamp_(min=0)
        ctx.mark_dirty(x)
        return x
    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * ReLUInPlace.mask
'''),
    # Split: keeps h on the class ("it's just an int"): two calls with different widths, one
    # backward.
    Mistake('SplitHalves', 'the half width kept on the Function class',
            'sets SplitHalves.width', '''
class SplitHalves(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        SplitHalves.width = x.shape[-1]
        SplitHalves.lead = x.shape[:-1]
        h = x.shape[-1] // 2
        return x[..., :h].clone(), x[..., h:].clone()
    @staticmethod
    def backward(ctx, grad_first, grad_second):
        if grad_first is None and grad_second is None:
            return None
        known = grad_first if grad_first is not None else grad_second
        w = SplitHalves.width; h = w // 2
        g = known.new_zeros(*known.shape[:-1], w)
        if grad_first is not None:
            g[..., :h] = grad_first
        if grad_second is not None:
            g[..., h:] = grad_second
        return g
'''),
]
