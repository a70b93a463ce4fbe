"""Lesson 07: answers with known verdicts for ReLUInPlace, a Function that writes into its input
(ctx.mark_dirty, the mask saved from the output)."""

from .. import Mistake, Unusual, edit


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
    # x.float() reads every value models meet right (it rounds only +-1e-300 and subnormals,
    # which the checks no longer try); its float32 copy of a float16 or bfloat16 x is larger
    # than x, the memory writing in place saves
    Mistake("ReLUInPlace", "the mask x.float() > 0", "as large as x itself",
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


# Answers reviewers of the lesson wrote, kept with their verdicts and the first lines
# they now get (they were grouped by review round before).

UNUSUAL += [
    # Correct but unusual: ReLU written with torch.where(..., out=x)-free masked_fill_, backward
    # multiplies by sign(y) (1 where y > 0, 0 at y == 0).
    Unusual('ReLUInPlace', 'masked_fill_, backward multiplies by sign(y)', '''
class ReLUInPlace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x.masked_fill_(x < 0, 0)
        ctx.mark_dirty(x)
        ctx.save_for_backward(x)
        return x
    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        return grad_output * torch.sign(y)
'''),
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
    Unusual('ReLUInPlace',
            'x.detach() saved after the write, masked_fill in backward', '''
class ReLUInPlace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x.clamp_(min=0)
        ctx.mark_dirty(x)
        ctx.save_for_backward(x.detach())  # an alias of x (no new memory); same version counter
        return x

    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        return grad_output.masked_fill(y <= 0, 0)
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
    Unusual("ReLUInPlace", "F.relu(x, inplace=True), backward by y.sign()", _relu(
        edit(_RELU_FORWARD, ("x.clamp_(min=0)", "torch.nn.functional.relu(x, inplace=True)")),
        edit(_RELU_BACKWARD, ("grad_output * (y > 0)", "grad_output * y.sign()")))),
]

MISTAKES += [
    # ReLU: refuses a leaf itself, before writing (a friendlier error), instead of PyTorch's own.
    Mistake('ReLUInPlace', 'its own error for a leaf, raised before the write',
            'raised its own error for a leaf', '''
class ReLUInPlace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        if x.is_leaf and x.requires_grad:
            raise RuntimeError("ReLUInPlace: a leaf that requires grad: clone it first")
        x.clamp_(min=0)
        ctx.mark_dirty(x)
        ctx.save_for_backward(x)
        return x
    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        return grad_output * (y > 0)
'''),
    # ReLU: clamps x.reshape(-1) "to handle any shape": for a non-contiguous x reshape copies, so
    # the write lands in the copy and x is left unclamped.
    Mistake('ReLUInPlace', 'clamps x.reshape(-1), a copy for a transposed x',
            'the write went into a copy', '''
class ReLUInPlace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x.reshape(-1).clamp_(min=0)
        ctx.mark_dirty(x)
        ctx.save_for_backward(x)
        return x
    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        return grad_output * (y > 0)
'''),
    # ReLU: the mask kept on the class, not ctx: the second call's mask is used by the
    # first's backward.
    Mistake('ReLUInPlace', 'the mask kept on the Function class', 'sets ReLUInPlace.mask', '''
class ReLUInPlace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ReLUInPlace.mask = x > 0
        x.clamp_(min=0)
        ctx.mark_dirty(x)
        return x
    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * ReLUInPlace.mask
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
    # graded ReLUInPlace/writes-grad-output
    Mistake('ReLUInPlace',
            'grad_output zeroed in place with masked_fill_',
            "ReLUInPlace's backward modified grad_output in place",
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
    Mistake('ReLUInPlace', 'torch.relu(x) computed out of place, copied into x',
            'as large as x itself', '''
class ReLUInPlace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x.copy_(torch.relu(x))
        ctx.mark_dirty(x)
        ctx.save_for_backward(x)
        return x
    @staticmethod
    def backward(ctx, g):
        y, = ctx.saved_tensors
        return g * (y > 0)
''', named=True),
    Mistake("ReLUInPlace", "the clamp made under torch.enable_grad()", "with autograd on",
            _relu(edit(_RELU_FORWARD, ("        x.clamp_(min=0)\n",
                                       "        with torch.enable_grad():\n"
                                       "            x.clamp_(min=0)\n")))),
    Mistake("ReLUInPlace", "the clamp as masked_fill_ by an int16 mask made bool", "(float16, 128 bytes)",
            _relu(edit(_RELU_FORWARD, ("x.clamp_(min=0)", "x.masked_fill_((x < 0).to(torch.int16).bool(), 0)")))),
]


# Correct over the values models meet: wrong only at subnormal x, which the checks no longer
# try (issue 69 item 4); a review (score 7) wrote it as a "safe" cutoff
UNUSUAL += [
    Unusual("ReLUInPlace", "the mask y > finfo.tiny, a cutoff at the smallest normal number",
            _relu(_RELU_FORWARD, '''
    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        return grad_output * (y > torch.finfo(y.dtype).tiny)
''')),
]


# a review (score 8, r8probe): mark_dirty(x) called, then a view of x returned, not x itself:
# PyTorch refuses the call; the first line names that, not the input write it implies
MISTAKES += [
    Mistake("ReLUInPlace", "marked dirty, x.view_as(x) returned",
            "calls ctx.mark_dirty(x) but returns a view of x",
            _relu(edit(_RELU_FORWARD, ("return x", "return x.view_as(x)"))), named=True),
    Mistake("ReLUInPlace", "marked dirty, a clone of x returned",
            "calls ctx.mark_dirty(x) but returns a new tensor",
            _relu(edit(_RELU_FORWARD, ("return x", "return x.clone()")))),
]
