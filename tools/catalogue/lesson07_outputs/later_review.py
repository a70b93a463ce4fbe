"""Lesson 07: answers written by a later reviewer of the lesson (the review that scored it 7),
kept with their verdicts. The wrong ones passed grading until that review: a sign kept in a
module global (the per-call inputs shared one sign pattern; forward now must save the sign),
a float64 gradient buffer for a float32 x (the allocation probes now run in float32 too), a
forward that refuses a leaf itself with PyTorch's text (now probed under torch.no_grad(), where
the leaf must be written), and two that failed with an unnamed first line (a sign read from
x.half(), a write into the copy x.reshape(-1) makes of a transposed x). The correct, unusual
ones must pass. Answers that repeat a catalogued one are not kept."""

from .. import Mistake, Unusual
from .abs_in_place import abs_answer

UNUSUAL = [
    # Correct but unusual: a bool mask saved before the write (x not saved, so the output stays
    # free for later writes), the write an index_put_ of 0 at the negatives, backward a where.
    Unusual('ReLUInPlace', 'a bool mask saved before the write, index_put_ of 0, a where',
            '''
class ReLUInPlace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        positive = x > 0
        x[x < 0] = 0
        ctx.mark_dirty(x)
        ctx.save_for_backward(positive)
        return x

    @staticmethod
    def backward(ctx, grad_output):
        positive, = ctx.saved_tensors
        return grad_output.where(positive, 0)
'''),
    # Correct (borderline): saves x.detach() after the write, a new tensor object that shares x's
    # memory and version counter (no new bytes).
    Unusual('ReLUInPlace', 'x.detach() saved after the write (the output, no new bytes)', '''
class ReLUInPlace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x.clamp_(min=0)
        ctx.mark_dirty(x)
        ctx.save_for_backward(x.detach())
        return x

    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        return grad_output * (y > 0)
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
]


MISTAKES = [
    # AbsInPlace that keeps the sign in a module global instead of on ctx (saves nothing).
    # Breaks: "forward saves, through ctx.save_for_backward ... one tensor computed before the
    # write" and the per-call state clause: two calls in one graph share the last sign.
    Mistake('AbsInPlace', 'the int8 sign kept in a module global',
            'forward saves nothing through ctx.save_for_backward', '''
_SIGN = None

class AbsInPlace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        global _SIGN
        _SIGN = torch.sign(x).to(torch.int8)
        x.abs_()
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * _SIGN
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
    # ReLUInPlace that refuses a leaf itself, before writing (the lesson's cell 56 idea, taken
    # literally), with the message copied from what torch.relu_ printed in cell 39.
    # Breaks: "a leaf that requires grad raises PyTorch's own error, as torch.relu_ does" --
    # it is the learner's own error, and it also refuses under torch.no_grad(), where
    # torch.relu_ and a mark_dirty Function both write.
    Mistake('ReLUInPlace', "its own leaf guard with torch.relu_'s text, under no_grad too",
            'refused a leaf that requires grad under torch.no_grad()', '''
class ReLUInPlace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        if x.is_leaf and x.requires_grad:
            raise RuntimeError("a leaf Variable that requires grad is being used in an "
                               "in-place operation.")
        x.clamp_(min=0)
        ctx.mark_dirty(x)
        ctx.save_for_backward(x)
        return x

    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        return grad_output * (y > 0)
'''),
    # AbsInPlace with its own leaf guard before the write (same idea as wrong_relu_own_leaf_guard).
    Mistake('AbsInPlace', "its own leaf guard with torch.abs_'s text, under no_grad too",
            'refused a leaf that requires grad under torch.no_grad()', abs_answer(
                ("        sign = torch.sign(x)",
                 '        if x.is_leaf and x.requires_grad:\n'
                 '            raise RuntimeError("a leaf Variable that requires grad is being used '
                 'in an "\n                               "in-place operation.")\n'
                 "        sign = torch.sign(x)"))),
    # AbsInPlace whose sign is read from a float16 copy of x ("one byte would do, half is cheap"):
    # float16 rounds |x| < 3e-8 to 0, so tiny entries get gradient 0 instead of +-grad_output.
    # Breaks: "the gradient of x is torch.abs's at every value of x ... beside 0".
    Mistake('AbsInPlace', 'the sign of x.half(), as int8',
            'read in a narrower dtype than x',
            abs_answer(("torch.sign(x)", "torch.sign(x.half())"))),
    # AbsInPlace that flattens first (to treat every shape alike, 0-d included) with reshape:
    # on a non-contiguous x, reshape copies, so the write lands in the copy and x is unchanged.
    # Breaks: "x of any strides an in-place write accepts: afterwards x holds exactly torch.abs(x)".
    Mistake('AbsInPlace', 'abs_ of x.reshape(-1), a copy for a transposed x',
            'the write went into a copy', abs_answer(
                ("        sign = torch.sign(x).to(torch.int8)\n        x.abs_()",
                 "        flat = x.reshape(-1)\n"
                 "        sign = torch.sign(flat).to(torch.int8).reshape(x.shape)\n"
                 "        flat.abs_()"))),
]
