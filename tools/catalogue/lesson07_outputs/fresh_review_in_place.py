"""Lesson 07: the fresh reviewer's wrong answers to ReLUInPlace and AbsInPlace (the review that
scored it 8; its other answers are in fresh_review), kept with the hints they now get. Masks kept
on a module-global stack were named as a backward that changes a saved tensor in place; now:
nothing saved with save_for_backward, state read from outside ctx."""

from .. import Mistake

UNUSUAL: list = []

MISTAKES = [
    # "Friendly": a leaf that requires grad is cloned first instead of raising.
    # graded unnamed:check
    Mistake('ReLUInPlace',
            'a leaf cloned instead of refused',
            'ReLUInPlace overwrote a leaf that requires grad without an error: call',
            '''
class ReLUInPlace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        if x.is_leaf and x.requires_grad:
            x = x.clone()
        x.clamp_(min=0)
        ctx.mark_dirty(x)
        ctx.save_for_backward(x)
        return x
    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        return grad_output * (y > 0)
'''),
    # The mask made before the write kept in a module global instead of save_for_backward: a second
    # call before backward overwrites it.
    # graded ReLUInPlace/state-outside-ctx
    Mistake('ReLUInPlace',
            'the mask made before the write kept in a module global',
            'ReLUInPlace saves nothing with ctx.save_for_backward, yet its backward knows',
            '''
_MASK = None


class ReLUInPlace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        global _MASK
        _MASK = x > 0
        x.clamp_(min=0)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * _MASK
'''),
    # Masks pushed on a module-level stack in forward, popped in backward (LIFO matches the engine's
    # usual order): nothing saved through ctx.save_for_backward.
    # graded ReLUInPlace/state-outside-ctx
    Mistake('ReLUInPlace',
            'masks on a module-global stack, popped in backward',
            'ReLUInPlace saves nothing with ctx.save_for_backward, yet its backward knows',
            '''
_MASKS = []


class ReLUInPlace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        _MASKS.append(x > 0)
        x.clamp_(min=0)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * _MASKS.pop()
'''),
    # Symmetric subgradient 1/2 at x == 0.
    # graded unproven:wrong-value
    Mistake('ReLUInPlace',
            'gradient 1/2 at x == 0',
            'your gradient for x is wrong: largest error 0.761 at index (6,), where x = 0',
            '''
class ReLUInPlace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x.clamp_(min=0)
        ctx.mark_dirty(x)
        ctx.save_for_backward(x)
        return x
    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        return grad_output * ((y > 0) + 0.5 * (y == 0))
'''),
    # Mask x >= 0 made before the write (bool, 1 byte): passes the gradient at 0.
    # graded ReLUInPlace/gradient-at-zero
    Mistake('ReLUInPlace',
            'a bool mask x >= 0 made before the write',
            "ReLUInPlace's gradient at x == 0 is grad_output: make it 0, as MyReLU does in",
            '''
class ReLUInPlace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        mask = x >= 0
        x.clamp_(min=0)
        ctx.mark_dirty(x)
        ctx.save_for_backward(mask)
        return x
    @staticmethod
    def backward(ctx, grad_output):
        mask, = ctx.saved_tensors
        return grad_output * mask
'''),
    # Saves the mask made before the write as a long tensor (8 bytes per element).
    # graded ReLUInPlace/saves-copy
    Mistake('ReLUInPlace',
            'the mask saved as int64',
            'ReLUInPlace saves a int64 tensor of shape (7,), made in forward: 56 bytes for 7',
            '''
class ReLUInPlace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        mask = (x > 0).long()
        x.clamp_(min=0)
        ctx.mark_dirty(x)
        ctx.save_for_backward(mask)
        return x
    @staticmethod
    def backward(ctx, grad_output):
        mask, = ctx.saved_tensors
        return grad_output * mask
'''),
    # Writes by multiplying with the mask: -inf * 0 is nan.
    # graded ReLUInPlace/write-not-exact
    Mistake('ReLUInPlace',
            'written by mul_ with the mask, -inf * 0 is nan',
            'x after ReLUInPlace is not exactly relu(x): at index (0, 1), x = -inf became',
            '''
class ReLUInPlace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x.mul_(x > 0)
        ctx.mark_dirty(x)
        ctx.save_for_backward(x)
        return x
    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        return grad_output * (y > 0)
'''),
    # Zeroes grad_output in place with masked_fill_ (saves an allocation).
    # graded ReLUInPlace/modifies-grad-output
    Mistake('ReLUInPlace',
            'grad_output zeroed in place with masked_fill_',
            "ReLUInPlace's backward modified grad_output in place: autograd may still use",
            '''
class ReLUInPlace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x.clamp_(min=0)
        ctx.mark_dirty(x)
        ctx.save_for_backward(x)
        return x
    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        return grad_output.masked_fill_(y <= 0, 0)
'''),
    # Writes via x.mul_(sign) and saves the float sign (x's dtype): 8 bytes per element.
    # graded AbsInPlace/saved-dtype-too-wide
    Mistake('AbsInPlace',
            'written by mul_ with the sign, the float sign saved',
            'AbsInPlace saves a float64 tensor of shape (7,), 8 bytes per element (56 in',
            '''
class AbsInPlace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        sign = torch.sign(x)
        x.mul_(sign)
        ctx.mark_dirty(x)
        ctx.save_for_backward(sign)
        return x
    @staticmethod
    def backward(ctx, grad_output):
        sign, = ctx.saved_tensors
        return grad_output * sign
'''),
    # int8 "sign" as 2 * (x >= 0) - 1: +1 at 0.
    # graded AbsInPlace/sign-nonzero-at-zero
    Mistake('AbsInPlace',
            'an int8 sign 2 * (x >= 0) - 1, +1 at 0',
            "AbsInPlace's gradient at x == 0 is grad_output: the sign it saves is +1 where x",
            '''
class AbsInPlace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        sign = (x >= 0).to(torch.int8) * 2 - 1
        x.abs_()
        ctx.mark_dirty(x)
        ctx.save_for_backward(sign)
        return x
    @staticmethod
    def backward(ctx, grad_output):
        sign, = ctx.saved_tensors
        return grad_output * sign
'''),
    # Right int8 sign, but also saves x (the output) "for the shape".
    # graded AbsInPlace/saves-output
    Mistake('AbsInPlace',
            'the int8 sign and the output both saved',
            "AbsInPlace's gradient is right, but it saves the tensor it returns (x, which",
            '''
class AbsInPlace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        sign = torch.sign(x).to(torch.int8)
        x.abs_()
        ctx.mark_dirty(x)
        ctx.save_for_backward(sign, x)
        return x
    @staticmethod
    def backward(ctx, grad_output):
        sign, y = ctx.saved_tensors
        return grad_output * sign.to(y.dtype)
'''),
    # Saves torch.signbit(x) (bool, 1 byte) and flips grad where it is set: +g at x == 0.
    # graded AbsInPlace/bool-mask-takes-sides-at-zero
    Mistake('AbsInPlace',
            'torch.signbit(x) saved, +g at x == 0',
            "were read as positive (so does signbit(x): both are False at +0)",
            '''
class AbsInPlace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        negative = torch.signbit(x)
        x.abs_()
        ctx.mark_dirty(x)
        ctx.save_for_backward(negative)
        return x
    @staticmethod
    def backward(ctx, grad_output):
        negative, = ctx.saved_tensors
        return torch.where(negative, -grad_output, grad_output)
'''),
    # Two bool masks (x > 0, x < 0): right gradient, 2 bytes per element and two tensors.
    # graded unnamed:check
    Mistake('AbsInPlace',
            'two bool masks, x > 0 and x < 0',
            'AbsInPlace saves 14 bytes for 7 elements: the contract allows at most one byte',
            '''
class AbsInPlace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        pos, neg = x > 0, x < 0
        x.abs_()
        ctx.mark_dirty(x)
        ctx.save_for_backward(pos, neg)
        return x
    @staticmethod
    def backward(ctx, grad_output):
        pos, neg = ctx.saved_tensors
        return grad_output * pos - grad_output * neg
'''),
    # Right int8 sign saved, but backward picks +g where sign > 0, else -g: -g at 0.
    # graded unnamed:check
    Mistake('AbsInPlace',
            'the int8 sign saved, backward picks +g where sign > 0, else -g',
            "AbsInPlace's gradient at x == 0 is -grad_output; torch.abs gives 0 there, as",
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
    def backward(ctx, grad_output):
        sign, = ctx.saved_tensors
        return torch.where(sign > 0, grad_output, -grad_output)
'''),
]
