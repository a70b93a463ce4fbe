"""Lesson 07: answers written by a fresh reviewer of the lesson (the review that scored it 8),
kept with their verdicts and the hints they now get: the correct, unusual ones (which must pass)
and the wrong ones to SortWithIndices and SplitHalves (fresh_review_in_place holds those to
ReLUInPlace and AbsInPlace). Two were misnamed until that review: an inverse permutation read
with grad_values[..., inverse] and an index_add with row 0's indices, right on one row and wrong
on a batch, now named so by a probe that grades each row alone."""

from .. import Mistake, Unusual

UNUSUAL = [
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
    Unusual('SplitHalves',
            'a missing half as one zero expanded to its shape, then torch.cat', '''
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
        # a missing half is a single zero expanded to the half's shape: no memory of its size
        if grad_first is None:
            grad_first = grad_second.new_zeros(()).expand_as(grad_second)
        if grad_second is None:
            grad_second = grad_first.new_zeros(()).expand_as(grad_first)
        return torch.cat([grad_first, grad_second], dim=-1)
'''),
    Unusual('ReLUInPlace',
            'x.detach() saved after the write, masked_fill in backward', '''
class ReLUInPlace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x.clamp_(min=0)
        ctx.mark_dirty(x)
        ctx.save_for_backward(x.detach())  # an alias of x (no new memory); same version counter
        return x

    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        return grad_output.masked_fill(y <= 0, 0)
'''),
    Unusual('AbsInPlace',
            'the sign saved as uint8 offset by 1 (0, 1, 2)', '''
class AbsInPlace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        code = (x > 0).to(torch.uint8) - (x < 0).to(torch.uint8) + 1  # 0, 1, 2 for -, 0, +
        x.mul_(1 - 2 * (x < 0).to(torch.int8))  # |x| by a sign flip, exact at +-inf
        ctx.mark_dirty(x)
        ctx.save_for_backward(code)
        return x

    @staticmethod
    def backward(ctx, grad_output):
        code, = ctx.saved_tensors
        return grad_output * (code.to(grad_output.dtype) - 1)
'''),
]


MISTAKES = [
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
    # .contiguous() to make each half "its own memory": a no-op (a view) when the slice is already
    # contiguous, as for a 1-D x's halves.
    # graded SplitHalves/returns-views-of-x
    Mistake('SplitHalves',
            'halves made contiguous(), still views when already contiguous',
            'SplitHalves returned views of x: return tensors with memory of their own (which',
            '''
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
        grad_x = known.new_zeros(*known.shape[:-1], 2 * h)
        if grad_first is not None:
            grad_x[..., :h] = grad_first
        if grad_second is not None:
            grad_x[..., h:] = grad_second
        return grad_x
'''),
    # new_empty for the gradient; remembers to zero the second half when it is missing, forgets the
    # first.
    # graded SplitHalves/unused-half-not-zero
    Mistake('SplitHalves',
            'new_empty gradient, only the second half zeroed when missing',
            "SplitHalves's gradient is right on the half of x the used output came from, and",
            '''
class SplitHalves(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        h = x.shape[-1] // 2
        return x[..., :h].clone(), x[..., h:].clone()
    @staticmethod
    def backward(ctx, grad_first, grad_second):
        if grad_first is None and grad_second is None:
            return None
        known = grad_first if grad_first is not None else grad_second
        h = known.shape[-1]
        grad_x = known.new_empty(*known.shape[:-1], 2 * h)
        if grad_first is not None:
            grad_x[..., :h] = grad_first
        if grad_second is not None:
            grad_x[..., h:] = grad_second
        else:
            grad_x[..., h:] = 0
        return grad_x
'''),
    # Clones the first half, returns the second as a slice of x ("the last one can share").
    # graded SplitHalves/returns-views-of-x
    Mistake('SplitHalves',
            'the first half cloned, the second a slice of x',
            'SplitHalves returned views of x: return tensors with memory of their own (which',
            '''
class SplitHalves(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        h = x.shape[-1] // 2
        return x[..., :h].clone(), x[..., h:]
    @staticmethod
    def backward(ctx, grad_first, grad_second):
        if grad_first is None and grad_second is None:
            return None
        known = grad_first if grad_first is not None else grad_second
        h = known.shape[-1]
        grad_x = known.new_zeros(*known.shape[:-1], 2 * h)
        if grad_first is not None:
            grad_x[..., :h] = grad_first
        if grad_second is not None:
            grad_x[..., h:] = grad_second
        return grad_x
'''),
    # F.pad for a missing half, but the second half is padded on the right as the first is.
    # graded unproven:wrong-value
    Mistake('SplitHalves',
            'F.pad of a missing half, the second padded on the right',
            'your gradient for x is wrong: largest error 0.392 at index (0,) (got 0.3923,',
            '''
class SplitHalves(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        h = x.shape[-1] // 2
        return x[..., :h].clone(), x[..., h:].clone()
    @staticmethod
    def backward(ctx, grad_first, grad_second):
        if grad_first is None and grad_second is None:
            return None
        if grad_second is None:
            return F.pad(grad_first, (0, grad_first.shape[-1]))
        if grad_first is None:
            return F.pad(grad_second, (0, grad_second.shape[-1]))
        return torch.cat([grad_first, grad_second], dim=-1)
'''),
    # Keeps x's shape on the class (shared by every call) instead of ctx.
    # graded SplitHalves/state-on-class
    Mistake('SplitHalves',
            "x's shape kept on the class",
            'SplitHalves.forward sets SplitHalves.shape: a class attribute is shared by',
            '''
class SplitHalves(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        SplitHalves.shape = x.shape
        h = x.shape[-1] // 2
        return x[..., :h].clone(), x[..., h:].clone()
    @staticmethod
    def backward(ctx, grad_first, grad_second):
        if grad_first is None and grad_second is None:
            return None
        known = grad_first if grad_first is not None else grad_second
        h = SplitHalves.shape[-1] // 2
        grad_x = known.new_zeros(SplitHalves.shape)
        if grad_first is not None:
            grad_x[..., :h] = grad_first
        if grad_second is not None:
            grad_x[..., h:] = grad_second
        return grad_x
'''),
    # Handles None by substituting zeros_like(the other half), then one torch.cat: the
    # materialisation by hand.
    # graded SplitHalves/zeros-for-missing-half
    Mistake('SplitHalves',
            'zeros_like for a None half, then torch.cat',
            "SplitHalves's backward allocated a zero tensor for the unused second output",
            '''
class SplitHalves(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        h = x.shape[-1] // 2
        return x[..., :h].clone(), x[..., h:].clone()
    @staticmethod
    def backward(ctx, grad_first, grad_second):
        if grad_first is None and grad_second is None:
            return None
        if grad_first is None:
            grad_first = torch.zeros_like(grad_second)
        if grad_second is None:
            grad_second = torch.zeros_like(grad_first)
        return torch.cat([grad_first, grad_second], dim=-1)
'''),
]
