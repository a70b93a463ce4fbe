"""Lesson 07: answers with known verdicts for AbsInPlace, the transfer exercise: an in-place
write whose backward needs the sign the write destroys, saved in at most one byte per element."""

from .. import Mistake, Unusual, edit


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


# the sign from two comparisons, no tensor as large as x (torch.sign(x) is one)
COMPARISONS = ("sign = torch.sign(x).to(torch.int8)",
               "sign = (x > 0).to(torch.int8) - (x < 0).to(torch.int8)")


def abs_answer(*changes) -> str:
    """AbsInPlace's answer with each (old, new) replaced."""
    return edit(_ABS, *changes)


UNUSUAL = [
    Unusual("AbsInPlace", "two comparisons make the int8 sign, the write is mul_ by it", abs_answer(
        ("sign = torch.sign(x).to(torch.int8)\n        x.abs_()",
         "sign = (x > 0).to(torch.int8) - (x < 0).to(torch.int8)\n        x.mul_(sign)"))),
    # was "copy_ of torch.abs": a tensor as large as x, which the contract now rules out
    # (review54 catalogues it as a mistake)
    Unusual("AbsInPlace", "the sign as char() of two comparisons, torch.where in backward",
            abs_answer(
        ("sign = torch.sign(x).to(torch.int8)\n        x.abs_()",
         "sign = (x > 0).char() - (x < 0).char()\n        x.abs_()"),
        ("return grad_output * sign",
         "return torch.where(sign == 0, torch.zeros_like(grad_output), grad_output * sign)"))),
    Unusual("AbsInPlace", "torch.abs_ and the sign kept as a bool pair packed in int8", abs_answer(
        ("sign = torch.sign(x).to(torch.int8)\n        x.abs_()",
         "sign = (x > 0).to(torch.int8) * 2 + (x < 0).to(torch.int8)  # 2: +, 1: -, 0: zero\n"
         "        torch.abs_(x)"),
        ("return grad_output * sign",
         "return grad_output * ((sign == 2).to(grad_output.dtype) - (sign == 1).to("
         "grad_output.dtype))"))),
    Unusual("AbsInPlace", "torch.abs with out=x", abs_answer(
        ("x.abs_()", "torch.abs(x, out=x)"), COMPARISONS)),
    # the contract's bound is one byte per element: a float8 sign is within it (-1, 0 and 1 are
    # exact); a float8 copy of x is the float copy the contract rules out
    Unusual("AbsInPlace", "the sign as float8_e4m3fn, one byte per element", abs_answer(
        ("sign = torch.sign(x).to(torch.int8)",
         "sign = ((x > 0).to(torch.int8) - (x < 0).to(torch.int8)).to(torch.float8_e4m3fn)"),
        ("return grad_output * sign", "return grad_output * sign.to(grad_output.dtype)"))),
]


