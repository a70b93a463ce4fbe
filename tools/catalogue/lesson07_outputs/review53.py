"""Lesson 07: review 53's answers. A permutation saved as int32 is correct (one permutation, 4
bytes per element, under the budget; it was refused as 'new memory' while the int64 inverse was
accepted); |x| written as x * sign(x) keeps -0.0 and a ReLU written with masked_fill_(x <= 0, 0)
turns -0.0 into +0.0: the contracts now say the write is compared with ==, either zero passing."""

from .. import Mistake, Unusual

UNUSUAL = [
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
    Unusual('ReLUInPlace', 'masked_fill_(x <= 0, 0): -0.0 becomes +0.0', '''
class ReLUInPlace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x.masked_fill_(x <= 0, 0); ctx.mark_dirty(x); ctx.save_for_backward(x); return x
    @staticmethod
    def backward(ctx, g):
        y, = ctx.saved_tensors
        return g * (y > 0)
'''),
    Unusual('AbsInPlace', '|x| written as x * sign(x): -0.0 stays -0.0 (== abs(x))', '''
class AbsInPlace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        s = (x >= 0).to(torch.int8) - (x <= 0).to(torch.int8)  # 0 at 0: 1 - 1
        x.mul_(s)
        ctx.mark_dirty(x)
        ctx.save_for_backward(s)
        return x
    @staticmethod
    def backward(ctx, g):
        s, = ctx.saved_tensors
        return g * s
'''),
]

MISTAKES = [
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
]
