"""Lesson 07: review 54's answers, and what its fixes made wrong. An unused tensor saved beside
the permutation (a mask, the shape) passed within the byte budget: the contract now says "what
backward needs and nothing besides", and grading names any other saved tensor. An in-place
forward that copies in an out-of-place result (or takes a float sign first) allocated a tensor
as large as x unseen: the contracts now say forward allocates nothing of x's size. Sort's
backward got a memory budget (a permutation matrix per row breaks it)."""

from .. import Mistake, Unusual

UNUSUAL = [
    Unusual('AbsInPlace', 'the sign packed four to a byte, two bits each', '''
class AbsInPlace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        code = ((x > 0).to(torch.uint8) + 2 * (x < 0).to(torch.uint8)).reshape(-1)  # 0,1,2
        pad = (-code.numel()) % 4
        code = torch.cat([code, code.new_zeros(pad)]).reshape(-1, 4)
        packed = code[:, 0] | (code[:, 1] << 2) | (code[:, 2] << 4) | (code[:, 3] << 6)
        x.abs_()
        ctx.mark_dirty(x)
        ctx.save_for_backward(packed)
        return x
    @staticmethod
    def backward(ctx, g):
        packed, = ctx.saved_tensors
        codes = torch.stack([(packed >> s) & 3 for s in (0, 2, 4, 6)], dim=-1).reshape(-1)
        codes = codes[:g.numel()].reshape(g.shape)  # g has x's shape
        sign = (codes == 1).to(torch.int8) - (codes == 2).to(torch.int8)
        return g * sign
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
]

MISTAKES = [
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
    Mistake('ReLUInPlace', 'torch.relu(x) computed out of place, copied into x',
            'as large as x itself', '''
class ReLUInPlace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x.copy_(torch.relu(x))
        ctx.mark_dirty(x)
        ctx.save_for_backward(x)
        return x
    @staticmethod
    def backward(ctx, g):
        y, = ctx.saved_tensors
        return g * (y > 0)
''', named=True),
    Mistake('AbsInPlace', 'the sign taken with torch.sign(x), then int8', 'as large as x itself',
            '''
class AbsInPlace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        sign = torch.sign(x).to(torch.int8)
        x.abs_()
        ctx.mark_dirty(x)
        ctx.save_for_backward(sign)
        return x
    @staticmethod
    def backward(ctx, g):
        sign, = ctx.saved_tensors
        return g * sign
''', named=True),
    Mistake('AbsInPlace', 'torch.abs(x) computed out of place, copied into x',
            'as large as x itself', '''
class AbsInPlace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        sign = (x > 0).to(torch.int8) - (x < 0).to(torch.int8)
        x.copy_(torch.abs(x))
        ctx.mark_dirty(x)
        ctx.save_for_backward(sign)
        return x
    @staticmethod
    def backward(ctx, g):
        sign, = ctx.saved_tensors
        return g * sign
'''),
    Mistake('AbsInPlace', 'grad_output multiplied by the sign in place',
            'modified grad_output in place', '''
class AbsInPlace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        sign = (x > 0).to(torch.int8) - (x < 0).to(torch.int8)
        x.abs_()
        ctx.mark_dirty(x)
        ctx.save_for_backward(sign)
        return x
    @staticmethod
    def backward(ctx, g):
        sign, = ctx.saved_tensors
        return g.mul_(sign)
'''),
    Mistake('AbsInPlace', 'x.clamp(-1, 1) cast to int8', 'truncates toward 0', '''
class AbsInPlace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        sign = x.clamp(-1, 1).to(torch.int8)
        x.abs_()
        ctx.mark_dirty(x)
        ctx.save_for_backward(sign)
        return x
    @staticmethod
    def backward(ctx, g):
        sign, = ctx.saved_tensors
        return g * sign
'''),
]
