"""Lesson 07: answers with known verdicts for SplitHalves, a Function with two outputs whose
gradients may be None (set_materialize_grads(False), no zeros built for a missing half)."""

from .. import Mistake, Unusual


_SPLIT_FORWARD = '''
    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        h = x.shape[-1] // 2
        return x[..., :h].clone(), x[..., h:].clone()
'''


_SPLIT_BACKWARD = '''
    @staticmethod
    def backward(ctx, a, b):
        if a is None and b is None:
            return None
        known = a if a is not None else b
        h = known.shape[-1]
        g = known.new_zeros(*known.shape[:-1], 2 * h)
        if a is not None:
            g[..., :h] = a
        if b is not None:
            g[..., h:] = b
        return g
'''


def _split(forward: str = _SPLIT_FORWARD, backward: str = _SPLIT_BACKWARD) -> str:
    return f"class SplitHalves(torch.autograd.Function):\n{forward}\n{backward}"


UNUSUAL = [
    Unusual("SplitHalves", "torch.chunk and F.pad", _split('''
    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        first, second = torch.chunk(x, 2, dim=-1)
        return first.clone(), second.clone()
''', '''
    @staticmethod
    def backward(ctx, a, b):
        if a is None and b is None:
            return None
        if b is None:
            return F.pad(a, (0, a.shape[-1]))
        if a is None:
            return F.pad(b, (b.shape[-1], 0))
        return torch.cat([a, b], dim=-1)
''')),
    Unusual("SplitHalves", "narrow and contiguous copies", _split('''
    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        h = x.shape[-1] // 2
        return x.narrow(-1, 0, h).clone(), x.narrow(-1, h, h).clone()
''')),
    # a review (score 8): a 0-d zero (8 bytes) expanded to the missing half's shape, then cat:
    # the contract counts bytes, and nothing of a half's size is made for the missing output
    Unusual("SplitHalves", "a 0-d zero expanded for the missing half, then cat", _split(
        backward='''
    @staticmethod
    def backward(ctx, a, b):
        if a is None and b is None:
            return None
        known = a if a is not None else b
        if a is None:
            a = known.new_zeros(()).expand_as(known)
        if b is None:
            b = known.new_zeros(()).expand_as(known)
        return torch.cat([a, b], dim=-1)
''')),
    Unusual("SplitHalves", "torch.split by sizes [h, h], list of gradients", _split('''
    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        h = x.shape[-1] // 2
        return tuple(part.clone() for part in torch.split(x, [h, h], dim=-1))
''', '''
    @staticmethod
    def backward(ctx, *grads):
        present = [g for g in grads if g is not None]
        if not present:
            return None
        h = present[0].shape[-1]
        out = present[0].new_zeros(*present[0].shape[:-1], 2 * h)
        for part, g in zip(out.split([h, h], dim=-1), grads):
            if g is not None:
                part.copy_(g)
        return out
''')),
]


MISTAKES = [
    Mistake("SplitHalves", "set_materialize_grads not called",
            "call ctx.set_materialize_grads(False)", _split('''
    @staticmethod
    def forward(ctx, x):
        h = x.shape[-1] // 2
        return x[..., :h].clone(), x[..., h:].clone()
''', '''
    @staticmethod
    def backward(ctx, a, b):
        return torch.cat([a, b], dim=-1)
'''), named=True, nbgrader=True),
    Mistake("SplitHalves", "None gradient concatenated", "raised TypeError on a None gradient",
            _split(backward='''
    @staticmethod
    def backward(ctx, a, b):
        return torch.cat([a, b], dim=-1)
'''), named=True),
    Mistake("SplitHalves", "zeros built for the missing half", "allocated a zero tensor",
            _split(backward='''
    @staticmethod
    def backward(ctx, a, b):
        if a is None and b is None:
            return None
        a = torch.zeros_like(b) if a is None else a
        b = torch.zeros_like(a) if b is None else b
        return torch.cat([a, b], dim=-1)
'''), named=True),
    Mistake("SplitHalves", "zeros when both gradients are None",
            "returned a tensor when both gradients were None", _split(backward='''
    @staticmethod
    def backward(ctx, a, b):
        if a is None and b is None:
            shape = ctx.shape
            return torch.zeros(shape, dtype=ctx.dtype)
        known = a if a is not None else b
        h = known.shape[-1]
        g = known.new_zeros(*known.shape[:-1], 2 * h)
        if a is not None:
            g[..., :h] = a
        if b is not None:
            g[..., h:] = b
        return g
''', forward='''
    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        ctx.shape, ctx.dtype = x.shape, x.dtype
        h = x.shape[-1] // 2
        return x[..., :h].clone(), x[..., h:].clone()
'''), named=True),
    # a review (score 7): new_empty leaves the missing half as memory held it; the check fills
    # fresh memory with NaN (deterministic mode), so the failure reads the same every run
    Mistake("SplitHalves", "new_empty, the missing half left unwritten",
            "there it holds NaN", _split(backward=_SPLIT_BACKWARD.replace(
                "known.new_zeros(", "known.new_empty("))),
    Mistake("SplitHalves", "views returned", "returned views of x", _split('''
    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        h = x.shape[-1] // 2
        return x[..., :h], x[..., h:]
'''), named=True),
    Mistake("SplitHalves", "chunks of a clone", "SplitHalves returned views", _split('''
    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        return x.clone().chunk(2, dim=-1)
'''), named=True),
    # torch.zeros without dtype= is float32: autograd casts the gradient back (its _to_copy)
    Mistake("SplitHalves", "the gradient built in torch.zeros (float32)",
            "exactly a float32 number",
            _split(backward=_SPLIT_BACKWARD.replace("known.new_zeros(", "torch.zeros("))),
]