MISTAKES = [
    Mistake("AbsInPlace", "sign read from the returned tensor", "read the sign after the write",
            abs_answer(("sign = torch.sign(x).to(torch.int8)\n        x.abs_()\n        ctx.mark_dirty(x)"
                  "\n        ctx.save_for_backward(sign)",
                  "x.abs_()\n        ctx.mark_dirty(x)\n        ctx.save_for_backward(x)"),
                 ("sign, = ctx.saved_tensors\n        return grad_output * sign",
                  "y, = ctx.saved_tensors\n        return grad_output * torch.sign(y)")),
            named=True, nbgrader=True),
    Mistake("AbsInPlace", "a bool mask x > 0", "gradient at x == 0 is -grad_output",
            abs_answer(("sign = torch.sign(x).to(torch.int8)", "sign = x > 0"),
                 ("return grad_output * sign", "return torch.where(sign, grad_output, "
                  "-grad_output)"))),
    Mistake("AbsInPlace", "a bool mask x >= 0", "gradient at x == 0 is grad_output",
            abs_answer(("sign = torch.sign(x).to(torch.int8)", "sign = x >= 0"),
                 ("return grad_output * sign", "return torch.where(sign, grad_output, "
                  "-grad_output)"))),
    # the bool that says "negative": the hint says why two values cannot hold three
    Mistake("AbsInPlace", "a bool mask x < 0, torch.where in backward",
            "as from the bool mask x < 0 it saves: the zeros of x were read as",
            abs_answer(("sign = torch.sign(x).to(torch.int8)", "sign = x < 0"),
                 ("return grad_output * sign", "return torch.where(sign, -grad_output, "
                  "grad_output)"))),
    Mistake("AbsInPlace", "the sign saved as a float tensor", "saves a float64 tensor",
            abs_answer(("sign = torch.sign(x).to(torch.int8)", "sign = torch.sign(x)")), named=True),
    Mistake("AbsInPlace", "a float copy of x saved before the write", "saves a float64 tensor",
            abs_answer(("sign = torch.sign(x).to(torch.int8)", "sign = torch.sign(x.clone())"),
                 ("ctx.save_for_backward(sign)", "ctx.save_for_backward(sign.clone())"))),
    Mistake("AbsInPlace", "mark_dirty not called", "forward returns its input x (or a view of it) without telling autograd",
            abs_answer(("        ctx.mark_dirty(x)\n", ""))),
    Mistake("AbsInPlace", "a new tensor returned", "returned a new tensor",
            abs_answer(("x.abs_()\n        ctx.mark_dirty(x)", "x = x.abs()"))),
    Mistake("AbsInPlace", "the sign saved as uint8", "saved as uint8",
            abs_answer(("sign = torch.sign(x).to(torch.int8)", "sign = torch.sign(x).to(torch.uint8)"))),
    Mistake("AbsInPlace", "x saved before the write, its sign taken in backward",
            "packs x when forward returns",
            abs_answer(("sign = torch.sign(x).to(torch.int8)\n        x.abs_()\n        ctx.mark_dirty(x)"
                  "\n        ctx.save_for_backward(sign)",
                  "ctx.save_for_backward(x)\n        x.abs_()\n        ctx.mark_dirty(x)"),
                 ("sign, = ctx.saved_tensors\n        return grad_output * sign",
                  "x, = ctx.saved_tensors\n        return grad_output * torch.sign(x)"))),
    Mistake("AbsInPlace", "a bool of the sign, True for -1 as for +1",
            "saves a bool that is True wherever x != 0",
            abs_answer(("sign = torch.sign(x).to(torch.int8)", "sign = torch.sign(x).bool()"))),
    Mistake("AbsInPlace", "an int8 sign taken after the write", "the sign of |x| rather than of x",
            abs_answer(("sign = torch.sign(x).to(torch.int8)\n        x.abs_()",
                  "x.abs_()\n        sign = torch.sign(x).to(torch.int8)"))),
    Mistake("AbsInPlace", "a bool x < 0 and the returned tensor for the zeros",
            "gradient is right, but it saves the tensor it returns",
            abs_answer(("sign = torch.sign(x).to(torch.int8)", "negative = x < 0"),
                 ("ctx.save_for_backward(sign)", "ctx.save_for_backward(negative, x)"),
                 ("sign, = ctx.saved_tensors\n        return grad_output * sign",
                  "negative, y = ctx.saved_tensors\n        return torch.where(negative, "
                  "-grad_output, grad_output) * (y != 0)"))),
    # an int8 sign with +1 at 0: the hint names the saved +1, not a bool mask it has not got
    Mistake("AbsInPlace", "an int8 sign that is +1 at 0 (signbit)", "the sign it saves is +1 where x was 0",
            abs_answer(("sign = torch.sign(x).to(torch.int8)",
                  "sign = torch.where(x.signbit(), -1, 1).to(torch.int8)"))),
    Mistake("AbsInPlace", "an int8 sign that is -1 at 0", "the sign it saves is -1 where x was 0",
            abs_answer(("sign = torch.sign(x).to(torch.int8)",
                  "sign = torch.where(x > 0, 1, -1).to(torch.int8)"))),
    # one bool per element multiplied in: the battery's inputs hold both signs and zeros, so
    # the hint names the mask only when forward saved exactly that mask
    Mistake("AbsInPlace", "a bool x < 0 multiplied in", "gradient is grad_output where x < 0",
            abs_answer(("sign = torch.sign(x).to(torch.int8)", "sign = x < 0"))),
    Mistake("AbsInPlace", "a bool x > 0 multiplied in, as for a ReLU",
            "gradient is grad_output where x > 0",
            abs_answer(("sign = torch.sign(x).to(torch.int8)", "sign = x > 0"))),
    Mistake("AbsInPlace", "a float8 copy of x, its sign taken in backward",
            "holds values other than -1, 0 and 1", abs_answer(
                ("sign = torch.sign(x).to(torch.int8)", "sign = x.to(torch.float8_e4m3fn)"),
                ("return grad_output * sign",
                 "return grad_output * torch.sign(sign.to(grad_output.dtype))"))),
    Mistake("AbsInPlace", "the sign as bfloat16, two bytes per element",
            "2 bytes per element", abs_answer(
                ("sign = torch.sign(x).to(torch.int8)", "sign = torch.sign(x).to(torch.bfloat16)"),
                ("return grad_output * sign", "return grad_output * sign.to(grad_output.dtype)"))),
    Mistake("AbsInPlace", "the gradient computed in float32 (grad_output.float())",
            "exactly a float32 number",
            abs_answer(("return grad_output * sign", "return grad_output.float() * sign"),
                       COMPARISONS)),
    Mistake("AbsInPlace", "the sign of x.float(), as int8",
            "sign is read from x rounded to float32",
            abs_answer(("torch.sign(x).to(torch.int8)", "torch.sign(x.float()).to(torch.int8)"))),
    Mistake("AbsInPlace", "a thresholded sign, (x > 1e-6) - (x < -1e-6)",
            "your gradient for x is wrong", abs_answer((
                "torch.sign(x).to(torch.int8)",
                "(x > 1e-6).to(torch.int8) - (x < -1e-6).to(torch.int8)"))),
    # a review (score 7): a dead zone |x| <= finfo.tiny "to avoid denormal noise" reads the
    # subnormals beside 0 as 0; with_zeros holds one of each sign, in float64 and float32
    Mistake("AbsInPlace", "a sign with a dead zone at finfo.tiny", "a subnormal number", abs_answer((
        "sign = torch.sign(x).to(torch.int8)",
        "tiny = torch.finfo(x.dtype).tiny\n"
        "        sign = (x > tiny).to(torch.int8) - (x < -tiny).to(torch.int8)"))),
    # x / |x| is the sign where x is finite and not 0; nan at 0 is made 0, but inf / inf too
    Mistake("AbsInPlace", "the sign x / |x| with nan made 0", "your gradient for x is wrong",
            abs_answer(("torch.sign(x).to(torch.int8)",
                  "torch.nan_to_num(x / x.abs()).to(torch.int8)"))),
    # a threshold below 0 leaves -1e-300 negative: within any tolerance, but not |x|
    Mistake("AbsInPlace", "the write negates only x < -1e-6", "is not exactly abs(x)",
            abs_answer(("x.abs_()", "x.mul_(torch.where(x < -1e-6, -1.0, 1.0))"))),
]
