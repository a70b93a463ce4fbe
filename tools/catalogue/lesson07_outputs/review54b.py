"""Lesson 07: review 54b's answers. Zeros for a missing half made in forward, saved and
concatenated in backward, passed (backward's allocations alone were measured): the contract
now says, as the syllabus does, no zero tensor for a missing half wherever it is made, and
grading names any saved tensor of a half's size. A sign read from x.bfloat16() was named as
read in float32: the narrow-dtype probe now tells bfloat16 apart (+-1e-42, which float32 keeps
and bfloat16 rounds to 0)."""

from .. import Mistake

UNUSUAL = []

MISTAKES = [
    Mistake('SplitHalves', 'zeros of a half made in forward and saved, concatenated in backward',
            "forward saves a zero tensor", '''
class SplitHalves(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        h = x.shape[-1] // 2
        a, b = x[..., :h].clone(), x[..., h:].clone()
        ctx.save_for_backward(torch.zeros_like(a))
        return a, b
    @staticmethod
    def backward(ctx, g1, g2):
        if g1 is None and g2 is None:
            return None
        z, = ctx.saved_tensors
        return torch.cat([g1 if g1 is not None else z, g2 if g2 is not None else z], -1)
''', named=True),
    Mistake('SplitHalves', 'an empty half saved in forward, zeroed and concatenated in backward',
            "forward saves a tensor", '''
class SplitHalves(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        h = x.shape[-1] // 2
        a, b = x[..., :h].clone(), x[..., h:].clone()
        ctx.save_for_backward(torch.empty_like(a))
        return a, b
    @staticmethod
    def backward(ctx, g1, g2):
        if g1 is None and g2 is None:
            return None
        z, = ctx.saved_tensors
        z = z.zero_()
        return torch.cat([g1 if g1 is not None else z, g2 if g2 is not None else z], -1)
'''),
    Mistake('AbsInPlace', 'the sign read from x.bfloat16()', 'rounded to bfloat16', '''
class AbsInPlace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        sign = x.bfloat16().sign().to(torch.int8)
        x.abs_()
        ctx.mark_dirty(x)
        ctx.save_for_backward(sign)
        return x
    @staticmethod
    def backward(ctx, g):
        s, = ctx.saved_tensors
        return g * s
''', named=True),
]
