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
    # x.float() reads every value models meet right; its float32 copy of a half x is larger
    # than x, the memory writing in place saves
    Mistake("AbsInPlace", "the sign of x.float(), as int8", "as large as x itself",
            abs_answer(("torch.sign(x).to(torch.int8)", "torch.sign(x.float()).to(torch.int8)"))),
    Mistake("AbsInPlace", "a thresholded sign, (x > 1e-6) - (x < -1e-6)",
            "your gradient for x is wrong", abs_answer((
                "torch.sign(x).to(torch.int8)",
                "(x > 1e-6).to(torch.int8) - (x < -1e-6).to(torch.int8)"))),
    # x / |x| is the sign where x is finite and not 0; nan at 0 is made 0, but inf / inf too
    Mistake("AbsInPlace", "the sign x / |x| with nan made 0", "your gradient for x is wrong",
            abs_answer(("torch.sign(x).to(torch.int8)",
                  "torch.nan_to_num(x / x.abs()).to(torch.int8)"))),
    # a threshold below 0 leaves -1e-300 negative: within any tolerance, but not |x|
    Mistake("AbsInPlace", "the write negates only x < -1e-6", "is not exactly abs(x)",
            abs_answer(("x.abs_()", "x.mul_(torch.where(x < -1e-6, -1.0, 1.0))"))),
]


# Answers reviewers of the lesson wrote, kept with their verdicts and the first lines
# they now get (they were grouped by review round before).

UNUSUAL += [
    # Correct but unusual: the sign stored as uint8 sign+1 (0, 1, 2: one byte), forward writes
    # |x| with a where(), backward subtracts the offset.
    Unusual('AbsInPlace', 'the sign as uint8 sign + 1, |x| written with torch.where', '''
class AbsInPlace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        code = (x > 0).to(torch.uint8) + (x >= 0).to(torch.uint8)   # 0 below, 1 at 0, 2 above
        torch.abs(x, out=x)
        ctx.mark_dirty(x)
        ctx.save_for_backward(code)
        return x
    @staticmethod
    def backward(ctx, grad_output):
        code, = ctx.saved_tensors
        return grad_output * (code.to(grad_output.dtype) - 1)
'''),
    Unusual('AbsInPlace',
            'the sign saved as uint8 offset by 1 (0, 1, 2)', '''
class AbsInPlace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        code = (x > 0).to(torch.uint8) - (x < 0).to(torch.uint8) + 1  # 0, 1, 2 for -, 0, +
        x.mul_(1 - 2 * (x < 0).to(torch.int8))  # |x| by a sign flip, exact at +-inf
        ctx.mark_dirty(x)
        ctx.save_for_backward(code)
        return x

    @staticmethod
    def backward(ctx, grad_output):
        code, = ctx.saved_tensors
        return grad_output * (code.to(grad_output.dtype) - 1)
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
    Unusual("AbsInPlace", "copysign_(1.0) as the write, grad_output itself where all are +1",
            abs_answer(COMPARISONS, ("x.abs_()", "x.copysign_(1.0)"),
                       ("        return grad_output * sign",
                        "        if bool((sign == 1).all()):\n"
                        "            return grad_output\n"
                        "        return grad_output * sign"))),
    Unusual("AbsInPlace", "the sign by torch.gt(x, 0, out=int8) less x < 0",
            abs_answer(("sign = torch.sign(x).to(torch.int8)",
                        "sign = torch.empty(x.shape, dtype=torch.int8, device=x.device)\n"
                        "        torch.gt(x, 0, out=sign)\n"
                        "        sign.sub_((x < 0).to(torch.int8))"))),
]

MISTAKES += [
    # Abs: the int8 sign as a ctx attribute instead of save_for_backward (AbsInPlace's contract
    # does not state the save_for_backward rule; ReLUInPlace's does).
    Mistake('AbsInPlace', 'the int8 sign kept as a ctx attribute',
            'stores a tensor as ctx.sign', '''
class AbsInPlace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.sign = torch.sign(x).to(torch.int8)
        x.abs_()
        ctx.mark_dirty(x)
        return x
    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * ctx.sign
'''),
    # Abs: the int8 sign kept on the class: a second call overwrites the first's sign.
    Mistake('AbsInPlace', 'the int8 sign kept on the Function class', 'sets AbsInPlace.sign', '''
class AbsInPlace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        AbsInPlace.sign = torch.sign(x).to(torch.int8)
        x.abs_()
        ctx.mark_dirty(x)
        return x
    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * AbsInPlace.sign
'''),
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
    # bfloat16 keeps every value models meet (it rounds only 1e-42 and below to 0); its copy of
    # a float16 x is as large as x
    Mistake('AbsInPlace', 'the sign read from x.bfloat16()', 'as large as x itself', '''
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
    Mistake("AbsInPlace", "the sign built from int16 comparisons, then int8",
            "(float16, 128 bytes)", abs_answer(
                (COMPARISONS[0], "sign = ((x > 0).to(torch.int16) - (x < 0).to(torch.int16))"
                                 ".to(torch.int8)"))),
    Mistake("AbsInPlace", "the write made under torch.enable_grad()", "with autograd on",
            abs_answer(COMPARISONS, ("        x.abs_()\n",
                                     "        with torch.enable_grad():\n"
                                     "            x.abs_()\n"))),
    Mistake("AbsInPlace", "the sign of a float8_e5m2 copy, a comparison torch lacks for it",
            "forward raised NotImplementedError",
            abs_answer((COMPARISONS[0], "small = x.to(torch.float8_e5m2)\n"
                                        "        sign = (small > 0).to(torch.int8) - "
                                        "(small < 0).to(torch.int8)"))),
    Mistake("AbsInPlace", "one int16 sign from two int16 comparisons",
            "saves one tensor, int16 (2 bytes per element)",
            abs_answer((COMPARISONS[0], "sign = (x > 0).to(torch.int16) - (x < 0).to(torch.int16)"))),
]


# Correct over the values models meet: wrong only at subnormal x, which the checks no longer
# try (issue 69 item 4); a review (score 7) wrote it as a dead zone "to avoid denormal noise"
UNUSUAL += [
    Unusual("AbsInPlace", "a sign with a dead zone at finfo.tiny", abs_answer((
        "sign = torch.sign(x).to(torch.int8)",
        "tiny = torch.finfo(x.dtype).tiny\n"
        "        sign = (x > tiny).to(torch.int8) - (x < -tiny).to(torch.int8)"))),
]


# a review (score 8, r8probe on ReLUInPlace): mark_dirty(x), then x[...] returned, a view
MISTAKES += [
    Mistake("AbsInPlace", "marked dirty, x[...] returned",
            "calls ctx.mark_dirty(x) but returns a view of x",
            abs_answer(("return x", "return x[...]"), COMPARISONS)),
]
