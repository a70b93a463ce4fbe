"""Lesson 07: answers with known verdicts for SplitHalves, a Function with two outputs whose
gradients may be None (set_materialize_grads(False), no zeros built for a missing half)."""

from .. import Mistake, Unusual, edit


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


# Answers reviewers of the lesson wrote, kept with their verdicts and the first lines
# they now get (they were grouped by review round before).

_SPLIT_SAVES_X = _split(edit(_SPLIT_FORWARD, ("        h = ", "        ctx.save_for_backward(x)\n"
                                                           "        h = ")), _SPLIT_BACKWARD)

UNUSUAL += [
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
    Unusual("SplitHalves", "the width kept on ctx as a Python int, the gradient built from it",
            _split(edit(_SPLIT_FORWARD, ("        h = x.shape[-1] // 2\n",
                                         "        h = x.shape[-1] // 2\n        ctx.h = h\n")),
                   edit(_SPLIT_BACKWARD, ("        h = known.shape[-1]\n",
                                          "        h = ctx.h\n")))),
    Unusual("SplitHalves", "halves by unflatten and unbind; F.pad for a lone second half", _split(
        edit(_SPLIT_FORWARD, ("        h = x.shape[-1] // 2\n"
                              "        return x[..., :h].clone(), x[..., h:].clone()\n",
                              "        a, b = x.unflatten(-1, (2, x.shape[-1] // 2)).unbind(-2)\n"
                              "        return a.clone(), b.clone()\n")),
        edit(_SPLIT_BACKWARD, ("        known = a if",
                               "        if a is None:\n"
                               "            return torch.nn.functional.pad(b, (b.shape[-1], 0))\n"
                               "        known = a if")))),
    Unusual("SplitHalves", "a missing half as an expanded 0-d zero, then cat", _split(
        backward=edit(_SPLIT_BACKWARD, (
            "        known = a if a is not None else b\n"
            "        h = known.shape[-1]\n"
            "        g = known.new_zeros(*known.shape[:-1], 2 * h)\n"
            "        if a is not None:\n"
            "            g[..., :h] = a\n"
            "        if b is not None:\n"
            "            g[..., h:] = b\n"
            "        return g\n",
            "        zero = (a if a is not None else b).new_zeros(())\n"
            "        a = zero.expand_as(b) if a is None else a\n"
            "        b = zero.expand_as(a) if b is None else b\n"
            "        return torch.cat([a, b], -1)\n")))),
]

MISTAKES += [
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
    # SplitHalves whose gradient buffer is built as float64 whatever x's dtype (dtype copied from
    # the lesson's float64 examples). Autograd casts the result back to float32 for a float32 x,
    # so the values are right, but backward allocates a float64 buffer (2x x's bytes) and the
    # engine a cast copy: three times the gradient's bytes.
    # Breaks: "backward allocates, in bytes, the gradient of x and next to nothing besides".
    Mistake('SplitHalves', "the gradient buffer built as float64 whatever x's dtype",
            'builds its gradient in float64 for a float32 x', '''
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
        grad = torch.zeros(*known.shape[:-1], 2 * h, dtype=torch.float64, device=known.device)
        if grad_first is not None:
            grad[..., :h] = grad_first
        if grad_second is not None:
            grad[..., h:] = grad_second
        return grad
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
    Mistake("SplitHalves", "x saved to read its shape in backward", "forward saves x",
            edit(_SPLIT_SAVES_X, ("        h = known.shape[-1]\n",
                                  "        x, = ctx.saved_tensors\n"
                                  "        h = x.shape[-1] // 2\n"))),
    Mistake("SplitHalves", "the half width saved as a 0-d tensor", "forward saves a tensor",
            _split(edit(_SPLIT_FORWARD, ("        h = x.shape[-1] // 2\n",
                                         "        h = x.shape[-1] // 2\n"
                                         "        ctx.save_for_backward(torch.tensor(h))\n")),
                   _SPLIT_BACKWARD)),
    Mistake("SplitHalves", "halves by reshape(*lead, 2, -1).unbind(-2), raising on an empty x",
            "with x of shape (0, 4)", _split(
                edit(_SPLIT_FORWARD, ("        h = x.shape[-1] // 2\n"
                                      "        return x[..., :h].clone(), x[..., h:].clone()\n",
                                      "        a, b = x.reshape(*x.shape[:-1], 2, -1).unbind(-2)\n"
                                      "        return a.clone(), b.clone()\n")),
                _SPLIT_BACKWARD)),
    Mistake("SplitHalves", "torch.split(x, h), one piece when h is 0", "with x of shape (3, 0)",
            _split(edit(_SPLIT_FORWARD, ("        return x[..., :h].clone(), x[..., h:].clone()\n",
                                         "        return tuple(part.clone() for part in "
                                         "torch.split(x, h, dim=-1))\n")), _SPLIT_BACKWARD)),
]

MISTAKES += [
    # Split: x kept as a ctx attribute "only for its shape": the hint must not send the learner
    # to save_for_backward, which the contract rules out too (review 73, finding 2).
    Mistake('SplitHalves', 'x kept as ctx.x for its shape',
            "save_for_backward is no place for it either", '''
class SplitHalves(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        ctx.x = x
        h = x.shape[-1] // 2
        return x[..., :h].clone(), x[..., h:].clone()
    @staticmethod
    def backward(ctx, g1, g2):
        if g1 is None and g2 is None:
            return None
        gx = ctx.x.new_zeros(ctx.x.shape)
        h = ctx.x.shape[-1] // 2
        if g1 is not None:
            gx[..., :h] = g1
        if g2 is not None:
            gx[..., h:] = g2
        return gx
'''),
]
