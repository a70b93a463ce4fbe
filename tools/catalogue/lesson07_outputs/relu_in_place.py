"""Lesson 07: answers with known verdicts for ReLUInPlace, a Function that writes into its input
(ctx.mark_dirty, the mask saved from the output)."""

from .. import Mistake, Unusual


_RELU_BACKWARD = '''
    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        return grad_output * (y > 0)
'''


def _relu(forward_body: str, backward: str = _RELU_BACKWARD) -> str:
    return ("class ReLUInPlace(torch.autograd.Function):\n    @staticmethod\n"
            f"    def forward(ctx, x):\n{forward_body}\n{backward}")


_RELU_FORWARD = '''        x.clamp_(min=0)
        ctx.mark_dirty(x)
        ctx.save_for_backward(x)
        return x'''


UNUSUAL = [
    Unusual("ReLUInPlace", "relu_ and a saved mask", _relu('''        torch.relu_(x)
        ctx.mark_dirty(x)
        ctx.save_for_backward(x > 0)
        return x''', '''
    @staticmethod
    def backward(ctx, grad_output):
        mask, = ctx.saved_tensors
        return grad_output * mask
''')),
    Unusual("ReLUInPlace", "masked_fill_ and torch.where", _relu('''        x.masked_fill_(x < 0, 0)
        ctx.mark_dirty(x)
        ctx.save_for_backward(x)
        return x''', '''
    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        return torch.where(y > 0, grad_output, torch.zeros_like(grad_output))
''')),
    # save_for_backward packs x when forward returns, after the write: it holds the output
    Unusual("ReLUInPlace", "x saved before the write (autograd packs it after: the output)",
            _relu('''        ctx.save_for_backward(x)
        x.clamp_(min=0)
        ctx.mark_dirty(x)
        return x''')),
    # a review (score 8): grad_output itself handed back where nothing was clamped, as
    # CloneBackward does; the contract asks only that backward never write into it (an x with
    # every entry positive exercises it)
    Unusual("ReLUInPlace", "grad_output itself returned where nothing was clamped",
            _relu(_RELU_FORWARD, '''
    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        mask = y > 0
        if mask.all():
            return grad_output  # nothing clamped: pass it through
        return grad_output * mask
''')),
    Unusual("ReLUInPlace", "torch.clamp with out=x", _relu('''        torch.clamp(x, min=0, out=x)
        ctx.mark_dirty(x)
        ctx.save_for_backward(x)
        return x''')),
]


