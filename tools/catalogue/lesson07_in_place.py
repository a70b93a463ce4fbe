"""Lesson 07's in-place exercises, ReLUInPlace and the transfer exercise AbsInPlace: answers
with known verdicts."""

from . import Mistake, Unusual

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
    Unusual("ReLUInPlace", "mul_ by the mask, saved before the write", _relu('''        positive = x > 0
        x.mul_(positive)
        ctx.mark_dirty(x)
        ctx.save_for_backward(positive)
        return x''', '''
    @staticmethod
    def backward(ctx, grad_output):
        positive, = ctx.saved_tensors
        return grad_output.masked_fill(~positive, 0)
''')),
]

MISTAKES = [
    Mistake("ReLUInPlace", "mark_dirty not called", "did not call ctx.mark_dirty(x)", _relu(
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
]

_ABS = '''
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
        return grad_output * sign
'''


def _abs(*changes) -> str:
    code = _ABS
    for old, new in changes:
        if old not in code:
            raise ValueError(f"catalogue edit: {old!r} is not in the answer")
        code = code.replace(old, new)
    return code


UNUSUAL += [
    Unusual("AbsInPlace", "two comparisons make the int8 sign, the write is mul_ by it", _abs(
        ("sign = torch.sign(x).to(torch.int8)\n        x.abs_()",
         "sign = (x > 0).to(torch.int8) - (x < 0).to(torch.int8)\n        x.mul_(sign)"))),
    Unusual("AbsInPlace", "copy_ of torch.abs, sign as char(), torch.where in backward", _abs(
        ("sign = torch.sign(x).to(torch.int8)\n        x.abs_()",
         "sign = x.sign().char()\n        x.copy_(torch.abs(x))"),
        ("return grad_output * sign",
         "return torch.where(sign == 0, torch.zeros_like(grad_output), grad_output * sign)"))),
    Unusual("AbsInPlace", "torch.abs_ and the sign kept as a bool pair packed in int8", _abs(
        ("sign = torch.sign(x).to(torch.int8)\n        x.abs_()",
         "sign = (x > 0).to(torch.int8) * 2 + (x < 0).to(torch.int8)  # 2: +, 1: -, 0: zero\n"
         "        torch.abs_(x)"),
        ("return grad_output * sign",
         "return grad_output * ((sign == 2).to(grad_output.dtype) - (sign == 1).to("
         "grad_output.dtype))"))),
]

MISTAKES += [
    Mistake("AbsInPlace", "sign read from the returned tensor", "read the sign after the write",
            _abs(("sign = torch.sign(x).to(torch.int8)\n        x.abs_()\n        ctx.mark_dirty(x)"
                  "\n        ctx.save_for_backward(sign)",
                  "x.abs_()\n        ctx.mark_dirty(x)\n        ctx.save_for_backward(x)"),
                 ("sign, = ctx.saved_tensors\n        return grad_output * sign",
                  "y, = ctx.saved_tensors\n        return grad_output * torch.sign(y)")),
            named=True, nbgrader=True),
    Mistake("AbsInPlace", "a bool mask x > 0", "gradient at x == 0 is -grad_output",
            _abs(("sign = torch.sign(x).to(torch.int8)", "sign = x > 0"),
                 ("return grad_output * sign", "return torch.where(sign, grad_output, "
                  "-grad_output)"))),
    Mistake("AbsInPlace", "a bool mask x >= 0", "gradient at x == 0 is grad_output",
            _abs(("sign = torch.sign(x).to(torch.int8)", "sign = x >= 0"),
                 ("return grad_output * sign", "return torch.where(sign, grad_output, "
                  "-grad_output)"))),
    # the bool that says "negative": the hint says why two values cannot hold three
    Mistake("AbsInPlace", "a bool mask x < 0, torch.where in backward",
            "as from the bool mask x < 0 it saves: the zeros of x were read as",
            _abs(("sign = torch.sign(x).to(torch.int8)", "sign = x < 0"),
                 ("return grad_output * sign", "return torch.where(sign, -grad_output, "
                  "grad_output)"))),
    Mistake("AbsInPlace", "the sign saved as a float tensor", "saves a float64 tensor",
            _abs(("sign = torch.sign(x).to(torch.int8)", "sign = torch.sign(x)")), named=True),
    Mistake("AbsInPlace", "a float copy of x saved before the write", "saves a float64 tensor",
            _abs(("sign = torch.sign(x).to(torch.int8)", "sign = torch.sign(x.clone())"),
                 ("ctx.save_for_backward(sign)", "ctx.save_for_backward(sign.clone())"))),
    Mistake("AbsInPlace", "mark_dirty not called", "did not call ctx.mark_dirty(x)",
            _abs(("        ctx.mark_dirty(x)\n", ""))),
    Mistake("AbsInPlace", "a new tensor returned", "returned a new tensor",
            _abs(("x.abs_()\n        ctx.mark_dirty(x)", "x = x.abs()"))),
]

UNUSUAL += [
    # save_for_backward packs x when forward returns, after the write: it holds the output
    Unusual("ReLUInPlace", "x saved before the write (autograd packs it after: the output)",
            _relu('''        ctx.save_for_backward(x)
        x.clamp_(min=0)
        ctx.mark_dirty(x)
        return x''')),
]

MISTAKES += [
    Mistake("AbsInPlace", "the sign saved as uint8", "saved as uint8",
            _abs(("sign = torch.sign(x).to(torch.int8)", "sign = torch.sign(x).to(torch.uint8)"))),
    Mistake("AbsInPlace", "x saved before the write, its sign taken in backward",
            "packs x when forward returns",
            _abs(("sign = torch.sign(x).to(torch.int8)\n        x.abs_()\n        ctx.mark_dirty(x)"
                  "\n        ctx.save_for_backward(sign)",
                  "ctx.save_for_backward(x)\n        x.abs_()\n        ctx.mark_dirty(x)"),
                 ("sign, = ctx.saved_tensors\n        return grad_output * sign",
                  "x, = ctx.saved_tensors\n        return grad_output * torch.sign(x)"))),
]

UNUSUAL += [
    Unusual("ReLUInPlace", "torch.clamp with out=x", _relu('''        torch.clamp(x, min=0, out=x)
        ctx.mark_dirty(x)
        ctx.save_for_backward(x)
        return x''')),
    Unusual("AbsInPlace", "torch.abs with out=x", _abs(("x.abs_()", "torch.abs(x, out=x)"))),
]

MISTAKES += [
    Mistake("AbsInPlace", "a bool of the sign, True for -1 as for +1",
            "saves a bool that is True wherever x != 0",
            _abs(("sign = torch.sign(x).to(torch.int8)", "sign = torch.sign(x).bool()"))),
    Mistake("AbsInPlace", "an int8 sign taken after the write", "the sign of |x| rather than of x",
            _abs(("sign = torch.sign(x).to(torch.int8)\n        x.abs_()",
                  "x.abs_()\n        sign = torch.sign(x).to(torch.int8)"))),
    Mistake("AbsInPlace", "a bool x < 0 and the returned tensor for the zeros",
            "gradient is right, but it saves the tensor it returns",
            _abs(("sign = torch.sign(x).to(torch.int8)", "negative = x < 0"),
                 ("ctx.save_for_backward(sign)", "ctx.save_for_backward(negative, x)"),
                 ("sign, = ctx.saved_tensors\n        return grad_output * sign",
                  "negative, y = ctx.saved_tensors\n        return torch.where(negative, "
                  "-grad_output, grad_output) * (y != 0)"))),
]

MISTAKES += [
    # an int8 sign with +1 at 0: the hint names the saved +1, not a bool mask it has not got
    Mistake("AbsInPlace", "an int8 sign that is +1 at 0 (signbit)", "the sign it saves is +1 where x was 0",
            _abs(("sign = torch.sign(x).to(torch.int8)",
                  "sign = torch.where(x.signbit(), -1, 1).to(torch.int8)"))),
    Mistake("AbsInPlace", "an int8 sign that is -1 at 0", "the sign it saves is -1 where x was 0",
            _abs(("sign = torch.sign(x).to(torch.int8)",
                  "sign = torch.where(x > 0, 1, -1).to(torch.int8)"))),
]

MISTAKES += [
    # one bool per element multiplied in: the battery's inputs hold both signs and zeros, so
    # the hint names the mask only when forward saved exactly that mask
    Mistake("AbsInPlace", "a bool x < 0 multiplied in", "gradient is grad_output where x < 0",
            _abs(("sign = torch.sign(x).to(torch.int8)", "sign = x < 0"))),
    Mistake("AbsInPlace", "a bool x > 0 multiplied in, as for a ReLU",
            "gradient is grad_output where x > 0",
            _abs(("sign = torch.sign(x).to(torch.int8)", "sign = x > 0"))),
]

# the contract's bound is one byte per element: a float8 sign is within it (-1, 0 and 1 are
# exact); a float8 copy of x is the float copy the contract rules out
UNUSUAL += [
    Unusual("AbsInPlace", "the sign as float8_e4m3fn, one byte per element", _abs(
        ("sign = torch.sign(x).to(torch.int8)", "sign = torch.sign(x).to(torch.float8_e4m3fn)"),
        ("return grad_output * sign", "return grad_output * sign.to(grad_output.dtype)"))),
]

MISTAKES += [
    Mistake("AbsInPlace", "a float8 copy of x, its sign taken in backward",
            "holds values other than -1, 0 and 1", _abs(
                ("sign = torch.sign(x).to(torch.int8)", "sign = x.to(torch.float8_e4m3fn)"),
                ("return grad_output * sign",
                 "return grad_output * torch.sign(sign.to(grad_output.dtype))"))),
    Mistake("AbsInPlace", "the sign as bfloat16, two bytes per element",
            "2 bytes per element", _abs(
                ("sign = torch.sign(x).to(torch.int8)", "sign = torch.sign(x).to(torch.bfloat16)"),
                ("return grad_output * sign", "return grad_output * sign.to(grad_output.dtype)"))),
]

# Issue 37, layouts: x.view(-1) assumes contiguous memory; every battery input is contiguous,
# the generated transposed x is not.
MISTAKES += [
    Mistake("ReLUInPlace", "clamps x.view(-1), which needs contiguous memory",
            "ReLUInPlace.forward raised RuntimeError with x of shape (3, 4): view size is not "
            "compatible", _relu(_RELU_FORWARD.replace("x.clamp_(min=0)",
                                                      "x.view(-1).clamp_(min=0)"))),
]

# a gradient computed in float32 for float64 x: autograd casts it back to float64 without a
# word, and every value is then exactly a float32 number (the generic probe names it)
MISTAKES += [
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
    Mistake("AbsInPlace", "the gradient computed in float32 (grad_output.float())",
            "exactly a float32 number",
            _abs(("return grad_output * sign", "return grad_output.float() * sign"))),
]

# Values right beside the kink (with_zeros, float64): x.float() rounds +-1e-300 to 0, and a
# threshold misreads them too (and +-1e-4 where it is above it). The float32 copy is named only
# where +-1e-30, which float32 keeps and a threshold of 1e-6 misreads, is read right.
MISTAKES += [
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
    Mistake("AbsInPlace", "the sign of x.float(), as int8",
            "sign is read from x rounded to float32",
            _abs(("torch.sign(x).to(torch.int8)", "torch.sign(x.float()).to(torch.int8)"))),
    Mistake("AbsInPlace", "a thresholded sign, (x > 1e-6) - (x < -1e-6)",
            "your gradient for x is wrong", _abs((
                "torch.sign(x).to(torch.int8)",
                "(x > 1e-6).to(torch.int8) - (x < -1e-6).to(torch.int8)"))),
]