MISTAKES = [
    # was an unusual answer until x held -inf (issue 45): -inf * False is nan, not 0
    Mistake("ReLUInPlace", "mul_ by the mask, saved before the write: -inf * 0 is nan",
            "is not exactly relu(x)", _relu('''        positive = x > 0
        x.mul_(positive)
        ctx.mark_dirty(x)
        ctx.save_for_backward(positive)
        return x''', '''
    @staticmethod
    def backward(ctx, grad_output):
        positive, = ctx.saved_tensors
        return grad_output.masked_fill(~positive, 0)
''')),
    # a review (score 8): the clamp skipped when x.min() >= 0; x.min() raises on an empty x,
    # the witness of "x of any shape (empty included)"
    Mistake("ReLUInPlace", "x.min() to skip the clamp, which raises on an empty x",
            "ReLUInPlace.forward raised RuntimeError with x of shape (0, 3)", _relu(
                _RELU_FORWARD.replace("        x.clamp_(min=0)",
                                      "        if x.min() < 0:\n            x.clamp_(min=0)"))),
    Mistake("ReLUInPlace", "mark_dirty not called", "forward returns its input x (or a view of it) without telling autograd", _relu(
        '''        x.clamp_(min=0)
        ctx.save_for_backward(x)
        return x'''), named=True, nbgrader=True),
    Mistake("ReLUInPlace", "returns a new tensor", "returned a new tensor", _relu(
        '''        y = x.clamp(min=0)
        ctx.save_for_backward(y)
        return y'''), named=True),
    Mistake("ReLUInPlace", "gradient 1 at x == 0", "gradient at x == 0", _relu(
        '''        mask = x >= 0
        x.clamp_(min=0)
        ctx.mark_dirty(x)
        ctx.save_for_backward(mask)
        return x''', '''
    @staticmethod
    def backward(ctx, grad_output):
        mask, = ctx.saved_tensors
        return grad_output * mask
'''), named=True),
    Mistake("ReLUInPlace", "mask y >= 0 after the clamp", "passes grad_output through everywhere",
            _relu(_RELU_FORWARD, '''
    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        return grad_output * (y >= 0)
'''), named=True),
    Mistake("ReLUInPlace", "grad_output modified in place", "modified grad_output in place",
            _relu(_RELU_FORWARD, '''
    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        return grad_output.mul_(y > 0)
'''), named=True),
    # Issue 37, layouts: x.view(-1) assumes contiguous memory; every battery input is contiguous,
    # the generated transposed x is not.
    Mistake("ReLUInPlace", "clamps x.view(-1), which needs contiguous memory",
            "ReLUInPlace.forward raised RuntimeError with x of shape (3, 4): view size is not "
            "compatible", _relu(_RELU_FORWARD.replace("x.clamp_(min=0)",
                                                      "x.view(-1).clamp_(min=0)"))),
    # a gradient computed in float32 for float64 x: autograd casts it back to float64 without a
    # word, and every value is then exactly a float32 number (the generic probe names it)
    Mistake("ReLUInPlace", "the gradient computed in float32 (grad_output.float())",
            "exactly a float32 number", _relu('''        mask = x > 0
        x.clamp_(min=0)
        ctx.mark_dirty(x)
        ctx.save_for_backward(mask)
        return x''', '''
    @staticmethod
    def backward(ctx, grad_output):
        mask, = ctx.saved_tensors
        return grad_output.float() * mask
''')),
    # Values right beside the kink (with_zeros, float64): x.float() rounds +-1e-300 to 0, and a
    # threshold misreads them too (and +-1e-4 where it is above it). The float32 copy is named only
    # where +-1e-30, which float32 keeps and a threshold of 1e-6 misreads, is read right.
    Mistake("ReLUInPlace", "the mask x.float() > 0", "mask is read from x rounded to float32",
            _relu('''        mask = x.float() > 0
        x.clamp_(min=0)
        ctx.mark_dirty(x)
        ctx.save_for_backward(mask)
        return x''', '''
    @staticmethod
    def backward(ctx, grad_output):
        mask, = ctx.saved_tensors
        return grad_output * mask
''')),
    Mistake("ReLUInPlace", "torch.where(y > 1e-3, ...), a threshold on the output",
            "your gradient for x is wrong", _relu(_RELU_FORWARD, '''
    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        return torch.where(y > 1e-3, grad_output, 0)
''')),
    # a review (score 7): a "safe" cutoff at finfo.tiny, the smallest normal number, reads the
    # subnormals beside 0 as 0; with_zeros holds one of each sign, in float64 and float32
    Mistake("ReLUInPlace", "the mask y > finfo.tiny, a cutoff at the smallest normal number",
            "a subnormal number", _relu(_RELU_FORWARD, '''
    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        return grad_output * (y > torch.finfo(y.dtype).tiny)
''')),
    # the contract's memory: x is the output once forward returns, saving it costs nothing
    Mistake("ReLUInPlace", "a clone of the output saved", "ReLUInPlace saves a float64 tensor",
            _relu(_RELU_FORWARD.replace("save_for_backward(x)", "save_for_backward(x.clone())"))),
    # .contiguous() copies only a strided x: the transposed case catches it
    Mistake("ReLUInPlace", "x.contiguous() saved, a copy for a transposed x",
            "ReLUInPlace saves a float64 tensor", _relu(_RELU_FORWARD.replace(
                "save_for_backward(x)", "save_for_backward(x.contiguous())"))),
    Mistake("ReLUInPlace", "the mask saved as float64", "ReLUInPlace saves a float64 tensor",
            _relu(_RELU_FORWARD.replace("save_for_backward(x)",
                                        "save_for_backward((x > 0).double())"))),
    # a threshold below 0 leaves -1e-300 as it was: within any tolerance, but not a clamp
    Mistake("ReLUInPlace", "masked_fill_ of x < -1e-6", "is not exactly relu(x)",
            _relu(_RELU_FORWARD.replace("x.clamp_(min=0)", "x.masked_fill_(x < -1e-6, 0)"))),
    # y / y is 1 where y > 0 and nan at 0, made 0: but inf / inf is nan too
    Mistake("ReLUInPlace", "the mask y / y with nan made 0", "your gradient for x is wrong",
            _relu(_RELU_FORWARD, '''
    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        return grad_output * torch.nan_to_num(y / y)
''')),
    Mistake("ReLUInPlace", "the output kept as a ctx attribute", "stores a tensor as ctx.y",
            _relu(_RELU_FORWARD.replace("ctx.save_for_backward(x)", "ctx.y = x"), '''
    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * (ctx.y > 0)
''')),
]
